package analyze

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
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
