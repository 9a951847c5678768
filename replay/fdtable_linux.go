package replay

import "golang.org/x/sys/unix"

// growFDTable makes room in the process's file table for n descriptors
// before the first connect. Linux grows the table by doubling as
// descriptors are opened, and each growth waits out an RCU grace period
// while every other thread opening a socket waits on it: on a cold
// process, BenchmarkReplay10k's first run saw p99 lateness of 13 to 24 ms
// from these stalls, 3 to 5 ms with the table grown first. The table never
// shrinks, so one descriptor duplicated to the top and closed again is
// enough. n is capped by the descriptor limit; a descriptor already open
// there is left alone.
func growFDTable(n int) {
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) != nil || lim.Cur < 2 {
		return
	}
	top := int(min(uint64(n), lim.Cur-1))
	if _, err := unix.FcntlInt(uintptr(top), unix.F_GETFD, 0); err != unix.EBADF {
		return // open, or the check failed: never replace a descriptor in use
	}
	if unix.Dup3(0, top, unix.O_CLOEXEC) == nil {
		unix.Close(top)
	}
}
