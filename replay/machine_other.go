//go:build !linux

package replay

import "github.com/stormaudit/stormaudit/internal/sysmem"

// ThisMachine reads what this machine gives a replay (see Machine): off
// Linux, only the memory, and the rest is not checked.
func ThisMachine() Machine { return Machine{TimeWaitReuse: -1, Memory: sysmem.Available()} }
