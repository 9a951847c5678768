package analyze

import (
	"strings"
	"testing"
)

func TestSessionSettings(t *testing.T) {
	var w strings.Builder
	l := newDevLog(&w, "dev-0001", 0.002)
	l.clean = true
	l.drop().wait(0.41).fail("attempt_failed").wait(1.2).connect()
	newDevLog(&w, "dev-0002", 0.004).drop().wait(0.9).connect()
	tests := []struct {
		name string
		toml string // "" for no declared policy
		want int
		note bool
	}{
		{"persistent declared", fullJitterTOML + "clean_session = false\n", 1, false},
		{"clean declared", fullJitterTOML + "clean_session = true\n", 0, false},
		{"undeclared", fullJitterTOML, 0, true},
		{"inferred", "", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var res *Result
			if tc.toml == "" {
				res = checkLog(t, w.String(), nil)
			} else {
				p := *mustPolicy(t, tc.toml)
				res = checkLog(t, w.String(), &p)
			}
			got := of(res, sessionSettingsID)
			if len(got) != tc.want {
				t.Fatalf("%d findings, want %d:%s", len(got), tc.want, describe(got))
			}
			if tc.want > 0 && (got[0].Device != "dev-0001" || len(got[0].Records) != 5 ||
				got[0].Message != "uses clean sessions (clean_session true on 5 of 5 records); the fleet declares persistent sessions") {
				t.Errorf("finding:%s %v", describe(got), got[0].Records)
			}
			note := strings.Contains(strings.Join(res.Summary.Notes, "\n"), sessionSettingsID+": clean_session is not declared")
			if note != tc.note {
				t.Errorf("note %v, want %v: %q", note, tc.note, res.Summary.Notes)
			}
		})
	}
}
