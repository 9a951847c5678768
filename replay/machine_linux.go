package replay

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/stormaudit/stormaudit/internal/sysmem"
)

// ThisMachine reads what this machine gives a replay (see Machine).
func ThisMachine() Machine {
	m := Machine{TimeWaitReuse: -1, Memory: sysmem.Available()}
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil {
		m.Descriptors = int(min(lim.Cur, 1<<30))
	}
	if f := procInts("/proc/sys/net/ipv4/ip_local_port_range"); len(f) == 2 && f[1] >= f[0] {
		m.Ports, m.PortsFrom = f[1]-f[0]+1, f[0]
	}
	if f := procInts("/proc/sys/net/ipv4/tcp_tw_reuse"); len(f) == 1 {
		m.TimeWaitReuse = f[0]
	}
	return m
}

// procInts reads the whitespace-separated integers of a /proc file; nil
// if it cannot.
func procInts(path string) []int {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil
		}
		out = append(out, n)
	}
	return out
}
