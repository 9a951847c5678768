package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// StarveFloor is the least time without a lasting connection that
// starvation counts, whatever the fleet did.
const StarveFloor = time.Minute

// starvation flags devices that never recover while most of the fleet
// did, or that recover far later than the fleet. The bound depends on the
// whole fleet, so Device keeps a summary of each device that lost its
// connection and Finish decides.
type starvation struct {
	Devices int32 // devices seen: a starveDevice's Dev is its ordinal among them
	Devs    []starveDevice
	Waits   Durations     // the longest wait of each recovered device
	floor   time.Duration // StarveFloor unless set (Tunable)
}

func (r *starvation) merge(next Rule) {
	n := next.(*starvation)
	for _, s := range n.Devs {
		s.Dev += r.Devices
		r.Devs = append(r.Devs, s)
	}
	r.Devices += n.Devices
	r.Waits.Merge(&n.Waits)
}

func (r *starvation) Thresholds() []Threshold {
	return []Threshold{{Name: "floor_s", Default: StarveFloor.Seconds(), Min: 0, Max: 7 * 86400,
		Help: "the least time without a lasting connection that is starvation, however fast the fleet recovered"}}
}

func (r *starvation) SetThreshold(name string, v float64) {
	if name == "floor_s" {
		r.floor = seconds(v)
	}
}

// starveDevice is what starvation keeps of a device that lost its
// connection.
type starveDevice struct {
	Dev int32 // the device's ordinal in the read (its id: FleetStats.name)
	// From is when it lost its connection: for a recovered device its
	// slowest loss to recover From, else the start of the outage it is
	// still in; Until is the connect that ended that loss, NoTime if none.
	From, Until int64
	Starting    bool // the outage it is still in is its start: it never connected
	Restarted   bool // the outage it is still in is a start after it stopped: it never connected again
	Attempts    int32
	Failed      [auditfmt.FailUnknown + 1]int32 // failures and refusals by failure class (0: none given)
	Last        auditfmt.Outcome                // its last record's outcome
	Ref, Lost   Ref                             // the connect that ended the loss (else its last record); the record it lost the connection at
}

func (r *starvation) Info() RuleInfo {
	return RuleInfo{ID: "starvation", Severity: Warning, Title: "a device that never recovers, or recovers far later than the fleet",
		Help: "A device still without a connection at the end of the log while at least half of the devices that lost " +
			"theirs recovered, down longer than the fleet's median time to recover plus twice the longest retry wait of 99% " +
			"of the recovered devices (and " + spanText(r.floor) + "), starved (error); a device that recovered later than 3 × the median, " +
			"the 99th percentile (from 100 recovered devices) and that bound is starving (warning). The fleet's operating picture has holes exactly " +
			"where these devices are, long after the incident looks over."}
}

func (r *starvation) Device(_ *Context, d *Device) {
	dev := r.Devices
	r.Devices++
	out, down := d.Outage()
	if !down && !d.Lost() {
		return
	}
	n := len(d.Events)
	s := starveDevice{Dev: dev, Until: NoTime, Attempts: int32(len(d.Attempts)), Last: d.Events[n-1].Outcome, Ref: d.Events[n-1].Ref}
	for i := range d.Events {
		if e := &d.Events[i]; e.Outcome == auditfmt.AttemptFailed || e.Outcome == auditfmt.Refused {
			s.Failed[min(e.Fail, auditfmt.FailUnknown)]++
		}
	}
	switch {
	case down && s.Last == auditfmt.Stopped:
		return // stopped on purpose: not starving
	case down:
		s.From, s.Lost = out.Start, d.Events[out.First].Ref
		s.Starting, s.Restarted = out.Starting && len(d.Sessions) == 0, out.Starting && len(d.Sessions) > 0
	default: // recovered from every loss: judged by the slowest
		var worst *Episode
		for i := range d.Episodes {
			if ep := &d.Episodes[i]; ep.Loss() && (worst == nil || ep.recovery() > worst.recovery()) {
				worst = ep
			}
		}
		s.From, s.Until, s.Lost, s.Ref = worst.Lost, worst.End, d.Events[worst.First].Ref, d.Events[worst.Last].Ref
		var w time.Duration
		for i := range d.Attempts {
			w = max(w, time.Duration(nanos(d.Attempts[i].Delay)+nanos(d.Attempts[i].Wait)))
		}
		r.Waits.Add(w)
	}
	r.Devs = append(r.Devs, s)
}

// starveBound holds the fleet's bounds on the time without a lasting
// connection, and their terms: late is the bound for a device that
// recovered, never the bound for one that did not.
type starveBound struct {
	late, never, median, p99, wait99, floor time.Duration
	estimated                               bool // the median, p99 or wait99 is an estimate (see Durations)
}

// starveP99From is the fewest recovered devices whose 99th percentile
// enters the bound: below it the nearest-rank 99th percentile is the
// slowest device itself, which no device could exceed.
const starveP99From = 100

func newStarveBound(st *FleetStats, waits *Durations, floor time.Duration) starveBound {
	waits.Sort()
	b := starveBound{median: st.TTR50, wait99: waits.Rank(0.99), floor: floor, estimated: !st.TTR.Exact() || !waits.Exact()}
	if st.Recovered >= starveP99From {
		b.p99 = st.TTR99
	}
	b.never = max(b.median+2*b.wait99, floor)
	b.late = max(3*b.median, b.p99, b.never)
	return b
}

// text explains the bound of a recovered device (late) or of one that
// did not recover.
func (b starveBound) text(late bool) string {
	if b.estimated {
		return b.exactText(late) + fmt.Sprintf(" (the median, 99th percentile and waits are estimates within ±%g%%: more than %d of them)", 100*DurationsAccuracy, ExactDurations)
	}
	return b.exactText(late)
}

// exactText is text without saying which terms are estimates.
func (b starveBound) exactText(late bool) string {
	never := fmt.Sprintf("the median plus twice the longest retry wait of 99%% of the recovered devices (%s + 2 × %s) and %s",
		durMs(b.median), durMs(b.wait99), b.floor)
	if !late {
		return fmt.Sprintf("the bound %s is the larger of %s: the median device had recovered by then, and there was time for two more of the fleet's longest retry waits",
			durMs(b.never), never)
	}
	if b.p99 == 0 {
		return fmt.Sprintf("the bound %s is the largest of 3 × the median time to recover (3 × %s), %s (the 99th percentile counts from %d recovered devices)",
			durMs(b.late), durMs(b.median), never, starveP99From)
	}
	return fmt.Sprintf("the bound %s is the largest of 3 × the median time to recover (3 × %s), its 99th percentile (%s), %s",
		durMs(b.late), durMs(b.median), durMs(b.p99), never)
}

// durMs formats d rounded to the millisecond.
func durMs[D time.Duration | int64](d D) string {
	return time.Duration(d).Round(time.Millisecond).String()
}

func (r *starvation) Finish(c *Context) {
	st := c.Fleet
	if st.Lost == 0 {
		return
	}
	if 2*st.Recovered < st.Lost {
		c.Skip("starvation", fmt.Sprintf("only %d of the %d devices that lost their connection recovered: starvation is judged against a fleet of which at least half recovered", st.Recovered, st.Lost))
		return
	}
	if ix := st.clocks(); ix.byDev != nil { // the findings' times on the fleet's clock
		for i := range r.Devs {
			if o := ix.dev(r.Devs[i].Dev, r.Devs[i].From); o != 0 {
				d := &r.Devs[i]
				d.From -= o
				if d.Until != NoTime {
					d.Until -= o
				}
			}
		}
	}
	b := newStarveBound(st, &r.Waits, r.floor)
	var starved []starveDevice
	for _, s := range r.Devs {
		if s.down(c.End) > int64(b.of(&s)) {
			starved = append(starved, s)
			c.Report(s.finding(c, b))
		}
	}
	if len(starved) > 0 {
		c.Report(fleetStarvation(c, b, starved))
	}
	r.Devs, r.Waits = nil, Durations{}
}

// of returns the bound s is held to.
func (b starveBound) of(s *starveDevice) time.Duration {
	if s.Until != NoTime {
		return b.late
	}
	return b.never
}

// down returns how long s was without a lasting connection: its time to
// recover, or, if it never recovered, from the outage it is in to end.
func (s *starveDevice) down(end int64) int64 {
	if s.Until != NoTime {
		return s.Until - s.From
	}
	return end - s.From
}

// failures sums s's failures up: "57 failed (52 overload, 5 transient)".
func (s *starveDevice) failures() string {
	var parts []string
	var total int32
	for k, n := range s.Failed {
		if n > 0 {
			name := "no failure class"
			if k > 0 {
				name = auditfmt.FailureClass(k).String()
			}
			parts = append(parts, fmt.Sprintf("%d %s", n, name))
		}
		total += n
	}
	if total == 0 {
		return "none failed"
	}
	return fmt.Sprintf("%d failed or were refused (%s)", total, strings.Join(parts, ", "))
}

// finding reports s against the fleet's bound b.
func (s *starveDevice) finding(c *Context, b starveBound) Finding {
	st := c.Fleet
	f := Finding{Rule: "starvation", Severity: Warning, Device: st.name(s.Dev), Start: s.From, End: s.Until, Records: []Ref{s.Ref, s.Lost}}
	tries := fmt.Sprintf("%s in the log, of which %s", nOf(int(s.Attempts), "attempt"), s.failures())
	if s.Until != NoTime {
		f.Kind = "starvation/late-recovery"
		f.Message = fmt.Sprintf("recovered after %s, beyond the fleet's bound of %s", durMs(s.down(0)), durMs(b.late))
		f.Explanation = fmt.Sprintf("The device lost its connection at %s and connected for good at %s, %s later, after %s. "+
			"The fleet's %d recovered devices took %s at the median: %s.",
			timeText(s.From), timeText(s.Until), durMs(s.down(0)), tries, st.Recovered, durMs(b.median), b.text(true))
		return f
	}
	f.Severity, f.End = Error, c.End
	if s.Starting || s.Restarted {
		f.Kind = "starvation/never-connected"
		what, since := "never connected", "The device's first record is at %s and it has not connected since;"
		if s.Restarted {
			f.Kind = "starvation/no-connect-after-restart"
			what, since = "did not connect again after restarting", "The device stopped and started again at %s and has not connected since;"
		}
		f.Message = fmt.Sprintf("%s: trying for %s while %d of %d devices recovered", what, durMs(s.down(c.End)), st.Recovered, st.Lost)
		f.Explanation = fmt.Sprintf(since+" its last record is %s, and the log ends at %s, "+
			"%s later. It made %s. Of the %d devices that lost their connection, %d recovered, the median in %s: %s.",
			timeText(s.From), s.Last, timeText(c.End), durMs(s.down(c.End)), tries, st.Lost, st.Recovered, durMs(b.median), b.text(false))
		return f
	}
	f.Kind = "starvation/never-recovered"
	f.Message = fmt.Sprintf("never recovered: without a connection for %s while %d of %d devices recovered", durMs(s.down(c.End)), st.Recovered, st.Lost)
	f.Explanation = fmt.Sprintf("The device lost its connection at %s and has not connected since; its last record is %s, and the log ends at %s, "+
		"%s later. It made %s. Of the %d devices that lost their connection, %d recovered, the median in %s: %s.",
		timeText(s.From), s.Last, timeText(c.End), durMs(s.down(c.End)), tries, st.Lost, st.Recovered, durMs(b.median), b.text(false))
	return f
}

// fleetStarvation sums the starved devices up, with the fleet's fairness.
func fleetStarvation(c *Context, b starveBound, starved []starveDevice) Finding {
	st, end := c.Fleet, c.End
	slices.SortFunc(starved, func(x, y starveDevice) int {
		return cmp.Or(cmp.Compare(min(x.Until, 0), min(y.Until, 0)), cmp.Compare(y.down(end), x.down(end)), strings.Compare(st.name(x.Dev), st.name(y.Dev)))
	})
	never := 0
	f := Finding{Rule: "starvation", Kind: "starvation/fleet-starved", Severity: Warning, Device: Fleet, Start: starved[0].From, End: end}
	var names []string
	for _, s := range starved {
		if s.Until == NoTime {
			never++
		}
		f.Start = min(f.Start, s.From)
		f.Records = append(f.Records, s.Ref)
		if len(names) < 5 {
			names = append(names, fmt.Sprintf("%s (%s)", st.name(s.Dev), durMs(s.down(end))))
		}
	}
	f.Message = fmt.Sprintf("%s starved: %d never recovered, %d recovered late (Jain's fairness index %.3f)",
		nOf(len(starved), "device"), never, len(starved)-never, st.Fairness)
	f.Explanation = fmt.Sprintf("Of the %d devices that lost their connection, %d recovered: time to recover p50 %s, p90 %s, p99 %s, max %s; "+
		"Jain's fairness index over these times is %.3f (1 when every device took as long, 1/n when one took all the time). "+
		"%s went without a connection longer than the fleet's bounds: for a device that recovered, %s; for one that did not, %s. "+
		"The longest without a connection: %s%s.",
		st.Lost, st.Recovered, durMs(st.TTR50), durMs(st.TTR90), durMs(st.TTR99), durMs(st.TTRMax),
		st.Fairness, nOf(len(starved), "device"), b.text(true), b.text(false), strings.Join(names, ", "), moreText(len(starved), len(names)))
	return f
}
