package analyze

import (
	"strings"
	"testing"
)

func TestHotLoopThresholds(t *testing.T) {
	zeros := func(n int, d, latency float64) func(l *devLog) {
		return func(l *devLog) {
			for range n {
				l.wait(d)
				l.t += latency - devLogLatency // fail adds devLogLatency
				l.fail("attempt_failed")
			}
			l.wait(2.5).connect()
		}
	}
	tests := []struct {
		name  string
		write func(l *devLog)
		want  string // a prefix of the message, "" for none
	}{
		{"4 near-zero", zeros(4, 0.0099, 1), ""},
		{"5 near-zero", zeros(5, 0.0099, 1), "retried in a tight loop: 5 attempts waiting less than 0.01 s each, in 1 run of 5 or more"},
		{"5 at 10 ms", zeros(5, 0.01, 1), ""},
		{"a connect ends a run", func(l *devLog) { // paho.mqtt.golang's immediate first retry, after each of 6 flaps
			for range 6 {
				l.wait(0).connect().after(3).drop()
			}
		}, ""},
		{"a rate-limit wait is a wait", func(l *devLog) {
			for range 6 {
				l.wait(0).rec("rate_limited_wait", 0.25).after(0.25).fail("attempt_failed")
			}
		}, ""},
		// 9 socket-opens 0.11 s apart span 0.88 s; 10 span 0.99 s
		{"9 opens in a second", zeros(9, 0.06, 0.05), ""},
		{"10 opens in a second", zeros(10, 0.06, 0.05), "retried in a tight loop: 10 socket-opens within 1 s"},
		{"both", zeros(40, 0, 0.05), "retried in a tight loop: 40 attempts waiting less than 0.01 s each, in 1 run of 5 or more, 20 socket-opens within 1 s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var w strings.Builder
			tc.write(newDevLog(&w, "dev-0001", 0.002).drop())
			got := of(checkLog(t, w.String(), nil), hotLoopID)
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("unexpected findings:%s", describe(got))
			case tc.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0].Message, tc.want)):
				t.Errorf("want one finding %q, got:%s", tc.want, describe(got))
			case tc.want != "" && (len(got[0].Records) == 0 || len(got[0].Records) > MaxRefs):
				t.Errorf("%d records", len(got[0].Records))
			}
		})
	}
}
