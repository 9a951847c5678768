package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestSARIFMaxResults: a bounded log keeps the worst findings, in order,
// and a notification says how many of each severity were left out.
func TestSARIFMaxResults(t *testing.T) {
	r := fixture() // sorted worst first: 3 errors, a warning, an info
	for _, c := range []struct {
		max, results int
		note         string
	}{
		{0, 5, ""},
		{5, 5, ""},
		{3, 3, "2 of 5 findings are not in this log (0 error, 1 warning, 1 info): results are bounded to the 3 worst"},
		{1, 1, "4 of 5 findings are not in this log (2 error, 1 warning, 1 info)"},
	} {
		var b bytes.Buffer
		if err := SARIF(&b, r, SARIFOptions{MaxResults: c.max}); err != nil {
			t.Fatal(err)
		}
		var log struct {
			Runs []struct {
				Invocations []struct {
					ToolExecutionNotifications []struct {
						Level   string
						Message struct{ Text string }
					}
				}
				Results []struct {
					RuleID string
					Level  string
				}
			}
		}
		if err := json.Unmarshal(b.Bytes(), &log); err != nil {
			t.Fatal(err)
		}
		run := log.Runs[0]
		if len(run.Results) != c.results {
			t.Errorf("max %d: %d results, want %d", c.max, len(run.Results), c.results)
		}
		for i, res := range run.Results {
			if want := r.Findings[i].Rule; res.RuleID != want {
				t.Errorf("max %d: result %d is %s, want %s (the worst first)", c.max, i, res.RuleID, want)
			}
		}
		var notes []string
		for _, n := range run.Invocations[0].ToolExecutionNotifications {
			notes = append(notes, n.Level+": "+n.Message.Text)
		}
		all := strings.Join(notes, "\n")
		if c.note == "" && strings.Contains(all, "not in this log") || c.note != "" && !strings.Contains(all, "warning: "+c.note) {
			t.Errorf("max %d: notifications %q, want %q", c.max, all, c.note)
		}
	}
}
