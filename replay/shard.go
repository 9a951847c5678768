package replay

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Shard is one of N processes (or machines) that replay a plan together
// against one broker: the shard I of N replays the plan's devices k with
// k mod N = I (Plan.Shard), from the start they share (Options.StartAt),
// and its report carries the samples Merge makes one report of.
type Shard struct{ I, N int }

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.I, s.N) }

// Shard returns the plan of shard i of n: the devices k with k mod n = i,
// in order, with their connects. The devices are dealt in turn, so that
// each shard has its share of every second of the schedule.
func (p *Plan) Shard(i, n int) *Plan {
	var keep []int
	for k := i; k < len(p.Devices); k += n {
		keep = append(keep, k)
	}
	return p.subset(keep)
}

// Samples are what a shard's report carries for Merge: the outcome of
// every connect, and the counts that are not a connect's.
type Samples struct {
	Shard   int    `json:"shard"`
	Shards  int    `json:"shards"`
	StartAt string `json:"start_at"` // RFC 3339, to the nanosecond: the start the shards shared
	// Broke and Dropped count the accepted connections whose later
	// packets broke the protocol and those the broker ended; Wills the
	// wills of this shard's devices; AcceptErrors the embedded broker's
	// (ReplayDid.LocalErrors "accept ...").
	Broke, Dropped, Wills int
	AcceptErrors          map[string]int  `json:"accept_errors"`
	Connects              []ConnectSample `json:"connects"`
}

// ConnectSample is one connect's outcome, times in µs from the shared
// start (due, opened, accepted) or of the connect (lateness, CONNACK).
type ConnectSample struct {
	Device    int32  `json:"device"` // in the shard's plan
	Kind      string `json:"kind"`   // one of kindNames
	Code      byte   `json:"code,omitempty"`
	Errno     string `json:"errno,omitempty"`
	DueUs     int64  `json:"due_us"`
	LateUs    int64  `json:"late_us"`
	OpenedUs  int64  `json:"opened_us"`
	ConnackUs int64  `json:"connack_us"`
	AtUs      int64  `json:"at_us"`
}

// kindNames name the outcomes of a connect in Samples.
var kindNames = map[uint8]string{notAttempted: "not_attempted", accepted: "accepted", refused: "refused",
	timedOutKind: "timed_out", failed: "failed", linkDown: "link_down", protocol: "protocol", local: "local"}

// samples returns the shard's samples of the outcomes outs; rep holds
// the counts that are not a connect's (before sum adds to them).
func (r *run) samples(rep *Report, outs []outcome) *Samples {
	s := &Samples{Shard: r.opts.Shard.I, Shards: r.opts.Shard.N, StartAt: r.start.UTC().Format(time.RFC3339Nano),
		Broke: rep.ProtocolErrors, Dropped: rep.Dropped, Wills: rep.WillsDelivered, AcceptErrors: map[string]int{}}
	for name, n := range rep.LocalErrors {
		s.AcceptErrors[name] = n
	}
	us := func(d time.Duration) int64 { return d.Microseconds() }
	for _, o := range outs {
		s.Connects = append(s.Connects, ConnectSample{Device: o.device, Kind: kindNames[o.kind], Code: o.code, Errno: o.errno,
			DueUs: us(o.due), LateUs: us(o.lateness), OpenedUs: us(o.opened), ConnackUs: us(o.connack), AtUs: us(o.at)})
	}
	return s
}

// Merge makes one report of the reports of every shard of one sharded
// replay (each with its Samples): the same figures as one process
// replaying the whole plan would report, from the outcomes of every
// connect. The shards must be of one plan, speed, broker and start, each
// once. The result is not judged: call Judge.
func Merge(reps []*Report) (*Report, error) {
	if len(reps) == 0 {
		return nil, errors.New("no shard's report to merge")
	}
	first := reps[0]
	if first.Samples == nil {
		return nil, fmt.Errorf("report 1 (%s) has no samples: expected the JSON of stormaudit replay --shard I/N --format json", first.Plan)
	}
	n := first.Samples.Shards
	seen := make([]bool, n)
	m := &Report{Plan: first.Plan, Broker: first.Broker, Protocol: first.Protocol, Speed: first.Speed, Shards: n,
		RestartScheduled: first.RestartScheduled, LinkDownScheduled: first.LinkDownScheduled,
		BrokerDid: BrokerDid{RefusedByCode: map[string]int{}}, ReplayDid: ReplayDid{LocalErrors: map[string]int{}}}
	var outs []outcome
	for k, r := range reps {
		s := r.Samples
		switch {
		case s == nil:
			return nil, fmt.Errorf("report %d (%s) has no samples: expected the JSON of stormaudit replay --shard I/N --format json", k+1, r.Plan)
		case s.Shards != n || s.Shard < 0 || s.Shard >= n:
			return nil, fmt.Errorf("report %d is shard %d/%d, report 1 of %d shards", k+1, s.Shard, s.Shards, n)
		case seen[s.Shard]:
			return nil, fmt.Errorf("report %d is shard %d/%d again", k+1, s.Shard, n)
		case r.Plan != m.Plan || r.Speed != m.Speed || r.Broker != m.Broker || r.Protocol != m.Protocol || s.StartAt != first.Samples.StartAt:
			return nil, fmt.Errorf("report %d (%s at speed %g against %s from %s) is not of the replay of report 1 (%s at speed %g against %s from %s)",
				k+1, r.Plan, r.Speed, r.Broker, s.StartAt, m.Plan, m.Speed, m.Broker, first.Samples.StartAt)
		}
		seen[s.Shard] = true
		m.Interrupted = m.Interrupted || r.Interrupted
		m.ConnectsScheduled += r.ConnectsScheduled
		m.ProtocolErrors, m.Dropped, m.WillsDelivered = m.ProtocolErrors+s.Broke, m.Dropped+s.Dropped, m.WillsDelivered+s.Wills
		for name, c := range s.AcceptErrors {
			m.LocalErrors[name] += c
		}
		for _, c := range s.Connects {
			o, err := c.outcome(m.Devices, r.Devices)
			if err != nil {
				return nil, fmt.Errorf("report %d (shard %d/%d): %w", k+1, s.Shard, n, err)
			}
			outs = append(outs, o)
		}
		m.Devices += r.Devices
	}
	if i := slices.Index(seen, false); i >= 0 {
		return nil, fmt.Errorf("shard %d/%d is missing: every shard's report is needed", i, n)
	}
	slices.SortStableFunc(outs, func(a, b outcome) int { return cmp.Compare(a.due, b.due) })
	m.sum(outs, m.Devices)
	return m, nil
}

// outcome returns the outcome c says, its device offset by base; an
// error when it names no outcome or a device beyond the shard's n.
func (c *ConnectSample) outcome(base, n int) (outcome, error) {
	kind := uint8(255)
	for k, name := range kindNames {
		if name == c.Kind {
			kind = k
		}
	}
	if kind == 255 {
		return outcome{}, fmt.Errorf("connect of device %d: kind %q: expected one of accepted, refused, timed_out, failed, link_down, protocol, local, not_attempted", c.Device, c.Kind)
	}
	if c.Device < 0 || int(c.Device) >= n {
		return outcome{}, fmt.Errorf("connect of device %d: expected a device below the shard's %d", c.Device, n)
	}
	d := func(us int64) time.Duration { return time.Duration(us) * time.Microsecond }
	return outcome{result: result{kind: kind, code: c.Code, errno: c.Errno, lateness: d(c.LateUs), opened: d(c.OpenedUs), connack: d(c.ConnackUs),
		at: d(c.AtUs), attempted: kind != notAttempted}, due: d(c.DueUs), device: int32(base) + c.Device}, nil
}
