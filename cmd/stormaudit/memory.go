package main

import (
	"strconv"

	"github.com/stormaudit/stormaudit/internal/sysmem"
)

// availableMemory returns the memory available for a new program, in
// bytes, or 0 when the system does not say.
func availableMemory() int64 { return sysmem.Available() }

// gib formats bytes in GiB.
func gib(b int64) string { return strconv.FormatFloat(float64(b)/(1<<30), 'f', 1, 64) + " GiB" }
