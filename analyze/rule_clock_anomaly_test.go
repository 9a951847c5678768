package analyze

import (
	"strings"
	"testing"

	"github.com/stormaudit/stormaudit/auditfmt"
)

func TestClockAnomalyEdges(t *testing.T) {
	const (
		bw     = auditfmt.BackoffWait
		failed = auditfmt.AttemptFailed
	)
	ms := 0.001
	inSource := func(e Event, src int32, line int64) Event { e.Ref.Source, e.Ref.Line = src, line; return e }
	tests := []struct {
		name string
		evs  []Event
		want []string // messages, by prefix
	}{
		{"back by the tolerance", []Event{unitEvent(10, failed, 1, 0.5), unitEvent(10-ms, bw, 1, 2)}, nil},
		{"back by more", []Event{unitEvent(10, failed, 1, 0.5), unitEvent(10-1.001*ms, bw, 1, 2)}, []string{"recorded_at runs backwards once"}},
		{"ahead by the delay and the allowance", []Event{unitEvent(0, bw, 0, 10), unitEvent(3610, failed, 1, 10)}, nil},
		{"ahead by more", []Event{unitEvent(0, bw, 0, 10), unitEvent(3610.000001, failed, 1, 10)}, []string{"recorded_at jumps ahead once"}},
		{"connected for 5 h", []Event{unitEvent(0, auditfmt.Connected, 0, 1), unitEvent(18000, auditfmt.Disconnected, 0, 0)}, nil},
		{"stopped for 2 days", []Event{unitEvent(0, auditfmt.Stopped, 0, 0), unitEvent(172800, bw, 0, 1)}, nil},
		{"a failure, then 2 h of silence", []Event{unitEvent(0, failed, 1, 1), unitEvent(7200, bw, 1, 1)}, []string{"recorded_at jumps ahead once"}},
		{"both, twice each", []Event{unitEvent(0, bw, 0, 1), unitEvent(7200, failed, 1, 1), unitEvent(100, bw, 1, 2),
			unitEvent(7300, failed, 2, 2), unitEvent(200, bw, 2, 2)}, []string{"recorded_at runs backwards twice", "recorded_at jumps ahead twice"}},
		{"back across two inputs", []Event{inSource(unitEvent(10, failed, 1, 0.5), 0, 7), inSource(unitEvent(2, bw, 1, 2), 1, 3)}, nil},
		{"back within one input", []Event{inSource(unitEvent(10, failed, 1, 0.5), 1, 7), inSource(unitEvent(2, bw, 1, 2), 1, 9)}, []string{"recorded_at runs backwards"}},
		{"by device_seq, lines scrambled", withSeq(0, inSource(unitEvent(0, bw, 0, 1), 0, 9), inSource(unitEvent(1.05, failed, 1, 1), 0, 2)), nil},
		// a reboot restarted device_seq: Build interleaves the two runs by
		// seq, so the clock is judged in line order
		{"device_seq restarted", append(withSeq(0, unitEvent(0, bw, 0, 1), unitEvent(1.05, failed, 1, 1)),
			withSeq(0, unitEvent(600, bw, 0, 1), unitEvent(601.05, failed, 1, 1))...), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, got := runRule(&clockAnomaly{}, 0, unitDevice("dev-1", tc.evs...))
			if len(got) != len(tc.want) {
				t.Fatalf("%d findings, want %d:%s", len(got), len(tc.want), describe(got))
			}
			for i, f := range got {
				if !strings.HasPrefix(f.Message, tc.want[i]) || len(f.Records) < 2 || f.Severity != Warning {
					t.Errorf("finding %d: %s %q with %d records, want a warning %q...", i, f.Severity, f.Message, len(f.Records), tc.want[i])
				}
			}
		})
	}
}
