//go:build !unix

package testkit

import "time"

// CPUTime returns 0: process CPU time is only measured on Unix.
func CPUTime() time.Duration { return 0 }
