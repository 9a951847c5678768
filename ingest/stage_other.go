//go:build !unix

package ingest

import "os"

// tryLock opens (creating) the lock file at path. Without flock(2) it
// cannot tell a live ingest's stage from a killed one's, so it reports the
// lock as taken only for the stage it creates: leftovers are kept.
func tryLock(path string) (f *os.File, locked bool, err error) {
	_, statErr := os.Stat(path)
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, false, err
	}
	return f, os.IsNotExist(statErr), nil
}
