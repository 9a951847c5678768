package simulate

import (
	"context"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/policy"
)

// TestTimelineSemantics walks every device's records and checks the
// reference client's timeline: a backoff_wait at t with delay d is followed
// by a socket-open at t+d (after a rate_limited_wait of w, at t+d+w), whose
// outcome comes one latency later; failures carry the incremented counter
// and are followed at once by the next backoff_wait; connected resets the
// counter; device_seq counts from 0; and the output is in time order.
func TestTimelineSemantics(t *testing.T) {
	const lat = 30 * time.Millisecond
	cfg := Config{Devices: 400, Outage: 45 * time.Second, Policy: preset(t, "full-jitter"), Seed: 9, Latency: lat,
		DevicesPerHost: 8, Flaps: 2, FlapUp: 3 * time.Second, FlapDown: 20 * time.Second, BadAuth: 0.05, Capacity: 10}
	cfg.Policy.AuthMinDelayS = 30
	recs, st, _ := run(t, cfg)
	byDev := map[string][]*auditfmt.Record{}
	for i := range recs {
		if i > 0 && recs[i].RecordedAt < recs[i-1].RecordedAt {
			t.Fatalf("record %d is earlier than record %d", i+1, i)
		}
		byDev[recs[i].ClientID] = append(byDev[recs[i].ClientID], &recs[i])
	}
	if len(byDev) != 400 {
		t.Fatalf("%d devices in the output, want 400", len(byDev))
	}
	for id, rs := range byDev {
		checkDevice(t, id, rs, lat.Microseconds())
	}
	if st.RefusedAuth == 0 || st.RefusedOverload == 0 || st.Failed == 0 {
		t.Errorf("want every kind of failure, got %d transient, %d overload, %d auth", st.Failed, st.RefusedOverload, st.RefusedAuth)
	}
	if st.NotRecovered != 20 || st.Recovered != 380 {
		t.Errorf("recovered %d, not recovered %d; want 380 and the 20 with bad credentials", st.Recovered, st.NotRecovered)
	}
}

func checkDevice(t *testing.T, id string, rs []*auditfmt.Record, lat int64) {
	t.Helper()
	fail := func(k int, format string, args ...any) {
		t.Helper()
		t.Fatalf("%s record %d (%s at %d µs): "+format, append([]any{id, k, rs[k].Outcome, at(rs[k])}, args...)...)
	}
	var openAt, wait int64 = -1, 0
	authFailed := false
	for k, r := range rs {
		if r.DeviceSeq != int64(k) {
			fail(k, "device_seq %d", r.DeviceSeq)
		}
		switch r.Outcome {
		case auditfmt.BackoffWait:
			if k == 0 || rs[k-1].Outcome == auditfmt.BackoffWait || rs[k-1].Outcome == auditfmt.RateLimitedWait {
				fail(k, "does not follow a disconnect or a failure")
			}
			if at(r) != at(rs[k-1]) {
				fail(k, "not at the instant of the record before it")
			}
			if authFailed && r.BackoffDelayS < 30 {
				fail(k, "delay %v after an auth failure, below auth_min_delay_s 30", r.BackoffDelayS)
			}
			if r.Has&auditfmt.HasCeiling == 0 || r.BackoffDelayS > r.CeilingS {
				fail(k, "delay %v above its ceiling %v", r.BackoffDelayS, r.CeilingS)
			}
			openAt, wait = at(r)+seconds(r.BackoffDelayS), 0
		case auditfmt.RateLimitedWait:
			if at(r) != openAt {
				fail(k, "want it at the socket-open %d", openAt)
			}
			wait = seconds(r.BackoffDelayS)
		case auditfmt.AttemptFailed, auditfmt.Refused, auditfmt.Connected:
			if want := openAt + wait + lat; at(r) != want {
				fail(k, "want the outcome at %d (open %d + wait %d + latency %d)", want, openAt, wait, lat)
			}
			prev := rs[k-1]
			if prev.Outcome == auditfmt.RateLimitedWait {
				prev = rs[k-2]
			}
			switch {
			case r.Outcome == auditfmt.Connected && r.Attempt != 0:
				fail(k, "connected with attempt %d, want the counter reset", r.Attempt)
			case r.Outcome != auditfmt.Connected && r.Attempt != prev.Attempt+1:
				fail(k, "attempt %d after attempt %d, want it incremented", r.Attempt, prev.Attempt)
			}
			authFailed = r.FailureClass == auditfmt.FailAuth
		case auditfmt.Disconnected:
			if k > 0 && rs[k-1].Outcome != auditfmt.Connected {
				fail(k, "a disconnect while not connected")
			}
		default:
			fail(k, "unexpected outcome")
		}
	}
}

// TestHostSpacing checks that socket-opens of one host are at least
// min_connect_spacing_s apart.
func TestHostSpacing(t *testing.T) {
	cfg := Config{Devices: 200, Outage: 20 * time.Second, Policy: preset(t, "full-jitter"), Seed: 6, DevicesPerHost: 10, Latency: -1}
	cfg.Policy.MinConnectSpacingS = 0.5
	recs, _, _ := run(t, cfg)
	last := map[string]int64{}
	waits := 0
	for i := range recs {
		r := &recs[i]
		switch r.Outcome {
		case auditfmt.RateLimitedWait:
			waits++
		case auditfmt.AttemptFailed, auditfmt.Refused, auditfmt.Connected:
			if p, ok := last[r.HostID]; ok && at(r)-p < 500_000 {
				t.Fatalf("%s: socket-opens at %d and %d µs, closer than 0.5 s", r.HostID, p, at(r))
			}
			last[r.HostID] = at(r)
		}
	}
	if waits == 0 || len(last) != 20 {
		t.Fatalf("%d rate_limited_wait records on %d hosts; want some, on 20 hosts", waits, len(last))
	}
}

// TestFlapsDropSessions checks that a flap drops the devices that
// connected during it, and that they recover once the broker is up.
func TestFlapsDropSessions(t *testing.T) {
	cfg := Config{Devices: 300, Outage: 10 * time.Second, Policy: preset(t, "full-jitter"), Seed: 8, Flaps: 1, FlapUp: 5 * time.Second, FlapDown: 30 * time.Second}
	recs, st, _ := run(t, cfg)
	drops := 0
	for i := range recs {
		if r := &recs[i]; r.Outcome == auditfmt.Disconnected && at(r) == 15_000_000 {
			drops++
		}
	}
	if drops == 0 {
		t.Fatal("no session dropped when the flap ended at 15 s")
	}
	if st.Recovered != 300 || st.TTR50 < 45*time.Second {
		t.Fatalf("recovered %d, TTR p50 %v; want all 300, after the broker is up for good at 45 s", st.Recovered, st.TTR50)
	}
	t.Logf("%d sessions dropped by the flap", drops)
}

// TestHorizonEndsTheRun checks that no record lies beyond the horizon.
func TestHorizonEndsTheRun(t *testing.T) {
	recs, st, _ := run(t, Config{Devices: 100, Outage: time.Hour, Policy: preset(t, "full-jitter"), Seed: 1, Horizon: 90 * time.Second})
	for i := range recs {
		if at(&recs[i]) > 90_000_000 {
			t.Fatalf("record at %d µs, beyond the 90 s horizon", at(&recs[i]))
		}
	}
	if st.NotRecovered != 100 {
		t.Fatalf("%d devices not recovered, want all 100", st.NotRecovered)
	}
}

func TestConfigErrors(t *testing.T) {
	p := preset(t, "fixed")
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Devices: 0, Policy: p}, "Devices: expected between 1 and 2147483647, found 0"},
		{Config{Devices: 1, Outage: -time.Second, Policy: p}, "Outage: expected a duration between 0 and 720h, found -1s"},
		{Config{Devices: 1, Flaps: 2, Policy: p}, "FlapUp and FlapDown: expected durations > 0 when Flaps is set, found 0s and 0s"},
		{Config{Devices: 1, BadAuth: math.NaN(), Policy: p}, "BadAuth: expected a fraction in [0, 1], found NaN"},
		{Config{Devices: 1, BadAuth: 1.5, Policy: p}, "BadAuth: expected a fraction in [0, 1], found 1.5"},
		{Config{Devices: 1, Capacity: -1, Policy: p}, "Capacity: expected a count >= 0, found -1"},
		{Config{Devices: 1, Tick: -time.Second, Policy: p}, "Tick: expected a duration >= 0, found -1s"},
		{Config{Devices: 1, Horizon: 1000 * time.Hour, Policy: p}, "Horizon: expected a duration > 0 and at most 720h, found 1000h0m0s"},
	} {
		_, err := Run(context.Background(), tc.cfg, io.Discard)
		var ce *ConfigError
		if !errors.As(err, &ce) || err.Error() != tc.want {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
	if _, err := Run(context.Background(), Config{Devices: 1}, io.Discard); err == nil {
		t.Error("the zero policy was accepted")
	}
}

// TestWriteErrorStops checks that an error of the writer ends the run
// and is returned.
func TestWriteErrorStops(t *testing.T) {
	w := failWriter{}
	_, err := Run(context.Background(), Config{Devices: 10000, Outage: time.Hour, Policy: preset(t, "fixed"), Seed: 1}, w)
	if !errors.Is(err, errFull) {
		t.Fatalf("got %v, want the writer's error", err)
	}
}

var errFull = errors.New("disk full")

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errFull }

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, Config{Devices: 100000, Outage: time.Hour, Policy: preset(t, "fixed"), Seed: 1}, io.Discard)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

// TestReviewedEdges pins edges a review found: a delay already a whole
// number of ticks stays as it is; socket-opens whose outcome the horizon
// cuts off are not counted; a host larger than the fleet and a start
// outside the range of timestamps do not break the run.
func TestReviewedEdges(t *testing.T) {
	fixed21, err := policy.Parse("f.toml", []byte("delay = \"fixed\"\nbase_delay_s = 2.1\n"))
	if err != nil {
		t.Fatal(err)
	}
	recs, _, _ := run(t, Config{Devices: 1, Outage: 3 * time.Second, Policy: fixed21, Seed: 1, Tick: 300 * time.Millisecond})
	if recs[1].BackoffDelayS != 2.1 {
		t.Errorf("2.1 s on a 0.3 s tick became %v s", recs[1].BackoffDelayS)
	}
	recs, st, _ := run(t, Config{Devices: 1000, Outage: time.Hour, Policy: preset(t, "full-jitter"), Seed: 1, Latency: 5 * time.Second, Horizon: 70 * time.Second})
	outcomes := 0
	for i := range recs {
		switch recs[i].Outcome {
		case auditfmt.AttemptFailed, auditfmt.Refused, auditfmt.Connected:
			outcomes++
		}
	}
	if st.Attempts != int64(outcomes) {
		t.Errorf("%d socket-opens counted, the log has %d outcomes", st.Attempts, outcomes)
	}
	if _, err := Run(context.Background(), Config{Devices: 10, DevicesPerHost: math.MaxInt, Policy: preset(t, "full-jitter")}, io.Discard); err != nil {
		t.Errorf("one host for all: %v", err)
	}
	err = Config{Devices: 1, Policy: preset(t, "fixed"), Start: time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC)}.Validate()
	if err == nil || !strings.Contains(err.Error(), "Start: expected an instant from 1678 on") {
		t.Errorf("a start in 1600: %v", err)
	}
}
