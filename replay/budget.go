package replay

import (
	"fmt"
	"net"
	"strings"
	"time"
)

// Machine is what this machine gives a replay, as ThisMachine reads it;
// a figure of 0 is one it could not read, and is not checked.
type Machine struct {
	// Descriptors is the soft limit on the process's open files
	// (RLIMIT_NOFILE, which Go raises to the hard limit at start).
	Descriptors int
	// Ports is the size of the ephemeral port range
	// (net.ipv4.ip_local_port_range): the local ports a process has for
	// connections to one broker address; PortsFrom is its first.
	Ports, PortsFrom int
	// TimeWaitReuse is net.ipv4.tcp_tw_reuse: 1 lets a new connection
	// take a port still in TIME_WAIT, 2 (the default) only over
	// loopback, 0 never; -1 unknown.
	TimeWaitReuse int
	// Memory is the memory available to a new program, bytes.
	Memory int64
}

// The costs a budget is reckoned with (measured on Linux with Go 1.26,
// docs/replay.md "What one machine can drive").
const (
	// ReserveDescriptors is what the replay holds besides the devices'
	// connections: the observer, the queue's publisher, the audit log,
	// the runtime's own, with room to spare.
	ReserveDescriptors = 256
	// DeviceMemory and EmbeddedDeviceMemory are the memory a device
	// costs, its client alone and with the embedded broker's side of its
	// connection: the growth of the peak resident set from 2,000 to 6,000
	// devices of a fixed-timer storm, 16 KB and 111 KB a device.
	DeviceMemory         = 16 << 10
	EmbeddedDeviceMemory = 112 << 10
	// BaseMemory is what a replay holds before its first device.
	BaseMemory = 256 << 20
	// TimeWait is how long Linux holds the port of a connection this end
	// closed first before it can be used again for the same address.
	TimeWait = 60 * time.Second
)

// Budget is what a replay of a plan needs of the machine, beside what
// the machine has (PlanBudget). A device holds at most one connection at
// a time: the replay drops the old one before its next connect.
type Budget struct {
	Devices  int
	Embedded bool // the broker's end of every connection is a descriptor of this process too
	// Descriptors is one a device, and ReserveDescriptors; with the
	// embedded broker, its end of each connection too, and of the
	// connections dropped within a second (the most connects due in any
	// second): a dropped connection's end in the broker lingers until
	// the broker reads its close, and in a storm that takes it hundreds
	// of milliseconds (9,000 devices of a fixed-timer storm peaked at
	// 20,000 descriptors, over 2 a device).
	Descriptors int
	// Ports is a local port a device, and, where a port this end closed
	// cannot be reused for TimeWait (a broker not on loopback without
	// tcp_tw_reuse 1), the most connects due in any TimeWait besides.
	Ports int
	// Memory is BaseMemory and DeviceMemory (EmbeddedDeviceMemory) a
	// device.
	Memory int64
	Have   Machine
	// timeWait is whether Ports counts the ports in TIME_WAIT, and
	// perDevice those a device adds to them (the busiest TimeWait's
	// connects over the devices); lingering the broker's ends a device
	// adds (the busiest second's connects over the devices)
	timeWait             bool
	perDevice, lingering float64
	plan                 *Plan // the plan, and how, for MaxDevices
	load                 Load
}

// Load is how a plan is to be replayed, as a budget weighs it.
type Load struct {
	Speed    float64 // Options.Speed (0: 1)
	Addr     string  // the broker's host:port
	Embedded bool    // the broker is embedded in this process
	// Seed is the seed a smaller sample of the plan would be drawn with
	// (Plan.Sample), for MaxDevices.
	Seed uint64
	// Shards is how many shards the plan is one of (0: none): --devices
	// draws from the whole plan, each shard gets its share.
	Shards int
}

// PlanBudget returns what replaying p under l needs of the machine m.
func PlanBudget(p *Plan, l Load, m Machine) Budget {
	if l.Speed <= 0 {
		l.Speed = 1 // Run's default
	}
	b := budget(p, l, m)
	b.plan, b.load = p, l
	return b
}

// budget returns what replaying p needs of m, without the plan kept.
func budget(p *Plan, l Load, m Machine) Budget {
	speed, addr, embedded := l.Speed, l.Addr, l.Embedded
	b := Budget{Devices: len(p.Devices), Embedded: embedded, Have: m}
	b.timeWait = m.TimeWaitReuse != 1 && !(m.TimeWaitReuse == 2 && loopback(addr))
	if n := float64(len(p.Devices)); n > 0 {
		if b.timeWait {
			b.perDevice = float64(busiestWithin(p, speed, TimeWait)) / n
		}
		if embedded {
			b.lingering = float64(busiestWithin(p, speed, time.Second)) / n
		}
	}
	b.Descriptors, b.Ports, b.Memory = b.needs(len(p.Devices))
	return b
}

// needs returns the descriptors, ports and memory that n of the plan's
// devices need (their connects in proportion).
func (b *Budget) needs(n int) (fds, ports int, mem int64) {
	fds, bytes := n, int64(DeviceMemory)
	if b.Embedded {
		fds, bytes = 2*n+int(b.lingering*float64(n)+0.5), EmbeddedDeviceMemory
	}
	return fds + ReserveDescriptors, n + int(b.perDevice*float64(n)+0.5), BaseMemory + bytes*int64(n)
}

// fits reports whether n of the plan's devices fit the machine: a
// sample of n, drawn as Plan.Sample with Load.Seed draws it (each sample
// holds the smaller ones), as many descriptors, ports and memory as those
// devices and their connects need.
func (b *Budget) fits(n int) bool {
	s := *b
	if b.plan != nil && n < b.Devices {
		s = budget(b.plan.Sample(n, b.load.Seed), b.load, b.Have)
	}
	fds, ports, mem := s.needs(n)
	return (b.Have.Descriptors == 0 || fds <= b.Have.Descriptors) && (b.Have.Ports == 0 || ports <= b.Have.Ports) &&
		(b.Have.Memory == 0 || mem <= b.Have.Memory)
}

// MaxDevices returns the most of the plan's devices the machine can
// drive, drawn as --devices with the same seed draws them: Devices when
// all of them fit, 0 when not one does.
func (b Budget) MaxDevices() int {
	lo, hi := 0, b.Devices // fits(lo); the answer is in [lo, hi]
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if b.fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// Err says what the plan needs that the machine does not have, and how
// to replay within it; nil when it fits.
func (b Budget) Err() error {
	if b.fits(b.Devices) {
		return nil
	}
	var short []string
	if b.Have.Descriptors > 0 && b.Descriptors > b.Have.Descriptors {
		per := "1 a device"
		if b.Embedded {
			per = fmt.Sprintf("2 a device with the embedded broker, its end and the device's, and %d of dropped connections the broker has yet to close",
				b.Descriptors-ReserveDescriptors-2*b.Devices)
		}
		short = append(short, fmt.Sprintf("%d descriptors (%s, and %d for the replay), and the process may open %d (ulimit -n)",
			b.Descriptors, per, ReserveDescriptors, b.Have.Descriptors))
	}
	if b.Have.Ports > 0 && b.Ports > b.Have.Ports {
		why := "1 a device"
		if b.timeWait {
			why += fmt.Sprintf(", and %d held in TIME_WAIT for %v by the connects before them (net.ipv4.tcp_tw_reuse %d)",
				b.Ports-b.Devices, TimeWait, b.Have.TimeWaitReuse)
		}
		short = append(short, fmt.Sprintf("%d local ports to the broker (%s), and the range has %d (net.ipv4.ip_local_port_range)",
			b.Ports, why, b.Have.Ports))
	}
	if b.Have.Memory > 0 && b.Memory > b.Have.Memory {
		short = append(short, fmt.Sprintf("%.1f GiB of memory, and %.1f GiB is available", gibs(b.Memory), gibs(b.Have.Memory)))
	}
	how := "not one of them fits"
	switch n := b.MaxDevices(); {
	case n > 0 && b.load.Shards > 1:
		how = fmt.Sprintf("a shard can replay at most %d of them: --devices %d across the %d shards, or more shards", n, n*b.load.Shards, b.load.Shards)
	case n > 0:
		how = fmt.Sprintf("replay at most %d of them with --devices %d", n, n)
	}
	if b.Embedded {
		how += ", replay against an external broker (--broker: one descriptor a device)"
	}
	return fmt.Errorf("this machine cannot drive %d devices: they need %s; %s, or raise the limit", b.Devices, strings.Join(short, "; "), how)
}

func gibs(b int64) float64 { return float64(b) / (1 << 30) }

// String says what the plan needs and what the machine has.
func (b Budget) String() string {
	have := func(n int) string {
		if n == 0 {
			return "unknown"
		}
		return fmt.Sprint(n)
	}
	mem := "unknown"
	if b.Have.Memory > 0 {
		mem = fmt.Sprintf("%.1f GiB", gibs(b.Have.Memory))
	}
	return fmt.Sprintf("%d devices need %d descriptors (have %s), %d local ports (have %s), %.1f GiB of memory (have %s)",
		b.Devices, b.Descriptors, have(b.Have.Descriptors), b.Ports, have(b.Have.Ports), gibs(b.Memory), mem)
}

// busiestWithin returns the most of p's connects due within any span w
// of wall time at speed.
func busiestWithin(p *Plan, speed float64, w time.Duration) int {
	best := 0
	for i, j := 0, 0; i < len(p.Connects); i++ {
		for j < len(p.Connects) && dueAt(p.Connects[j].At, speed) < dueAt(p.Connects[i].At, speed)+w {
			j++
		}
		best = max(best, j-i)
	}
	return best
}

// loopback reports whether the broker at addr (host:port) is on this
// machine's loopback: its host is "localhost" or a loopback address.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
