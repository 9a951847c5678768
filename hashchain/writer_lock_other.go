//go:build !unix

package hashchain

import (
	"fmt"
	"os"
	"runtime"
)

// lockLog would take the exclusive lock of the log at path; collector
// logs need flock(2), which this system lacks.
func lockLog(path string) (*os.File, error) {
	return nil, fmt.Errorf("hashchain: lock log %s: collector logs need flock(2), which %s lacks", path, runtime.GOOS)
}
