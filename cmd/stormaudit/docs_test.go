package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// mdLink matches a Markdown link's target.
var mdLink = regexp.MustCompile(`\]\(([\w./:-]+)(#[^)\s]*)?\)`)

// TestReadmeIsAMap: the README stays a map of about 150 lines, its
// commands table lists exactly the commands the program has, and every
// relative link in it and in docs/ resolves to a file of the repository.
func TestReadmeIsAMap(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(readme), "\n"); n > 160 {
		t.Errorf("the README is %d lines: it is a map (about 150), the manual is docs/commands.md", n)
	}
	var table []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z]+)` \\|").FindAllStringSubmatch(string(readme), -1) {
		table = append(table, m[1])
	}
	var commands []string
	app := newApp(nil, nil, nil)
	for _, c := range app.Commands {
		if !c.Hidden {
			commands = append(commands, c.Name)
		}
	}
	if app.EnableShellCompletion {
		commands = append(commands, "completion") // the library adds it when it runs
	}
	slices.Sort(table)
	slices.Sort(commands)
	if !slices.Equal(table, commands) {
		t.Errorf("the README's commands table lists %q; the program has %q", table, commands)
	}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range append(docs, filepath.Join(root, "README.md")) {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(doc), target)); err != nil {
				t.Errorf("%s links to %s, which does not exist", doc, target)
			}
		}
	}
}
