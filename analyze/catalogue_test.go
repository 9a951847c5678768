package analyze

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stormaudit/stormaudit/policy"
)

// TestCatalogueOrderIsDocOrder: the catalogue lists every rule once, in
// the order docs/rules.md gives them, both in its table and in its
// sections (## ID), so that the order of every output follows the doc.
func TestCatalogueOrderIsDocOrder(t *testing.T) {
	var ids []string
	for _, r := range Rules() {
		ids = append(ids, r.Info().ID)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Errorf("rule %s is in the catalogue twice", id)
		}
		seen[id] = true
	}
	b, err := os.ReadFile("../docs/rules.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	table := doc[:strings.Index(doc, "\n## ")] // the table comes before the first section
	var rows, sections []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\|").FindAllStringSubmatch(table, -1) {
		rows = append(rows, m[1])
	}
	for _, m := range regexp.MustCompile(`(?m)^## ([a-z-]+)$`).FindAllStringSubmatch(doc, -1) {
		if seen[m[1]] {
			sections = append(sections, m[1])
		}
	}
	if !slices.Equal(rows, ids) {
		t.Errorf("docs/rules.md's table lists\n  %v\nthe catalogue (analyze.Rules)\n  %v", rows, ids)
	}
	if !slices.Equal(sections, ids) {
		t.Errorf("docs/rules.md's sections are\n  %v\nthe catalogue (analyze.Rules)\n  %v", sections, ids)
	}
}

// TestRuleNeeds: the policy keys a rule says it needs and uses are
// policy keys, and what it needs is what it asks for: checked against a
// policy that declares nothing, each rule's positive logs make it note
// every key it needs missing (one key of each entry), and no other.
func TestRuleNeeds(t *testing.T) {
	keys := map[string]bool{}
	for f := range reflect.TypeFor[policy.Policy]().Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" {
			keys[name] = true
		}
	}
	for _, r := range Rules() {
		info := r.Info()
		for _, k := range append(slices.Concat(info.Needs...), info.Uses...) {
			if !keys[k] {
				t.Errorf("%s: %q is not a policy key", info.ID, k)
			}
		}
		logs, _ := filepath.Glob(filepath.Join("testdata/rules", info.ID, "positive*.ndjson"))
		noted := map[string]bool{}
		for _, log := range logs {
			opts := Options{Policy: &policy.Policy{}}
			if blog := brokerLogBeside(t, log); blog != nil {
				opts.Broker = []*BrokerLog{blog}
			}
			res := checkFilesWith(t, t.TempDir(), opts, log)
			for _, n := range res.Summary.Notes {
				rest, ok := strings.CutPrefix(n, info.ID+": ")
				if key, _, ok2 := strings.Cut(rest, " is not declared"); ok && ok2 {
					noted[key] = true
				}
			}
		}
		for key := range noted {
			if !slices.ContainsFunc(info.Needs, func(any []string) bool { return slices.Contains(any, key) }) {
				t.Errorf("%s: asked for %s, which its RuleInfo.Needs %v does not list", info.ID, key, info.Needs)
			}
		}
		for _, any := range info.Needs {
			if !slices.ContainsFunc(any, func(k string) bool { return noted[k] }) {
				t.Errorf("%s: needs one of %v, and its positive logs ran without asking for any", info.ID, any)
			}
		}
	}
}
