//go:build unix

package testkit

import (
	"syscall"
	"time"
)

// CPUTime returns the CPU time the process has used, user and system.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
