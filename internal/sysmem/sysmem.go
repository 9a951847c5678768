// Package sysmem says how much memory the system has available.
package sysmem

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// Available returns the memory the system says is available for a new
// program (MemAvailable of /proc/meminfo), in bytes, or 0 when it cannot
// tell.
func Available() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}
