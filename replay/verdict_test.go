package replay

import (
	"strings"
	"testing"
	"time"
)

// TestJudgeKeepsTheReplayApart: the broker is judged only when the
// replay kept its schedule; lateness beyond the bound, overall or in the
// busiest seconds, and failures of this machine make the result
// inconclusive, whatever the broker's figures.
func TestJudgeKeepsTheReplayApart(t *testing.T) {
	ok := func() *Report {
		return &Report{Plan: "p", BrokerDid: BrokerDid{ConnectsAccepted: 10, ConnackP99Ms: 5},
			ReplayDid: ReplayDid{ConnectsAttempted: 10, LatenessP99Ms: 3, LatenessBusiestP99Ms: 4, BusiestSeconds: 2, LocalErrors: map[string]int{}}}
	}
	for _, tc := range []struct {
		name   string
		set    func(*Report)
		held   bool
		incon  bool
		verdct string
	}{
		{"kept, held", func(*Report) {}, true, false, "the broker held"},
		{"kept, refused", func(r *Report) { r.ConnectsRefused = 3 }, false, false, "the broker did not hold: 3 connects refused"},
		{"late overall", func(r *Report) { r.LatenessP99Ms, r.ConnectsRefused = 150, 3 }, false, true,
			"inconclusive: the replay fell behind its schedule by 4.0 ms at p99 in its 2 busiest seconds (150 ms overall), beyond the bound of 100 ms"},
		{"late in the busiest seconds", func(r *Report) { r.LatenessBusiestP99Ms = 731 }, false, true, "by 731 ms at p99 in its 2 busiest seconds (3.0 ms overall)"},
		{"at the bound", func(r *Report) { r.LatenessBusiestP99Ms = 100 }, true, false, "the broker held"},
		{"failed here", func(r *Report) {
			r.ConnectsFailedLocal, r.LocalErrors["EMFILE (the process's descriptors)"] = 4580, 4580
		}, false, true, "inconclusive: 4580 connects failed on this machine, not at the broker (4580 × EMFILE (the process's descriptors))"},
		{"embedded broker could not accept", func(r *Report) { r.LocalErrors["accept EMFILE (the process's descriptors)"], r.ConnectsTimedOut = 7, 7 },
			false, true, "inconclusive: the embedded broker, in this process, could not accept connections (7 × EMFILE"},
	} {
		r := ok()
		tc.set(r)
		r.Judge(time.Second, DefaultMaxLateness)
		if r.Held != tc.held || r.Inconclusive != tc.incon || r.KeptSchedule != !tc.incon || !strings.Contains(r.Verdict, tc.verdct) {
			t.Errorf("%s: held %v, inconclusive %v, kept %v, %q; want %v, %v, %q", tc.name, r.Held, r.Inconclusive, r.KeptSchedule, r.Verdict, tc.held, tc.incon, tc.verdct)
		}
	}
}
