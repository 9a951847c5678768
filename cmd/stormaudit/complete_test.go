package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestBashCompletion sources `stormaudit completion bash` in a bash with
// no rc files (so without the bash-completion package) and completes:
// commands, flags, the values of --format, --fail-on and --policy, and
// file names for inputs and for file-valued flags.
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	exe := stormauditBinary(t, dir).Path
	for _, f := range []string{"fleet.ndjson", "fleet.toml"} {
		os.WriteFile(filepath.Join(dir, f), nil, 0o644)
	}
	_, script, _ := runArgs(t, "completion", "bash")
	os.WriteFile(filepath.Join(dir, "stormaudit.bash"), script, 0o644)
	for _, c := range []struct {
		line string // the words; the last is the one completed
		want string
	}{
		{"stormaudit ch", "check"},
		{"stormaudit check --fo", "--format"},
		{"stormaudit check --format ", "text json sarif junit github"},
		{"stormaudit check --format s", "sarif"},
		{"stormaudit check --fail-on w", "warning"},
		{"stormaudit check --policy full", "full-jitter"},
		{"stormaudit check --policy fleet.t", "fleet.toml"},
		{"stormaudit check fleet.n", "fleet.ndjson"},
		{"stormaudit check -q fleet.n", "fleet.ndjson"},
		{"stormaudit policy sh", "show"},
		{"stormaudit export --compression l", "lz4"},
		{"stormaudit check -f j", "json junit"},
		{"stormaudit --no-config ch", "check"},
		{"stormaudit --config fleet.toml check --format j", "json junit"},
		{"stormaudit check --output fleet.n", "fleet.ndjson"},
	} {
		words := strings.Split(c.line, " ")
		script := `source stormaudit.bash
COMP_WORDS=(` + quoteWords(words) + `)
COMP_CWORD=` + strconv.Itoa(len(words)-1) + `
_stormaudit
echo "${COMPREPLY[*]}"`
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c", script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(exe)+":"+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if got := strings.TrimSpace(string(out)); err != nil || got != c.want {
			t.Errorf("%q: completes %q (%v), want %q", c.line, got, err, c.want)
		}
	}
}

func quoteWords(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + w + "'"
	}
	return strings.Join(q, " ")
}
