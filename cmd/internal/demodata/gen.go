//go:build ignore

// gen writes incident.ndjson, the built-in sample log: 48 devices on 12
// gateways that lose the broker at 14:17:30 UTC for 75 s. Most run the
// reference client (full jitter, base 1 s, cap 120 s, 0.25 s spacing per
// gateway); six copied a fixed 5 s timer; gateway gw-03 logs through a
// JSON logging formatter (envelopes). A few lines are redelivered twice
// (QoS 1) and a few are broken, as real collections are.
//
//	go run gen.go > incident.ndjson
package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"time"
)

type line struct {
	t    time.Time
	text string
}

func main() {
	rng := rand.New(rand.NewPCG(2026, 1130))
	drop := time.Date(2026, 11, 30, 14, 17, 30, 0, time.UTC)
	up := drop.Add(75 * time.Second)
	var out []line
	lastOpen := map[string]time.Time{}
	for d := 1; d <= 48; d++ {
		id := fmt.Sprintf("dev-%04d", d)
		host := fmt.Sprintf("gw-%02d", (d-1)/4+1)
		fixed := d >= 41 && d <= 46
		env := host == "gw-03"
		emit := func(t time.Time, attempt int, delay float64, outcome, extra string) {
			rec := fmt.Sprintf(`{"client_id": %q, "attempt": %d, "backoff_delay_s": %s, "outcome": %q, "clean_session": false, "recorded_at": %q, "host_id": %q%s}`,
				id, attempt, pyFloat(delay), outcome, t.Format("2006-01-02T15:04:05.000000-07:00"), host, extra)
			if env {
				rec = fmt.Sprintf(`{"message": "mqtt_reconnect", "name": "incidentgis.mqtt.reconnect", "levelname": "INFO", "audit": %s}`, rec)
			}
			out = append(out, line{t, rec})
		}
		t := drop.Add(time.Duration(rng.IntN(40)) * time.Millisecond)
		emit(t, 0, 0, "disconnected", `, "reason_code": 139`)
		for attempt := 0; ; {
			var delay float64
			if fixed {
				delay = 5
			} else {
				delay = rng.Float64() * math.Min(120, math.Pow(2, float64(attempt)))
			}
			delay = math.Round(delay*1e6) / 1e6
			emit(t, attempt, delay, "backoff_wait", "")
			t = t.Add(time.Duration(delay * float64(time.Second)))
			if !fixed {
				if next := lastOpen[host].Add(250 * time.Millisecond); t.Before(next) {
					wait := math.Round(next.Sub(t).Seconds()*1e6) / 1e6
					emit(t, attempt, wait, "rate_limited_wait", "")
					t = next
				}
				lastOpen[host] = t
			}
			t = t.Add(time.Duration(20+rng.IntN(60)) * time.Millisecond)
			if t.After(up) {
				emit(t, 0, delay, "connected", `, "session_present": true`)
				break
			}
			attempt++
			emit(t, attempt, delay, "attempt_failed", `, "failure_class": "transient"`)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].t.Before(out[j].t) })
	var lines []string
	for _, l := range out {
		lines = append(lines, l.text)
	}
	// QoS 1 redelivery after a collector failover: three lines arrive twice.
	for _, i := range []int{40, 41, 300} {
		lines = append(lines[:i+5], append([]string{lines[i]}, lines[i+5:]...)...)
	}
	bad := []string{
		`{"client_id": "dev-0007", "attempt": 3, "backoff_delay_s": -1.5, "outcome": "backoff_wait", "clean_session": false, "recorded_at": "2026-11-30T14:17:41.112000+00:00"}`,
		`{"client_id": "dev-0019", "attempt": 2, "backoff_delay_s": NaN, "outcome": "backoff_wait", "clean_session": false, "recorded_at": "2026-11-30T14:17:36.004000+00:00"}`,
		`{"client_id": "dev-0023", "attempt": 1, "backoff_delay_s": 0.8, "outcome": "backoff_wait", "clean_session": false, "recorded_at": "2026-11-30T14:17:33.500000"}`,
		`{"client_id": "dev-0031", "attempt": 4, "backoff_delay_s": 3.2, "outcome": "retrying", "clean_session": false, "recorded_at": "2026-11-30T14:17:52.250000+00:00"}`,
		`{"client_id": "dev-0036", "attempt": 2, "backoff_delay_s": 1.9, "outcome": "backoff_wait", "clean_se`,
	}
	for k, b := range bad {
		i := 100 + 97*k
		lines = append(lines[:i], append([]string{b}, lines[i:]...)...)
	}
	os.Stdout.WriteString(strings.Join(lines, "\n") + "\n")
}

// pyFloat formats like Python's repr: always a decimal point.
func pyFloat(f float64) string {
	s := fmt.Sprint(f)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}
