package analyze

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestThresholdsDocumented: docs/rules.md's table of thresholds lists
// every threshold of every rule with its default, and each default is
// valid.
func TestThresholdsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/rules.md")
	if err != nil {
		t.Fatal(err)
	}
	all := RuleThresholds()
	if len(all) == 0 {
		t.Fatal("no rule has thresholds")
	}
	for id, ths := range all {
		for _, th := range ths {
			row := "| `" + id + "` | `" + th.Name + "` | " + strconv.FormatFloat(th.Default, 'f', -1, 64) + " |"
			if !strings.Contains(string(doc), row) {
				t.Errorf("docs/rules.md has no row %q", row)
			}
			if msg := CheckThreshold(th, th.Default); msg != "" {
				t.Errorf("%s.%s: the default %v is not %s", id, th.Name, th.Default, msg)
			}
		}
	}
}
