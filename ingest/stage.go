package ingest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A stage is the directory an ingest builds its dataset in: beside the
// output directory, named "." + the output's name + ".ingest-" + random,
// and renamed into place once the dataset is complete. So the output is
// either absent (or the empty directory it was) or a whole dataset,
// whatever stops the ingest: an error, --strict, SIGINT, SIGTERM, or
// SIGKILL. A lock file beside the stage (its name + ".lock", locked while
// the ingest runs) tells a live ingest from the leftovers of a killed
// one, which the next ingest into the same output removes.
type stage struct {
	dir  string
	lock *os.File
}

// stagePrefix returns the name every stage of output out begins with.
func stagePrefix(out string) string { return "." + filepath.Base(out) + ".ingest-" }

// newStage makes a stage for the dataset out, after removing the
// leftovers of killed ingests into it (returned, for the user to hear of).
func newStage(out string) (*stage, []string, error) {
	parent := filepath.Dir(out)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, nil, err
	}
	removed := removeStale(out)
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, nil, err
	}
	dir := filepath.Join(parent, stagePrefix(out)+hex.EncodeToString(b[:]))
	lock, locked, err := tryLock(dir + ".lock")
	if err != nil {
		return nil, removed, err
	}
	if !locked {
		lock.Close()
		return nil, removed, fmt.Errorf("%s.lock: locked by another ingest", dir)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		unlock(lock)
		return nil, removed, err
	}
	return &stage{dir: dir, lock: lock}, removed, nil
}

// removeStale removes the stages of out that no running ingest holds, and
// returns their names.
func removeStale(out string) []string {
	locks, _ := filepath.Glob(filepath.Join(filepath.Dir(out), globEscape(stagePrefix(out))+"*.lock"))
	var removed []string
	for _, l := range locks {
		f, locked, err := tryLock(l)
		if err != nil || !locked {
			if f != nil {
				f.Close()
			}
			continue // a live ingest holds it
		}
		dir := strings.TrimSuffix(l, ".lock")
		if err := os.RemoveAll(dir); err == nil {
			removed = append(removed, dir)
		}
		unlock(f)
	}
	return removed
}

// commit renames the stage to out, which must be absent or an empty
// directory, and releases its lock.
func (s *stage) commit(out string) error {
	if err := os.Remove(out); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s: %w (expected a new or empty directory)", out, err)
	}
	if err := os.Rename(s.dir, out); err != nil {
		return err
	}
	syncDir(filepath.Dir(out))
	unlock(s.lock)
	return nil
}

// discard removes the stage and releases its lock.
func (s *stage) discard() {
	os.RemoveAll(s.dir)
	unlock(s.lock)
}

// unlock releases and removes a stage's lock file.
func unlock(f *os.File) {
	os.Remove(f.Name())
	f.Close()
}

// syncDir makes a rename in dir durable, where the system allows.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// globEscape escapes the metacharacters of filepath.Match in s.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
