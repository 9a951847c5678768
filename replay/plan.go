package replay

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/policy"
	"github.com/stormaudit/stormaudit/simulate"
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

// WhatIfOptions describe a what-if: the same devices, the same outage,
// another policy.
type WhatIfOptions struct {
	Policy  policy.Policy
	Library *policy.Policy // the library's own reconnect loop beside the manager, or nil
	// Outage is how long the broker was down from the plan's start (the
	// incident's first connect after its loss); Horizon how long the
	// what-if runs.
	Outage, Horizon time.Duration
	Seed            uint64
}

// WhatIf redraws the schedule of the devices of recorded under another
// policy, through simulate's model: they all lose the broker at the
// plan's start, it is down for the outage, and each connects when the
// model's policy (and library loop) says. Its socket-opens are the
// what-if plan; the model's device i is recorded's device i.
func WhatIf(ctx context.Context, recorded *Plan, o WhatIfOptions) (*Plan, error) {
	if len(recorded.Devices) == 0 {
		return nil, fmt.Errorf("what-if: the recorded schedule has no device")
	}
	name := o.Policy.Name
	if name == "" {
		name = string(o.Policy.Delay)
	}
	p := &Plan{Name: "what-if (" + name + ")", Devices: slices.Clone(recorded.Devices)}
	if o.Policy.KeepaliveS > 0 {
		for i := range p.Devices {
			p.Devices[i].Keepalive = uint16(min(o.Policy.KeepaliveS, 65535))
		}
	}
	cfg := simulate.Config{Devices: len(p.Devices), Outage: o.Outage, Policy: o.Policy, Seed: o.Seed, Library: o.Library,
		Horizon: max(o.Horizon, o.Outage+time.Second), OnOpen: func(op simulate.Open) {
			p.Connects = append(p.Connects, Connect{At: op.At, Wait: time.Duration(op.Delay * 1e9), Device: int32(op.Device), Attempt: op.Attempt})
		}}
	if _, err := simulate.Run(ctx, cfg, io.Discard); err != nil {
		return nil, fmt.Errorf("what-if: %w", err)
	}
	slices.SortStableFunc(p.Connects, func(a, b Connect) int { return cmp.Or(cmp.Compare(a.At, b.At), cmp.Compare(a.Device, b.Device)) })
	return p, nil
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
