package analyze

import (
	"testing"

	"github.com/stormaudit/stormaudit/auditfmt"
)

func TestSilentGiveUpEdges(t *testing.T) {
	const (
		bw     = auditfmt.BackoffWait
		failed = auditfmt.AttemptFailed
	)
	start := []Event{unitEvent(0, auditfmt.Disconnected, 0, 0), unitEvent(0, bw, 0, 1), unitEvent(1.05, failed, 1, 1)}
	grace := GiveUpGrace.Seconds()
	tests := []struct {
		name string
		last []Event
		end  float64 // the end of the log, s
		want bool
	}{
		{"a failure, the grace later", nil, 1.05 + grace, false},
		{"a failure, more than the grace later", nil, 1.05 + grace + 1e-6, true},
		{"a disconnect", []Event{unitEvent(1.05, bw, 1, 2), unitEvent(3.1, auditfmt.Connected, 0, 2), unitEvent(100, auditfmt.Disconnected, 0, 0)}, 900, true},
		{"a wait whose socket-open is past the end", []Event{unitEvent(1.05, bw, 1, 110)}, 100, false},
		{"a wait whose socket-open was due the grace before the end", []Event{unitEvent(1.05, bw, 1, 10)}, 11.05 + grace, false},
		{"a wait whose socket-open was due long before the end", []Event{unitEvent(1.05, bw, 1, 10)}, 900, true},
		{"a rate-limit wait extends the socket-open", []Event{unitEvent(1.05, bw, 1, 10), unitEvent(11.05, auditfmt.RateLimitedWait, 1, 30)}, 41.05 + grace, false},
		{"a rate-limit wait, long before the end", []Event{unitEvent(1.05, bw, 1, 10), unitEvent(11.05, auditfmt.RateLimitedWait, 1, 30)}, 900, true},
		{"gave up, and said so", []Event{unitEvent(1.05, auditfmt.GaveUp, 1, 0)}, 900, false},
		{"stopped", []Event{unitEvent(1.05, auditfmt.Stopped, 1, 0)}, 900, false},
		{"connected", []Event{unitEvent(1.05, bw, 1, 2), unitEvent(3.1, auditfmt.Connected, 0, 2)}, 900, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			evs := append(append([]Event(nil), start...), tc.last...)
			_, got := runRule(&silentGiveUp{grace: GiveUpGrace}, unitT0+nanos(tc.end), unitDevice("dev-1", evs...))
			if (len(got) > 0) != tc.want {
				t.Fatalf("flagged %v, want %v:%s", len(got) > 0, tc.want, describe(got))
			}
			if tc.want && (got[0].Severity != Error || got[0].Records[0] != evs[len(evs)-1].Ref) {
				t.Errorf("want an error resting first on the last record: %+v", got[0])
			}
		})
	}
}
