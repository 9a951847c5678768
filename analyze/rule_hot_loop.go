package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
)

const hotLoopID = "hot-loop"

// The thresholds of hot-loop (docs/rules.md). A full-jitter
// fleet with a base delay of 1 s draws a delay below hotDelay at attempt
// a with probability 0.01/2^a, so a run of hotRun such attempts has odds
// of about 1e-13 per outage and device; hotOpens socket-opens within
// hotSpan need ten delays summing to less than a second.
const (
	hotDelay = 0.01        // s: a wait (drawn delay plus rate-limit waits) below this is near zero
	hotRun   = 5           // consecutive near-zero waits that make a tight loop
	hotOpens = 10          // socket-opens of one device within hotSpan that make a tight loop
	hotSpan  = time.Second // the window hotOpens are counted in
)

// hotLoop flags devices that retry in a tight loop: runs of near-zero
// waits, or many socket-opens within a second.
type hotLoop struct {
	order []int // scratch: attempt indices sorted by socket-open

	// the thresholds (Tunable): hotDelay, hotRun, hotOpens and hotSpan
	// unless set
	delay      float64
	run, opens int
	span       time.Duration
}

func (r *hotLoop) Thresholds() []Threshold {
	return []Threshold{
		{Name: "delay_s", Default: hotDelay, Min: 0, Max: 60, Help: "a wait (drawn delay plus rate-limit waits) below this is near zero"},
		{Name: "run", Default: hotRun, Min: 2, Max: 1e6, Integer: true, Help: "consecutive near-zero waits that make a tight loop"},
		{Name: "opens", Default: hotOpens, Min: 2, Max: 1e6, Integer: true, Help: "socket-opens of one device within span_s that make a tight loop"},
		{Name: "span_s", Default: hotSpan.Seconds(), Min: 0.001, Max: 3600, Help: "the window opens are counted in"},
	}
}

func (r *hotLoop) SetThreshold(name string, v float64) {
	switch name {
	case "delay_s":
		r.delay = v
	case "run":
		r.run = int(v)
	case "opens":
		r.opens = int(v)
	case "span_s":
		r.span = seconds(v)
	}
}

func (r *hotLoop) Info() RuleInfo {
	return RuleInfo{ID: hotLoopID, Severity: Error, Title: "tight retry loop",
		Help: fmt.Sprintf("At least %d consecutive attempts waiting less than %g s each, or at least %d socket-opens within %g s: "+
			"a device retrying without backing off, which burns its battery and radio and, across a fleet, floods the broker.",
			r.run, r.delay, r.opens, r.span.Seconds())}
}

// hotRunStats describes a device's runs of near-zero waits.
type hotRunStats struct {
	hot        int // attempts in runs of at least the rule's run
	runs       int // such runs
	start, end int // attempt indices of the longest run, end exclusive
}

// hotPeak is the most socket-opens of a device within hotSpan.
type hotPeak struct {
	n    int
	from int // index in hotLoop.order of the first
}

func (r *hotLoop) Device(c *Context, d *Device) {
	rs := r.runs(d)
	pk := r.peak(d)
	if rs.end-rs.start < r.run && pk.n < r.opens {
		return
	}
	var t tally
	if rs.end-rs.start >= r.run {
		for i := rs.start; i < rs.end; i++ {
			t.add(d.Attempts[i].Start, d.Events[d.Attempts[i].Backoff].Ref)
		}
	}
	if pk.n >= r.opens { // the peak rests on its window's attempts only when it qualified
		for _, i := range r.order[pk.from : pk.from+pk.n] {
			t.add(d.Attempts[i].Start, d.Events[d.Attempts[i].Backoff].Ref)
		}
	}
	f := t.finding(hotLoopID, Error, d)
	f.Kind = "hot-loop/tight-loop" // a run of short delays, a burst of socket-opens, or both: one finding a device
	f.Message, f.Explanation = r.text(d, rs, pk)
	c.Report(f)
}

// hotRuns finds d's runs of consecutive attempts waiting less than
// hotDelay; a connected outcome ends a run.
func (r *hotLoop) runs(d *Device) hotRunStats {
	var st hotRunStats
	start := 0
	closeRun := func(end int) {
		if n := end - start; n >= r.run {
			st.hot += n
			st.runs++
			if n > st.end-st.start {
				st.start, st.end = start, end
			}
		}
	}
	for i := range d.Attempts {
		a := &d.Attempts[i]
		if a.Delay+a.Wait >= r.delay {
			closeRun(i)
			start = i + 1
			continue
		}
		if a.Outcome >= 0 && d.Events[a.Outcome].Outcome == auditfmt.Connected {
			closeRun(i + 1)
			start = i + 1
		}
	}
	closeRun(len(d.Attempts))
	return st
}

// peak finds the most socket-opens of d within hotSpan, leaving r.order
// sorted by socket-open.
func (r *hotLoop) peak(d *Device) hotPeak {
	r.order = r.order[:0]
	for i := range d.Attempts {
		r.order = append(r.order, i)
	}
	slices.SortStableFunc(r.order, func(x, y int) int { return cmp.Compare(d.Attempts[x].Open, d.Attempts[y].Open) })
	var pk hotPeak
	j := 0
	for i, k := range r.order {
		for d.Attempts[k].Open-d.Attempts[r.order[j]].Open >= int64(r.span) {
			j++
		}
		if n := i - j + 1; n > pk.n {
			pk = hotPeak{n: n, from: j}
		}
	}
	return pk
}

// text returns the finding's message and explanation.
func (r *hotLoop) text(d *Device, rs hotRunStats, pk hotPeak) (msg, expl string) {
	var parts []string
	if n := rs.end - rs.start; n >= r.run {
		first, last := &d.Attempts[rs.start], &d.Attempts[rs.end-1]
		longest := 0.0
		for i := rs.start; i < rs.end; i++ {
			longest = max(longest, d.Attempts[i].Delay+d.Attempts[i].Wait)
		}
		msg = fmt.Sprintf("retried in a tight loop: %d attempts waiting less than %g s each, in %s of %d or more",
			rs.hot, r.delay, countNoun(rs.runs, "run", "runs"), r.run)
		parts = append(parts, fmt.Sprintf("%s made %d consecutive attempts (counter %d to %d) from %s to %s, each waiting less than %g s "+
			"(drawn delay plus rate-limit waits; the longest %s s); a run of %d or more is a tight loop, and it had %s, %d attempts in all",
			d.ID, n, first.Number, last.Number, fmtTime(first.Start), fmtTime(last.Start), r.delay, fmtSeconds(longest), r.run,
			countNoun(rs.runs, "such run", "such runs"), rs.hot))
	}
	if pk.n >= r.opens {
		first, last := &d.Attempts[r.order[pk.from]], &d.Attempts[r.order[pk.from+pk.n-1]]
		if msg == "" {
			msg = fmt.Sprintf("retried in a tight loop: %d socket-opens within %s s", pk.n, fmtSeconds(r.span.Seconds()))
		} else {
			msg += fmt.Sprintf(", %d socket-opens within %s s", pk.n, fmtSeconds(r.span.Seconds()))
		}
		parts = append(parts, fmt.Sprintf("%s opened %d sockets between %s and %s (socket-open = backoff_wait time + delay + rate-limit waits), "+
			"%s s apart; %d or more within %s s is a tight loop", d.ID, pk.n, fmtTime(first.Open), fmtTime(last.Open),
			fmtSeconds(float64(last.Open-first.Open)/1e9), r.opens, fmtSeconds(r.span.Seconds())))
	}
	for i, p := range parts {
		if i > 0 {
			expl += ". "
		}
		expl += p
	}
	return msg, expl + "."
}

func (r *hotLoop) Finish(*Context) {}
