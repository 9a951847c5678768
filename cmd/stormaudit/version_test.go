package main

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestVersionNamesTheCheckout: stormaudit built with go build in a git
// checkout says in --version the revision git rev-parse HEAD gives, its
// commit time and whether the tree had changes, as the toolchain stamped
// them. It builds in the repository when the module's root is a clone's
// (a .git directory); in a linked worktree, whose .git is a file the
// toolchain does not take for a repository (golang/go#58218), or outside
// git, it builds in a checkout of its own of the sources the binary is
// built from. -buildvcs=true, the default's (auto) strict form, whatever
// GOFLAGS says.
func TestVersionNamesTheCheckout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds stormaudit")
	}
	for _, tool := range []string{"git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: %v", tool, err)
		}
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := root
	if fi, err := os.Stat(filepath.Join(root, ".git")); err != nil || !fi.IsDir() {
		dir = checkoutOf(t, root)
	}
	bin := filepath.Join(t.TempDir(), "stormaudit")
	command(t, dir, nil, "go", "build", "-buildvcs=true", "-o", bin, "./cmd/stormaudit")

	rev := strings.TrimSpace(command(t, dir, nil, "git", "rev-parse", "HEAD"))
	ct, err := strconv.ParseInt(strings.TrimSpace(command(t, dir, nil, "git", "log", "-1", "--format=%ct")), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	about := time.Unix(ct, 0).UTC().Format(time.RFC3339)
	if command(t, dir, nil, "git", "status", "--porcelain") != "" {
		about += ", modified"
	}
	got := command(t, "", nil, bin, "--version")
	t.Logf("built in %s: %s", dir, got)
	if want := " " + rev[:12] + " (" + about + ")\n"; !strings.HasPrefix(got, "stormaudit version ") || !strings.HasSuffix(got, want) {
		t.Errorf("built in %s at %s: --version says %q, want it to end %q", dir, rev, got, want)
	}
}

// checkoutOf makes a git checkout of the sources of root that
// ./cmd/stormaudit is built from, as they are in the working tree, with
// one commit, and returns its directory.
func checkoutOf(t *testing.T, root string) string {
	t.Helper()
	list := command(t, root, nil, "go", "list", "-deps", "-json=Dir,Module,GoFiles,CgoFiles,CFiles,HFiles,SFiles,SysoFiles,EmbedFiles", "./cmd/stormaudit")
	dst := t.TempDir()
	files := []string{"go.mod", "go.sum"}
	for dec := json.NewDecoder(strings.NewReader(list)); ; {
		var p struct {
			Dir        string
			Module     *struct{ Path string }
			GoFiles    []string
			CgoFiles   []string
			CFiles     []string
			HFiles     []string
			SFiles     []string
			SysoFiles  []string
			EmbedFiles []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if p.Module == nil || p.Module.Path != "github.com/stormaudit/stormaudit" {
			continue
		}
		rel, err := filepath.Rel(root, p.Dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, names := range [][]string{p.GoFiles, p.CgoFiles, p.CFiles, p.HFiles, p.SFiles, p.SysoFiles, p.EmbedFiles} {
			for _, name := range names {
				files = append(files, filepath.Join(rel, name))
			}
		}
	}
	for _, name := range files {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=test", "GIT_AUTHOR_EMAIL=test@example.com", "GIT_AUTHOR_DATE=2026-12-07T05:40:00Z",
		"GIT_COMMITTER_NAME=test", "GIT_COMMITTER_EMAIL=test@example.com", "GIT_COMMITTER_DATE=2026-12-07T05:40:00Z"}
	command(t, dst, env, "git", "init", "-q")
	command(t, dst, env, "git", "add", "-A")
	command(t, dst, env, "git", "commit", "-q", "-m", "the sources of ./cmd/stormaudit")
	return dst
}

// command runs name with args in dir (the test's own when ""), with env
// added to the test's environment and GOWORK off, and returns its
// stdout; it fails the test when the command fails.
func command(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOWORK=off"), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}
