//go:build unix

package hashchain

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// lockLog takes the exclusive lock of the log at path: flock(2) on the
// log itself (created when it does not exist), without waiting, so that
// a second writer is refused whatever path names the log (a symlink, a
// hard link, the lock file removed). It writes the process's pid into
// path + ".lock", never following a symlink there, for the error another
// writer gets. Closing the returned file releases the lock.
func lockLog(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("hashchain: lock log: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	name := path + ".lock"
	if errors.Is(err, syscall.EWOULDBLOCK) {
		f.Close()
		holder := "another process"
		if b, rerr := readNoFollow(name, 32); rerr == nil {
			if pid, perr := strconv.Atoi(string(bytes.TrimSpace(b))); perr == nil {
				holder = "pid " + strconv.Itoa(pid)
			}
		}
		return nil, fmt.Errorf("%w: %s (held by %s)", ErrLocked, path, holder)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("hashchain: lock log: flock %s: %w", path, err)
	}
	// the holder's pid, only for the message above: never through a symlink
	pf, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("hashchain: lock log: %s: %w (a lock file must be a regular file, not a symlink)", name, err)
	}
	if err := pf.Truncate(0); err == nil {
		pf.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	pf.Close()
	return f, nil
}

// readNoFollow reads at most n bytes of the file name, refusing a
// symlink.
func readNoFollow(name string, n int) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	k, err := f.ReadAt(b, 0)
	if k > 0 {
		err = nil
	}
	return b[:k], err
}
