package replay

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Shard is one of N processes (or machines) that replay a plan together
// against one broker: the shard I of N replays the plan's devices k with
// k mod N = I (Plan.Shard), from the start they share (Options.StartAt),
// and its report carries the samples Merge makes one report of.
type Shard struct {
	I, N int
	// Plan names the whole plan the shards share (PlanDigest of it, before
	// it was sharded): Merge refuses shards of different plans.
	Plan string
}

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

// PlanDigest returns a digest of the plan p: its devices' ids, clean
// session flags and keepalives, and its connects' times, devices, waits
// and attempts, as SHA-256 in hex. Shards of one plan carry it
// (Shard.Plan), so that Merge knows them.
func PlanDigest(p *Plan) string {
	h := sha256.New()
	b := binary.AppendUvarint(nil, uint64(len(p.Devices)))
	h.Write(b)
	for _, d := range p.Devices {
		b = binary.AppendUvarint(b[:0], uint64(len(d.ID)))
		b = append(b, d.ID...)
		b = binary.AppendUvarint(b, uint64(d.Keepalive))
		if d.Clean {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
		h.Write(b)
	}
	for _, c := range p.Connects {
		b = binary.AppendVarint(b[:0], int64(c.At))
		b = binary.AppendVarint(b, int64(c.Wait))
		b = binary.AppendVarint(b, int64(c.Device))
		b = binary.AppendVarint(b, int64(c.Attempt))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Samples are what a shard's report carries for Merge: the outcome of
// every connect, and the counts that are not a connect's.
type Samples struct {
	Shard   int    `json:"shard"`
	Shards  int    `json:"shards"`
	Plan    string `json:"plan_digest"` // Shard.Plan
	StartAt string `json:"start_at"`    // RFC 3339, to the nanosecond: the start the shards shared
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
	s := &Samples{Shard: r.opts.Shard.I, Shards: r.opts.Shard.N, Plan: r.opts.Shard.Plan, StartAt: r.start.UTC().Format(time.RFC3339Nano),
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
// connect. The shards must be of one plan (Shard.Plan), speed, broker,
// start and schedule, each once, and none interrupted; a report that
// says what no replay writes (a device beyond its own, a negative time,
// a count of connects other than its samples') is refused, and what the
// reports cost is bounded by what they hold. The result is not judged:
// call Judge.
func Merge(reps []*Report) (*Report, error) {
	if len(reps) == 0 {
		return nil, errors.New("no shard's report to merge")
	}
	first := reps[0]
	if first.Samples == nil {
		return nil, fmt.Errorf("report 1 (%s) has no samples: expected the JSON of stormaudit replay --shard I/N --format json", first.Plan)
	}
	n := first.Samples.Shards
	if n != len(reps) { // before anything is sized by what a file claims
		return nil, shardCountError(reps, n)
	}
	seen := make([]bool, n)
	m := &Report{Plan: first.Plan, Broker: first.Broker, Protocol: first.Protocol, Speed: first.Speed, Shards: n,
		RestartScheduled: first.RestartScheduled, LinkDownScheduled: first.LinkDownScheduled,
		BrokerDid: BrokerDid{RefusedByCode: map[string]int{}}, ReplayDid: ReplayDid{LocalErrors: map[string]int{}}}
	var outs []outcome
	for k, r := range reps {
		if err := sameReplay(r, first, seen); err != nil {
			return nil, &MergeError{Report: k, Err: err}
		}
		s := r.Samples
		if m.Devices+r.Devices > math.MaxInt32 {
			return nil, &MergeError{Report: k, Err: fmt.Errorf("%d devices in all: expected at most %d", m.Devices+r.Devices, math.MaxInt32)}
		}
		seen[s.Shard] = true
		m.ConnectsScheduled += r.ConnectsScheduled
		m.ProtocolErrors, m.Dropped, m.WillsDelivered = m.ProtocolErrors+s.Broke, m.Dropped+s.Dropped, m.WillsDelivered+s.Wills
		for name, c := range s.AcceptErrors {
			m.LocalErrors[name] += c
		}
		for i, c := range s.Connects {
			o, err := c.outcome(m.Devices, r.Devices)
			if err != nil {
				return nil, &MergeError{Report: k, Err: fmt.Errorf("shard %d/%d, samples.connects[%d]: %w", s.Shard, n, i, err)}
			}
			outs = append(outs, o)
		}
		m.Devices += r.Devices
	}
	slices.SortStableFunc(outs, func(a, b outcome) int { return cmp.Compare(a.due, b.due) })
	m.sum(outs, m.Devices)
	return m, nil
}

// MergeError is what Merge found wrong with one of the reports: Report
// is its index in the reports given.
type MergeError struct {
	Report int
	Err    error
}

func (e *MergeError) Error() string { return fmt.Sprintf("report %d: %v", e.Report+1, e.Err) }
func (e *MergeError) Unwrap() error { return e.Err }

// sameReplay says what makes r not a shard of the replay whose first
// report is first, seen holding the shards read so far: its samples
// missing, its shard out of range or seen, another plan, speed, broker,
// start or schedule, an interrupted replay, or counts no replay writes.
func sameReplay(r, first *Report, seen []bool) error {
	s, f := r.Samples, first.Samples
	switch {
	case s == nil:
		return fmt.Errorf("%s has no samples: expected the JSON of stormaudit replay --shard I/N --format json", r.Plan)
	case s.Shards != len(seen) || s.Shard < 0 || s.Shard >= len(seen):
		return fmt.Errorf("shard %d/%d, and report 1 is of %d shards", s.Shard, s.Shards, len(seen))
	case seen[s.Shard]:
		return fmt.Errorf("shard %d/%d again", s.Shard, s.Shards)
	case s.Plan != f.Plan || r.Plan != first.Plan:
		return fmt.Errorf("shard %d/%d is of another plan (%s %s, report 1's %s %s): the shards must replay one plan, drawn with the same flags",
			s.Shard, s.Shards, r.Plan, s.Plan, first.Plan, f.Plan)
	case r.Speed != first.Speed || r.Broker != first.Broker || r.Protocol != first.Protocol || s.StartAt != f.StartAt ||
		r.RestartScheduled != first.RestartScheduled || r.LinkDownScheduled != first.LinkDownScheduled:
		return fmt.Errorf("shard %d/%d (speed %g against %s, MQTT %s, from %s) is not of the replay of report 1 (speed %g against %s, MQTT %s, from %s, the same outages)",
			s.Shard, s.Shards, r.Speed, r.Broker, r.Protocol, s.StartAt, first.Speed, first.Broker, first.Protocol, f.StartAt)
	case r.Interrupted:
		return fmt.Errorf("shard %d/%d was interrupted: its report is partial, and so would the merged one be", s.Shard, s.Shards)
	case r.ConnectsScheduled != len(s.Connects) || r.Devices < 0 || r.Devices > len(s.Connects):
		return fmt.Errorf("shard %d/%d: %d devices and %d connects scheduled, and %d connects sampled: expected the connects scheduled sampled, and at most as many devices",
			s.Shard, s.Shards, r.Devices, r.ConnectsScheduled, len(s.Connects))
	case s.Broke < 0 || s.Dropped < 0 || s.Wills < 0:
		return fmt.Errorf("shard %d/%d: broke %d, dropped %d, wills %d: expected counts >= 0", s.Shard, s.Shards, s.Broke, s.Dropped, s.Wills)
	}
	for name, c := range s.AcceptErrors {
		if c < 0 || !strings.HasPrefix(name, "accept ") {
			return fmt.Errorf("shard %d/%d: accept error %q × %d: expected an \"accept ...\" count >= 0", s.Shard, s.Shards, name, c)
		}
	}
	return nil
}

// shardCountError says why reps, of which the first is one of n shards,
// are not every shard once: the first shard missing, or one too many.
func shardCountError(reps []*Report, n int) error {
	given := map[int]bool{}
	for _, r := range reps {
		if r.Samples != nil {
			given[r.Samples.Shard] = true
		}
	}
	for i := 0; i <= len(reps) && i < n; i++ { // the first missing is among the first len(reps)+1
		if !given[i] {
			return fmt.Errorf("shard %d/%d is missing (%d reports given): every shard's report is needed, each once", i, n, len(reps))
		}
	}
	return fmt.Errorf("%d reports given of %d shards: every shard's report is needed, each once", len(reps), n)
}

// maxSampleUs is the largest time a sample may hold, in µs: one that
// fits in a time.Duration.
const maxSampleUs = int64(1<<63-1) / int64(time.Microsecond)

// outcome returns the outcome c says, its device offset by base; an
// error when it names no outcome, a device beyond the shard's n, a time
// below 0 or beyond maxSampleUs, or an errno on an outcome that has none
// (or none on a local failure).
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
	for _, us := range []int64{c.DueUs, c.LateUs, c.OpenedUs, c.ConnackUs, c.AtUs} {
		if us < 0 || us > maxSampleUs {
			return outcome{}, fmt.Errorf("connect of device %d: a time of %d µs: expected 0 to %d", c.Device, us, maxSampleUs)
		}
	}
	if (kind == local) != (c.Errno != "") || strings.HasPrefix(c.Errno, "accept ") {
		return outcome{}, fmt.Errorf("connect of device %d: %s with errno %q: expected an errno on a local failure alone", c.Device, c.Kind, c.Errno)
	}
	d := func(us int64) time.Duration { return time.Duration(us) * time.Microsecond }
	return outcome{result: result{kind: kind, code: c.Code, errno: c.Errno, lateness: d(c.LateUs), opened: d(c.OpenedUs), connack: d(c.ConnackUs),
		at: d(c.AtUs), attempted: kind != notAttempted}, due: d(c.DueUs), device: int32(base + int(c.Device))}, nil
}
