package sidefile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRead: a regular file within the bound is read; a device, a FIFO, a
// directory or a file past the bound is refused before it is read, saying
// what it is (issue 25: check --policy /dev/zero read 24 GB).
func TestRead(t *testing.T) {
	dir := t.TempDir()
	small, big, fifo := filepath.Join(dir, "p.toml"), filepath.Join(dir, "big"), filepath.Join(dir, "fifo")
	os.WriteFile(small, []byte("delay = \"fixed\"\n"), 0o644)
	os.WriteFile(big, make([]byte, 2048), 0o644)
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := Read(small, 1024); err != nil || string(b) != "delay = \"fixed\"\n" {
		t.Errorf("a small file: %q, %v", b, err)
	}
	for _, tc := range []struct{ path, want string }{
		{"/dev/zero", "found a character device"},
		{fifo, "found a FIFO"},
		{dir, "found a directory"},
		{big, "at most 1024 bytes, found 2048"},
	} {
		if _, err := Read(tc.path, 1024); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.path, err, tc.want)
		}
	}
}

// TestCheckNesting: a table header nested past MaxNesting is refused with
// its line; an ordinary policy is not.
func TestCheckNesting(t *testing.T) {
	if err := CheckNesting("p.toml", []byte("name = \"x\"\nbase_delay_s = 1.5\n[rules.resync]\ntick_s = 0.05\n")); err != nil {
		t.Errorf("an ordinary file: %v", err)
	}
	deep := "a = 1\n[" + strings.Repeat("t.", 100000) + "t]\n"
	if err := CheckNesting("s.toml", []byte(deep)); err == nil || !strings.Contains(err.Error(), "s.toml:2:") {
		t.Errorf("100,000 nested tables: %v, want refused at line 2", err)
	}
}
