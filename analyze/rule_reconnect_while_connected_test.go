package analyze

import (
	"fmt"
	"strings"
	"testing"
)

func TestReconnectWhileConnected(t *testing.T) {
	tests := []struct {
		name  string
		write func(l *devLog)
		want  string // the message, "" for none
	}{
		{"three times", func(l *devLog) {
			l.wait(0.4).connect().after(10).wait(0.3).connect().after(5).wait(0.2).connect().after(1).wait(0.1).connect()
		}, "began 3 new attempts while its session was up; at most 4 CONNECTs in 1 min"},
		{"rate limit is no end", func(l *devLog) {
			l.wait(0.4).connect().after(10).rec("rate_limited_wait", 0.2).wait(0.3).connect()
		}, "began 1 new attempt while its session was up; at most 2 CONNECTs in 1 min"},
		{"flapping", func(l *devLog) {
			l.wait(0.1).connect()
			for range 16 {
				l.after(2).wait(0.1).connect()
			}
		}, "began 16 new attempts while its session was up; at most 17 CONNECTs in 1 min: a broker banning flapping clients (15 in 1 min, EMQX's default) would have banned it"},
		{"disconnected", func(l *devLog) { l.wait(0.4).connect().after(10).drop().wait(0.3).connect() }, ""},
		{"refused", func(l *devLog) { l.wait(0.4).connect().fail("refused", `"reason_code": 137`).wait(0.3).connect() }, ""},
		{"stopped", func(l *devLog) { l.wait(0.4).connect().after(10).rec("stopped", 0).after(5).wait(0.3).connect() }, ""},
		{"gave up", func(l *devLog) { l.wait(0.4).connect().rec("gave_up", 0).after(5).wait(0.3).connect() }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var w strings.Builder
			tc.write(newDevLog(&w, "dev-0001", 0.002).drop())
			got := of(checkLog(t, w.String(), nil), reconnectWhileConnectedID)
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("unexpected findings:%s", describe(got))
			case tc.want != "" && (len(got) != 1 || got[0].Message != tc.want):
				t.Errorf("want one finding %q, got:%s", tc.want, describe(got))
			case tc.want != "" && got[0].Records[0] == got[0].Records[1]:
				t.Errorf("records %v: want the backoff_wait, then the connected record", got[0].Records)
			case tc.name == "flapping" && !strings.Contains(got[0].Explanation, "such a broker would have banned dev-0001 at 2026-11-30T14:18:00.252+00:00, refusing it until 2026-11-30T14:23:00.252"):
				t.Errorf("explanation without the ban (the 15th CONNECT in a minute): %s", got[0].Explanation)
			}
		})
	}
}

// TestFlappingThresholds: a check may compare with another broker's
// flapping detection (rules.reconnect-while-connected in stormaudit.toml).
func TestFlappingThresholds(t *testing.T) {
	var w strings.Builder
	l := newDevLog(&w, "dev-0001", 0.002).drop().wait(0.1).connect()
	for range 16 {
		l.after(2).wait(0.1).connect()
	}
	for _, c := range []struct {
		set  map[string]float64
		want string
	}{
		{map[string]float64{"flapping_max": 20}, "began 16 new attempts while its session was up; at most 17 CONNECTs in 1 min"},
		{map[string]float64{"flapping_max": 5, "flapping_window_s": 10}, "began 16 new attempts while its session was up; at most 5 CONNECTs in 10 s: a broker banning flapping clients (5 in 10 s) would have banned it"},
	} {
		res := checkLogWith(t, w.String(), Options{Thresholds: map[string]map[string]float64{reconnectWhileConnectedID: c.set}})
		if got := of(res, reconnectWhileConnectedID); len(got) != 1 || got[0].Message != c.want {
			t.Errorf("%v: want %q, got:%s", c.set, c.want, describe(got))
		}
	}
}

// TestHostFlapping: devices on one host that churn below the flapping
// threshold each, but above it together, are flagged for a broker that
// counts CONNECTs by source address; on hosts of their own they are not.
func TestHostFlapping(t *testing.T) {
	churn := func(hosts ...string) string {
		var out strings.Builder
		for i, host := range hosts {
			var w strings.Builder
			l := newDevLog(&w, fmt.Sprintf("dev-%04d", i+1), 0.002+float64(i)).drop().wait(0.1).connect()
			for range 8 {
				l.after(5).wait(0.1).connect()
			}
			out.WriteString(strings.ReplaceAll(w.String(), "{", `{"host_id": "`+host+`", `))
		}
		return out.String()
	}
	host := func(res *Result) []Finding {
		var fs []Finding
		for _, f := range of(res, reconnectWhileConnectedID) {
			if f.Kind == "reconnect-while-connected/host-flapping" {
				fs = append(fs, f)
			} else if strings.Contains(f.Message, "would have banned") {
				t.Errorf("%s alone reached the threshold: %s", f.Device, f.Message)
			}
		}
		return fs
	}
	got := host(checkLog(t, churn("gw-1", "gw-1"), nil))
	want := "host gw-1: its 2 churning devices sent 18 CONNECTs in 1 min together: a broker banning flapping by source address would have banned the host"
	if len(got) != 1 || got[0].Message != want || got[0].Device != Fleet || !strings.Contains(got[0].Explanation, "refusing every client behind it until") {
		t.Errorf("one host: want %q, got:%s", want, describe(got))
	}
	if got := host(checkLog(t, churn("gw-1", "gw-2"), nil)); len(got) > 0 {
		t.Errorf("two hosts: unexpected%s", describe(got))
	}
}
