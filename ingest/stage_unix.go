//go:build unix

package ingest

import (
	"errors"
	"os"
	"syscall"
)

// tryLock opens (creating) the lock file at path and takes its exclusive
// flock(2) without waiting; locked is false when another process holds it.
func tryLock(path string) (f *os.File, locked bool, err error) {
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, false, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	switch {
	case errors.Is(err, syscall.EWOULDBLOCK):
		return f, false, nil
	case err != nil:
		f.Close()
		return nil, false, err
	}
	return f, true, nil
}
