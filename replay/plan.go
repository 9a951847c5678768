package replay

import (
	"math/rand/v2"
	"slices"
	"time"

	"github.com/stormaudit/stormaudit/analyze"
)

// DefaultKeepalive is the keepalive of a replayed device when the policy
// declares none, in seconds.
const DefaultKeepalive = 60

// Device is a device a plan connects.
type Device struct {
	ID        string
	Clean     bool   // clean_session of its CONNECT
	Keepalive uint16 // seconds
}

// Connect is one scheduled connect: a socket-open of a device, At after
// the plan's start (before Options.Speed), begun by the attempt whose
// backoff_wait came Wait before it.
type Connect struct {
	At      time.Duration
	Wait    time.Duration
	Device  int32 // index in Plan.Devices
	Attempt int32
}

// Plan is a connect schedule: the devices and their connects, in time
// order.
type Plan struct {
	Name     string // what it is: "recorded", or "what-if (POLICY)"
	Devices  []Device
	Connects []Connect
}

// Span returns the time from the plan's start to its last connect.
func (p *Plan) Span() time.Duration {
	if len(p.Connects) == 0 {
		return 0
	}
	return p.Connects[len(p.Connects)-1].At
}

// Recorded makes the plan of a recorded schedule: every socket-open at or
// after from (Unix ns), at its offset from it, of every device that has
// one; keepalive is the devices' keepalive in seconds.
func Recorded(fs *analyze.FleetSchedule, from int64, keepalive uint16) *Plan {
	p := &Plan{Name: "recorded"}
	index := map[int32]int32{} // the schedule's device -> the plan's
	for _, o := range fs.Opens {
		if o.At < from {
			continue
		}
		k, ok := index[o.Device]
		if !ok {
			d := fs.Devices[o.Device]
			k = int32(len(p.Devices))
			index[o.Device] = k
			p.Devices = append(p.Devices, Device{ID: d.ID, Clean: d.Clean, Keepalive: keepalive})
		}
		p.Connects = append(p.Connects, Connect{At: time.Duration(o.At - from), Wait: time.Duration(o.Wait), Device: k, Attempt: o.Attempt})
	}
	return p
}

// Sample returns the plan of n of p's devices, chosen at random (the same
// seed, the same devices), with all their connects.
func (p *Plan) Sample(n int, seed uint64) *Plan {
	if n <= 0 || n >= len(p.Devices) {
		return p
	}
	rng := rand.New(rand.NewPCG(seed, 0x73616d706c65))
	keep := rng.Perm(len(p.Devices))[:n]
	slices.Sort(keep)
	return p.subset(keep)
}

// subset returns the plan of p's devices keep (in ascending order), with
// all their connects.
func (p *Plan) subset(keep []int) *Plan {
	index := make([]int32, len(p.Devices))
	for i := range index {
		index[i] = -1
	}
	s := &Plan{Name: p.Name}
	for _, k := range keep {
		index[k] = int32(len(s.Devices))
		s.Devices = append(s.Devices, p.Devices[k])
	}
	for _, c := range p.Connects {
		if k := index[c.Device]; k >= 0 {
			c.Device = k
			s.Connects = append(s.Connects, c)
		}
	}
	return s
}
