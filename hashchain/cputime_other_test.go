//go:build !unix

package hashchain

import "time"

// cpuTime returns 0: process CPU time is only measured on Unix.
func cpuTime() time.Duration { return 0 }
