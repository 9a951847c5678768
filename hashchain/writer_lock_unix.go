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

// lockLog takes the exclusive lock of the log at path: flock(2) on
// path + ".lock", without waiting. It writes the process's pid into the
// lock file, for the error another writer gets. Closing the file releases
// the lock.
func lockLog(path string) (*os.File, error) {
	name := path + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("hashchain: lock log: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if errors.Is(err, syscall.EWOULDBLOCK) {
		holder := "another process"
		buf := make([]byte, 32)
		n, _ := f.ReadAt(buf, 0)
		if pid, perr := strconv.Atoi(string(bytes.TrimSpace(buf[:n]))); perr == nil {
			holder = "pid " + strconv.Itoa(pid)
		}
		f.Close()
		return nil, fmt.Errorf("%w: %s (%s holds %s)", ErrLocked, path, holder, name)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("hashchain: lock log: flock %s: %w", name, err)
	}
	pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
	if err := f.Truncate(0); err == nil {
		f.WriteAt(pid, 0) // only for the message above: best effort
	}
	return f, nil
}
