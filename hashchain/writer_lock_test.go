//go:build unix

package hashchain

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriterLockIsTheLog: while a writer holds a log, a second writer is
// refused whatever names the log: a symlink, a hard link, or the same
// path after its lock file was removed; a lock file that is a symlink is
// not followed (its target is left alone); and a failed open leaves no
// lock file behind (issue 25: the lock went by path, and a second writer
// appended and corrupted the log).
func TestWriterLockIsTheLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "w.log")
	w := openTestWriter(t, path, nil)
	defer w.Close()
	sym, hard := filepath.Join(dir, "sym.log"), filepath.Join(dir, "hard.log")
	if err := os.Symlink(path, sym); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(path, hard); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, sym, hard} {
		if _, _, err := OpenWriter(p, WriterOptions{Log: testLog}); !errors.Is(err, ErrLocked) {
			t.Errorf("a second writer through %s: %v, want ErrLocked", filepath.Base(p), err)
		}
	}
	os.Remove(path + ".lock")
	if _, _, err := OpenWriter(path, WriterOptions{Log: testLog}); !errors.Is(err, ErrLocked) {
		t.Errorf("a second writer after rm w.log.lock: %v, want ErrLocked", err)
	}

	other := filepath.Join(dir, "other.log")
	target := filepath.Join(dir, "precious")
	if err := os.WriteFile(target, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, other+".lock"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := OpenWriter(other, WriterOptions{Log: testLog}); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("a lock file that is a symlink: %v, want it refused", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep me" {
		t.Errorf("the lock file's symlink target was written: %q", b)
	}

	notLog := filepath.Join(dir, "notes.txt")
	os.WriteFile(notLog, []byte("not\na log\n"), 0o644) // two lines: no torn tail to cut
	if _, _, err := OpenWriter(notLog, WriterOptions{Log: testLog}); err == nil {
		t.Fatal("a file that is not a log opened")
	}
	if _, err := os.Lstat(notLog + ".lock"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed open left %s.lock behind: %v", notLog, err)
	}
}
