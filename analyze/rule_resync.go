package analyze

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/internal/radix"
	"github.com/stormaudit/stormaudit/policy"
	"golang.org/x/sync/errgroup"
)

// The resync rule's parameters (docs/rules.md).
const (
	resyncAttempts = 16                     // attempt numbers looked at: 0 .. resyncAttempts-1
	resyncTick     = 100 * time.Millisecond // timers firing this close together fire on the same tick
	resyncGroup    = 3                      // the fewest devices that make a lockstep group
	resyncShare    = 0.10                   // and the least share of the devices at that attempt number
	resyncRepeats  = 2                      // attempt numbers at which a device must be in a group
)

func newResync() *resync {
	return &resync{tick: resyncTick, group: resyncGroup, share: resyncShare, repeats: resyncRepeats}
}

// resync flags retry timers that are not independently randomised: groups
// of devices that drew exactly the same delay at the same attempt and
// whose timers fired on the same tick, again and again.
type resync struct {
	Devices int32                  // devices seen: a fire's Dev is its ordinal among them
	Fires   [resyncAttempts][]fire // timer fires, by attempt number
	// FireDevices counts the devices with a fire, by attempt number (a
	// driver may take Fires out of a partial: see TakeFires)
	FireDevices [resyncAttempts]int

	// the thresholds (Tunable): resyncTick, resyncGroup, resyncShare and
	// resyncRepeats unless set
	tick           time.Duration
	group, repeats int
	share          float64

	name   func(dev int32) string // the id of a device by ordinal (FleetStats.name): set by Finish
	sorted bool                   // Fires hold only the candidates, sorted: presort ran
}

func (r *resync) merge(next Rule) {
	n := next.(*resync)
	base := r.Devices
	r.Devices += n.Devices
	for a := range r.FireDevices {
		r.FireDevices[a] += n.FireDevices[a]
	}
	for a := range n.Fires {
		for _, f := range n.Fires[a] {
			f.Dev += base
			r.Fires[a] = append(r.Fires[a], f)
		}
	}
}

func (r *resync) Thresholds() []Threshold {
	return []Threshold{
		{Name: "tick_s", Default: resyncTick.Seconds(), Min: 0.001, Max: 60, Help: "timers firing this close together fire on the same tick"},
		{Name: "group", Default: resyncGroup, Min: 2, Max: 1e9, Integer: true, Help: "the fewest devices that make a lockstep group"},
		{Name: "share", Default: resyncShare, Min: 0, Max: 1, Help: "the least share of the devices with a fire at an attempt number that a group must hold"},
		{Name: "repeats", Default: resyncRepeats, Min: 1, Max: resyncAttempts, Integer: true, Help: "attempt numbers at which a device must be in a group"},
	}
}

func (r *resync) SetThreshold(name string, v float64) {
	switch name {
	case "tick_s":
		r.tick = seconds(v)
	case "group":
		r.group = int(v)
	case "share":
		r.share = v
	case "repeats":
		r.repeats = int(v)
	}
}

// resyncBuckets is the size of the sketch of one attempt number.
const resyncBuckets = 1 << 16

// delayBucket is the sketch bucket of a delay (0 and -0 share one).
func delayBucket(d float64) uint32 {
	if d == 0 {
		d = 0 // -0 is the delay 0, as a map key
	}
	return uint32((math.Float64bits(d) * 0x9E3779B97F4A7C15) >> 48)
}

// fire is one timer: a device's backoff_wait at some attempt number.
type fire struct {
	Delay float64
	At    int64 // the backoff_wait's time plus its delay: when the timer fired
	Dev   int32
	Ref   Ref
}

func (r *resync) Info() RuleInfo {
	return RuleInfo{ID: "resync", Severity: Error, Uses: []string{"delay", "max_delay_s"}, Title: "retry timers move in lockstep",
		Help: "Devices that drew the same delay at the same attempt and fired on the same tick, at several attempts: " +
			"fixed intervals, un-jittered backoff, copied random seeds or coarse timer quantisation. " +
			"They come back on the same tick after every outage, a reconnect storm."}
}

func (r *resync) Device(c *Context, d *Device) {
	dev := r.Devices
	r.Devices++
	capS, jittered := r.cap(c)
	var fired uint16 // bit a: the device has a fire at attempt number a
	for i := range d.Attempts {
		a := &d.Attempts[i]
		if a.Number < 0 || a.Number >= resyncAttempts || a.AfterErr == auditfmt.FailAuth {
			continue // drawn on the authentication schedule, or beyond the attempts looked at
		}
		if jittered && a.Delay == capS {
			continue // a jittered draw clamped to the cap: the cap is no evidence of a shared timer
		}
		r.Fires[a.Number] = push(r.Fires[a.Number], fire{Delay: a.Delay, At: a.Start + nanos(a.Delay), Dev: dev, Ref: d.Events[a.Backoff].Ref})
		fired |= 1 << a.Number
	}
	for a := range r.FireDevices {
		r.FireDevices[a] += int(fired >> a & 1)
	}
}

// cap returns the policy's cap and whether the policy jitters its delays.
func (r *resync) cap(c *Context) (float64, bool) {
	if c.Policy == nil {
		return math.NaN(), false
	}
	switch c.Policy.Delay {
	case policy.FullJitter, policy.EqualJitter, policy.Decorrelated:
		return c.Policy.MaxDelayS, true
	}
	return math.NaN(), false
}

// group is a lockstep group: devices that drew delay at attempt and fired
// within the tick of at.
type group struct {
	attempt int
	delay   float64
	at      int64
	members []fire
}

// presort keeps, of each attempt number's fires, the candidates
// (candidates), on every core: which fires are candidates depends on
// their delays alone, not on their times, so no clock offset found later
// changes it; Finish sorts again only the attempt numbers whose
// candidates an offset moved.
func (r *resync) presort() {
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for a := range r.Fires {
		g.Go(func() error {
			r.Fires[a] = r.candidates(a, r.Fires[a], sketch(r.Fires[a]))
			return nil
		})
	}
	g.Wait()
	r.sorted = true
}

func (r *resync) Finish(c *Context) {
	if !r.sorted {
		r.presort()
	}
	r.name = c.Fleet.name
	var moved [resyncAttempts]bool
	if ix := c.Fleet.clocks(); ix.byDev != nil { // on the fleet's clock: lockstep is judged across devices
		for a := range r.Fires {
			for i := range r.Fires[a] {
				f := &r.Fires[a][i]
				if o := ix.dev(f.Dev, f.At); o != 0 {
					f.At, moved[a] = f.At-o, true
				}
			}
		}
	}
	locked := make([]uint16, r.Devices) // per device: bit a set when it is in a group at attempt number a
	var groups []group
	var byAttempt [resyncAttempts][]group // found on every core: each attempt number's fires are its own
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for a := range r.Fires {
		g.Go(func() error {
			if moved[a] { // ordered again: every candidate stays one
				r.Fires[a] = r.candidates(a, r.Fires[a], nil)
			}
			byAttempt[a] = r.groupsIn(a, r.Fires[a])
			return nil
		})
	}
	g.Wait()
	for a := range r.Fires {
		for _, g := range byAttempt[a] {
			for _, f := range g.members {
				locked[f.Dev] |= 1 << a
			}
			groups = append(groups, g)
		}
	}
	inLockstep := func(dev int32) bool { return bits.OnesCount16(locked[dev]) >= r.repeats }
	n := 0
	for dev := range locked {
		if inLockstep(int32(dev)) {
			n++
		}
	}
	if n == 0 {
		return
	}
	// keep the groups of the devices that are in lockstep
	for i := range groups {
		groups[i].members = slices.DeleteFunc(groups[i].members, func(f fire) bool { return !inLockstep(f.Dev) })
	}
	groups = slices.DeleteFunc(groups, func(g group) bool { return len(g.members) == 0 })
	slices.SortStableFunc(groups, func(a, b group) int {
		return cmp.Or(cmp.Compare(len(b.members), len(a.members)), cmp.Compare(a.attempt, b.attempt))
	})
	for i := range groups[:min(len(groups), resyncShown)] {
		groups[i].byDevice() // the members the finding names, by device
	}
	c.Report(r.finding(n, groups))
}

// sketch counts fires by a hash of their delay: a bucket's count bounds
// the count of each delay in it, so Finish drops the fires no group can
// hold without a map over all. It is nil for no fires.
func sketch(fs []fire) *[resyncBuckets]uint32 {
	if len(fs) == 0 {
		return nil
	}
	s := new([resyncBuckets]uint32)
	for i := range fs {
		s[delayBucket(fs[i].Delay)]++
	}
	return s
}

// lockstepGroups returns the groups among the fires of attempt a (and
// their sketch, nil if there is none): runs of
// fires with the same delay whose times lie within r.tick of the run's
// first, of at least r.group devices and r.share of the devices
// with a fire at attempt a (FireDevices: fs may hold only the fires
// whose delay enough others share, KeepFires). A device fires at one attempt number once per
// outage, so it counts once.
func (r *resync) lockstepGroups(a int, fs []fire, sketch *[resyncBuckets]uint32) []group {
	return r.groupsIn(a, r.candidates(a, fs, sketch))
}

// least returns how many devices a group at attempt a needs.
func (r *resync) least(a int) int {
	return max(r.group, int(math.Ceil(r.share*float64(r.FireDevices[a]))))
}

// candidates returns the fires of fs (attempt a's) whose delay at least
// least(a) fires share, the only ones a group can hold (a jittered
// fleet's delays are almost all distinct: few are left), sorted by delay
// and time, in place; sketch, unless nil, is fs's (see sketch), and
// drops at once the fires whose delay's bucket holds too few.
func (r *resync) candidates(a int, fs []fire, sketch *[resyncBuckets]uint32) []fire {
	least := r.least(a)
	if sketch != nil {
		fs = slices.DeleteFunc(fs, func(f fire) bool { return int(sketch[delayBucket(f.Delay)]) < least })
	}
	// each distinct delay numbered, the fires counted by it
	ids := make([]int32, len(fs))
	var delays []float64
	var counts []int32
	index := map[float64]int32{}
	for i := range fs {
		id, ok := index[fs[i].Delay] // a NaN is never found: it is its own delay, and no group's
		if !ok {
			id = int32(len(delays))
			index[fs[i].Delay] = id
			delays, counts = append(delays, fs[i].Delay), append(counts, 0)
		}
		ids[i] = id
		counts[id]++
	}
	// the shared delays ranked, their fires kept in place, then ordered
	// by rank and time
	var shared []int32
	for id, n := range counts {
		if int(n) >= least {
			shared = append(shared, int32(id))
		}
	}
	slices.SortFunc(shared, func(x, y int32) int { return cmp.Compare(delays[x], delays[y]) })
	rank := make([]int64, len(delays)) // rank+1, 0: not shared
	for k, id := range shared {
		rank[id] = int64(k) + 1
	}
	n, lo, hi := 0, int64(math.MaxInt64), int64(math.MinInt64)
	for i := range fs {
		if rank[ids[i]] > 0 {
			fs[n], ids[n] = fs[i], ids[i]
			lo, hi = min(lo, fs[i].At), max(hi, fs[i].At)
			n++
		}
	}
	fs, ids = fs[:n], ids[:n]
	if n > 0 && uint64(hi)-uint64(lo) < 1<<47 && len(shared) < 1<<15 {
		// one radix key, stable: the rank above the time within the span
		radix.Permute(fs, radix.Order(n, func(i int) int64 { return rank[ids[i]]<<47 | (fs[i].At - lo) }))
	} else {
		slices.SortStableFunc(fs, func(x, y fire) int { return cmp.Or(cmp.Compare(x.Delay, y.Delay), cmp.Compare(x.At, y.At)) })
	}
	return fs
}

// groupsIn returns the groups among fs, attempt a's candidates as
// candidates orders them. A group's members are a part of fs, each
// device's first fire in time order, in place (byDevice orders the few
// the finding names).
func (r *resync) groupsIn(a int, fs []fire) []group {
	least := r.least(a)
	var out []group
	var seen devSet
	for i := 0; i < len(fs); {
		j := i + 1
		for j < len(fs) && fs[j].Delay == fs[i].Delay && fs[j].At-fs[i].At <= int64(r.tick) {
			j++
		}
		if j-i >= least {
			// each device's first fire kept: a group needs least devices
			run, at, delay := fs[i:j:j], fs[i].At, fs[i].Delay // the earliest fire's: -0 or +0
			top := int32(0)
			for _, f := range run {
				top = max(top, f.Dev)
			}
			if need := int(top/64) + 1; len(seen) < need {
				seen = make(devSet, need)
			}
			members := run[:0]
			for _, f := range run {
				if seen.add(f.Dev) {
					members = append(members, f)
				}
			}
			for _, f := range members {
				seen[f.Dev/64] = 0 // cleared for the next run, a word a member
			}
			if len(members) >= least {
				out = append(out, group{attempt: a, delay: delay, at: at, members: members})
			}
		}
		i = j
	}
	return out
}

// byDevice orders a group's members by device, stably.
func (g *group) byDevice() {
	radix.Permute(g.members, radix.Order(len(g.members), func(k int) int64 { return int64(g.members[k].Dev) }))
}

// resyncShown is how many groups the finding describes.
const resyncShown = 5

func (r *resync) finding(n int, groups []group) Finding {
	f := Finding{Rule: "resync", Kind: "resync/lockstep", Severity: Error, Device: Fleet, Start: math.MaxInt64, End: math.MinInt64}
	f.Message = fmt.Sprintf("%d of %d devices retry in lockstep: the same delay at the same attempt, firing on the same tick, at %d or more attempts",
		n, r.Devices, r.repeats)
	var b strings.Builder
	for i, g := range groups {
		f.Start, f.End = min(f.Start, g.at), max(f.End, g.at)
		if i >= resyncShown {
			continue
		}
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "at attempt %d, %d devices drew exactly %s s and their timers fired within %v of %s (%s)",
			g.attempt, len(g.members), ftoa(g.delay), r.tick, timeText(g.at), r.sample(g.members, 4))
		for _, m := range g.members {
			if len(f.Records) < MaxRefs {
				f.Records = append(f.Records, m.Ref)
			}
		}
	}
	if len(groups) > resyncShown {
		fmt.Fprintf(&b, "; and %d more groups", len(groups)-resyncShown)
	}
	b.WriteString(". Independently jittered timers almost never draw the same delay to the microsecond, let alone at two attempts.")
	f.Explanation = b.String()
	return f
}

// sample names the first k members of a group.
func (r *resync) sample(ms []fire, k int) string {
	var names []string
	for _, m := range ms[:min(k, len(ms))] {
		names = append(names, r.name(m.Dev))
	}
	s := strings.Join(names, ", ")
	if len(ms) > k {
		s += fmt.Sprintf(" and %d more", len(ms)-k)
	}
	return s
}
