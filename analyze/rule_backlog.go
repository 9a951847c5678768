package analyze

import (
	"cmp"
	"fmt"
	"slices"
)

const backlogID = "backlog"

// The thresholds of backlog (docs/rules.md). An outbox grows without
// bound through a loss when at least OutboxSamples records of it carry
// outbox_depth, the depth never falls, rises by at least OutboxMinGrowth,
// and rises in the second half of the loss at least half as fast as in
// the first (it does not level off at a limit). A flush bunches when its
// busiest window holds at least FlushMin messages from at least StormMin
// devices, over StormFactor times the messages of the same backlog
// spread uniformly from the incident's loss to its last connect.
const (
	OutboxSamples   = 3
	OutboxMinGrowth = 10
	FlushMin        = 100
)

// backlog flags outboxes that grow without bound (or beyond the declared
// outbox_limit) while the device is offline, and incidents after which
// the fleet's outbox flush bunches. Device judges each outbox and keeps
// the flushes and recovered losses; Finish judges each incident.
type backlog struct {
	Flushes []flushAt
	Losses  []backlogLoss // recovered losses
	Devices int32         // devices seen
	// Apart is true once the flushes and losses were taken apart with
	// the incidents (Partial.TakeIncidents): each incident's flush is
	// judged apart (Split.JudgeStorm), and Judged holds the verdicts put
	// back
	Apart  bool
	Judged []bunchJudged
}

// backlogLoss is a recovered loss: when lost, when connected again, and
// the device's ordinal in the read (its clock offset's key).
type backlogLoss struct {
	Lost, Back int64
	Dev        int32
}

func (r *backlog) merge(next Rule) {
	n := next.(*backlog)
	for _, f := range n.Flushes {
		f.Dev += r.Devices
		r.Flushes = append(r.Flushes, f)
	}
	for _, l := range n.Losses {
		l.Dev += r.Devices
		r.Losses = append(r.Losses, l)
	}
	r.Devices += n.Devices
	r.Judged = append(r.Judged, n.Judged...)
}

// flushAt is the messages one record reports flushed, placed in time.
type flushAt struct {
	At, N int64
	Dev   int32 // the device's ordinal in the read
	Ref   Ref
}

func (*backlog) Info() RuleInfo {
	return RuleInfo{ID: backlogID, Severity: Warning, Uses: []string{"outbox_limit"}, Title: "the outbox grows without bound or drops measurements, or its flush bunches after recovery",
		Help: "From outbox_depth and outbox_flushed: a device whose outbox kept growing through an outage without levelling off " +
			"(or grew beyond the policy's outbox_limit), a device whose full outbox dropped measurements (outbox_dropped), and an incident after which the fleet's outboxes flushed far more messages in " +
			"one second than a flush spread over the recovery would: the reconnect's second load wave."}
}

func (r *backlog) Device(c *Context, d *Device) {
	dev := r.Devices
	r.Devices++
	d.Flushes(func(i int, at, n int64) {
		r.Flushes = append(r.Flushes, flushAt{At: at, N: n, Dev: dev, Ref: d.Events[i].Ref})
	})
	for i := range d.Episodes {
		if ep := &d.Episodes[i]; ep.Loss() && ep.End != NoTime {
			r.Losses = append(r.Losses, backlogLoss{ep.Lost, ep.End, dev})
		}
	}
	r.dropped(c, d)
	if limit, ok := r.limit(c); ok {
		r.overLimit(c, d, limit)
		return
	}
	r.unbounded(c, d)
}

// dropped flags a device whose records count measurements dropped from
// its full outbox (outbox_dropped), saying when it first filled: between
// the record before the first that counts a drop and that record.
func (r *backlog) dropped(c *Context, d *Device) {
	var t tally
	var total int64
	first := -1
	for i := range d.Events {
		if e := &d.Events[i]; e.Dropped > 0 {
			t.add(e.At, e.Ref)
			total = addSat(total, int64(e.Dropped))
			if first < 0 {
				first = i
			}
		}
	}
	if t.n == 0 {
		return
	}
	e := &d.Events[first]
	from := e.At
	if first > 0 {
		from = d.Events[first-1].At
	}
	f := t.finding(backlogID, Info, d, e.Ref) // dropping at its limit is what a device should do: a cost, not a fault
	f.Kind = "backlog/outbox-dropped"
	f.Message = fmt.Sprintf("outbox filled and dropped %d measurements (%s), first between %s and %s",
		total, countNoun(t.n, "record", "records"), fmtTime(from), fmtTime(e.At))
	kept := "no outbox_depth"
	if e.Outbox >= 0 {
		kept = fmt.Sprintf("outbox_depth %d", e.Outbox)
	}
	f.Explanation = fmt.Sprintf("%s's %s at %s counts %d measurements dropped from its full outbox since its previous record (at %s; %s "+
		"kept). %s count drops, %d measurements in all: data the outage cost that no flush will bring back. A larger outbox, a "+
		"sample rate that falls while offline, or a summary in place of the raw readings keeps more of it.",
		d.ID, e.Outcome, fmtTime(e.At), e.Dropped, fmtTime(from), kept, countNoun(t.n, "record", "records"), total)
	c.Report(f)
}

// limit returns the declared outbox_limit, if one is.
func (r *backlog) limit(c *Context) (int64, bool) {
	if c.Policy == nil || c.Inferred || !c.Policy.Declared("outbox_limit") || c.Policy.OutboxLimit <= 0 {
		return 0, false
	}
	return int64(c.Policy.OutboxLimit), true
}

// overLimit flags the records whose outbox_depth exceeds the limit.
func (r *backlog) overLimit(c *Context, d *Device, limit int64) {
	var t tally
	worst := -1
	for i := range d.Events {
		if e := &d.Events[i]; e.Outbox >= 0 && e.Outbox > limit {
			t.add(e.At, e.Ref)
			if worst < 0 || e.Outbox > d.Events[worst].Outbox {
				worst = i
			}
		}
	}
	if t.n == 0 {
		return
	}
	w := &d.Events[worst]
	f := t.finding(backlogID, Warning, d, w.Ref)
	f.Kind = "backlog/over-outbox-limit"
	f.Message = fmt.Sprintf("outbox held %d messages, beyond the policy's outbox_limit of %d (%s)", w.Outbox, limit, countNoun(t.n, "record", "records"))
	f.Explanation = fmt.Sprintf("%s's %s at %s says %d messages were waiting in its outbox; the policy declares outbox_limit = %d, the most the "+
		"outbox holds. %s over the limit in all. An outbox that outgrows its limit grows with the outage: its memory, and the flush that "+
		"follows the recovery, have no bound.", d.ID, w.Outcome, fmtTime(w.At), w.Outbox, limit, countNoun(t.n, "record was", "records were"))
	c.Report(f)
}

// outboxRise is one loss through which an outbox grew: its first and last
// samples (indices in Device.Events) and the sample nearest the middle.
type outboxRise struct{ first, mid, last, samples int }

// unbounded flags the losses through which the device's outbox grew
// without levelling off.
func (r *backlog) unbounded(c *Context, d *Device) {
	var t tally
	var worst outboxRise
	for i := range d.Episodes {
		ep := &d.Episodes[i]
		if !ep.Loss() {
			continue
		}
		g, ok := outboxGrowth(d, ep)
		if !ok {
			continue
		}
		t.add(d.Events[g.last].At, d.Events[g.last].Ref, d.Events[g.first].Ref)
		t.span(d.Events[g.first].At)
		if t.n == 1 || d.Events[g.last].Outbox-d.Events[g.first].Outbox > d.Events[worst.last].Outbox-d.Events[worst.first].Outbox {
			worst = g
		}
	}
	if t.n == 0 {
		return
	}
	a, m, z := &d.Events[worst.first], &d.Events[worst.mid], &d.Events[worst.last]
	f := t.finding(backlogID, Warning, d, z.Ref, a.Ref)
	f.Kind = "backlog/unbounded-growth"
	f.Message = fmt.Sprintf("outbox grew without levelling off through an outage, from %d to %d messages in %s s (%s)",
		a.Outbox, z.Outbox, fmtSeconds(float64(z.At-a.At)/1e9), countNoun(t.n, "outage", "outages"))
	f.Explanation = fmt.Sprintf("%s's outbox_depth never fell over the %d records of the outage from %s that carry it: %d at %s, %d at %s, %d at %s. "+
		"It rose in the second half at %s messages/s against %s in the first (a bounded outbox levels off at its limit; "+
		"this one grows with the outage, and so do its memory and the flush after the recovery). It happened in %s. The policy declares no "+
		"outbox_limit: declare one to judge the depth against it instead.",
		d.ID, worst.samples, fmtTime(a.At), a.Outbox, fmtTime(a.At), m.Outbox, fmtTime(m.At), z.Outbox, fmtTime(z.At),
		fmtRate(z.Outbox-m.Outbox, z.At-m.At), fmtRate(m.Outbox-a.Outbox, m.At-a.At), outages(t.n))
	c.Report(f)
}

// outboxGrowth reports whether the outbox grew without bound through the
// loss ep: the records from the one that began it to the connect that
// ended it (or the device's last).
func outboxGrowth(d *Device, ep *Episode) (outboxRise, bool) {
	end := ep.Last
	if end < 0 {
		end = len(d.Events) - 1
	}
	g := outboxRise{first: -1}
	for i := ep.First; i <= end; i++ {
		e := &d.Events[i]
		if e.Outbox < 0 {
			continue
		}
		if g.first >= 0 && e.Outbox < d.Events[g.last].Outbox {
			return g, false // it fell: something drains or drops it
		}
		if g.first < 0 {
			g.first = i
		}
		g.last = i
		g.samples++
	}
	if g.samples < OutboxSamples {
		return g, false
	}
	a, z := &d.Events[g.first], &d.Events[g.last]
	if z.Outbox-a.Outbox < OutboxMinGrowth || z.At <= a.At {
		return g, false
	}
	half := a.At + (z.At-a.At)/2
	g.mid = g.first
	for i := g.first; i <= g.last; i++ {
		if e := &d.Events[i]; e.Outbox >= 0 && abs64(e.At-half) < abs64(d.Events[g.mid].At-half) {
			g.mid = i
		}
	}
	m := &d.Events[g.mid]
	if m.At <= a.At || m.At >= z.At {
		return g, false
	}
	r1 := float64(m.Outbox-a.Outbox) / float64(m.At-a.At)
	r2 := float64(z.Outbox-m.Outbox) / float64(z.At-m.At)
	return g, r2 > 0 && r2 >= r1/2
}

func outages(n int) string {
	if n == 1 {
		return "one outage"
	}
	return fmt.Sprintf("%d outages", n)
}

// fmtRate writes n messages over ns nanoseconds as messages per second.
func fmtRate(n, ns int64) string {
	return fmt.Sprintf("%.3g", float64(n)/(float64(ns)/1e9))
}

func (r *backlog) Finish(c *Context) {
	defer func() { r.Flushes, r.Losses = nil, nil }()
	incs := c.Fleet.Incidents
	if r.Apart {
		slices.SortFunc(r.Judged, func(a, b bunchJudged) int { return cmp.Compare(a.Inc, b.Inc) })
		for _, j := range r.Judged {
			if j.Inc < 0 || int(j.Inc) >= len(incs) {
				c.Note(backlogID, fmt.Sprintf("a verdict of incident %d, of %d incidents, was not read", j.Inc+1, len(incs)))
				continue
			}
			if j.Bunched {
				c.Report(j.bunch().finding(&incs[j.Inc]))
			}
		}
		return
	}
	if len(incs) == 0 || len(r.Flushes) == 0 {
		return
	}
	onFleetClock(r.Flushes, r.Losses, c.Fleet.clocks())
	recoveries(incs, func(in *Incident, next int64) {
		if b, ok := r.flushBunch(in, next); ok {
			c.Report(b.finding(in))
		}
	})
}

// bunch is what flushBunch found of one incident's flush.
type bunch struct {
	busiest          // of the messages flushed in the recovery
	span     float64 // from the incident's loss to its last connect, s: the time the backlog built up and drained in
	expected float64 // messages per window of the backlog spread uniformly over span
	lastConn int64
}

// flushBunch judges the flush after incident in, up to next: the
// messages placed from the broker's return on, against the same backlog
// spread uniformly over the time it built up and drained in, from the
// incident's loss to the last connect of its recovered losses (about the
// rate the devices queued it at).
func (r *backlog) flushBunch(in *Incident, next int64) (bunch, bool) {
	fp := flushPartOf(r.Flushes, r.Losses, spanOf(in), next, 0)
	return fp.judge(in.LostAt)
}

// onFleetClock moves the flushes fs and recovered losses ls onto the
// fleet's clock (ix, the clock offsets), as the incidents are, and sorts
// them by time.
func onFleetClock(fs []flushAt, ls []backlogLoss, ix clockIndex) {
	if ix.byDev != nil {
		for i := range fs {
			fs[i].At -= ix.dev(fs[i].Dev, fs[i].At)
		}
		for i := range ls {
			o := ix.dev(ls[i].Dev, ls[i].Lost)
			ls[i].Lost, ls[i].Back = ls[i].Lost-o, ls[i].Back-o
		}
	}
	sortPlaced(fs)
	slices.SortFunc(ls, func(a, b backlogLoss) int { return cmp.Compare(a.Lost, b.Lost) })
}

// flushPart is what some of the devices tell of an incident's flush:
// the last of their recoveries' connects, and their flushes placed from
// the broker's return to the next incident, in time order (their
// devices the fleet's ordinals). Parts of the fleet merge (merge) to
// what all of it tells.
type flushPart struct {
	LastConn int64
	Flushes  []flushAt
}

// flushPartOf returns what the flushes fs and recovered losses ls
// (sorted by time) tell of incident in, up to next; base is the first
// of their devices among the fleet's.
func flushPartOf(fs []flushAt, ls []backlogLoss, in incidentSpan, next int64, base int32) flushPart {
	fp := flushPart{LastConn: in.FirstConnectAt}
	lo, _ := slices.BinarySearchFunc(ls, in.LostAt, func(l backlogLoss, t int64) int { return cmp.Compare(l.Lost, t) })
	for _, l := range ls[lo:] {
		if l.Lost > in.LastLoss {
			break
		}
		fp.LastConn = max(fp.LastConn, l.Back)
	}
	fp.Flushes = placedWithin(fs, in.FirstConnectAt, next)
	if base != 0 {
		fp.Flushes = slices.Clone(fp.Flushes)
		for i := range fp.Flushes {
			fp.Flushes[i].Dev += base
		}
	}
	return fp
}

// bunchJudged is an incident's flush as JudgeStorm judged it.
type bunchJudged struct {
	Inc                 int32
	Total, Observed, At int64
	Devices             int
	Refs                []Ref
	Span, Expected      float64
	LastConn            int64
	Bunched             bool
}

func bunchJudgedOf(k int32, b bunch, ok bool) bunchJudged {
	return bunchJudged{Inc: k, Total: b.total, Observed: b.observed, At: b.at, Devices: b.devices, Refs: b.refs, Span: b.span,
		Expected: b.expected, LastConn: b.lastConn, Bunched: ok}
}

func (j bunchJudged) bunch() bunch {
	return bunch{busiest: busiest{total: j.Total, observed: j.Observed, at: j.At, devices: j.Devices, refs: j.Refs}, span: j.Span,
		expected: j.Expected, lastConn: j.LastConn}
}

// merge adds o, what other devices tell of the same incident's flush;
// the flushes are in time order again once every part is merged and
// sortPlaced.
func (fp *flushPart) merge(o *flushPart) {
	fp.LastConn = max(fp.LastConn, o.LastConn)
	fp.Flushes = append(fp.Flushes, o.Flushes...)
}

// judge judges the flush of fp after the incident lost at lostAt (see
// flushBunch).
func (fp *flushPart) judge(lostAt int64) (bunch, bool) {
	b := bunch{lastConn: fp.LastConn}
	fs := fp.Flushes
	if len(fs) == 0 {
		return b, false
	}
	b.busiest = busiestSecond(fs)
	b.span = float64(b.lastConn-lostAt) / 1e9
	b.expected = float64(b.total) * StormWindow.Seconds() / max(b.span, StormWindow.Seconds())
	return b, b.observed >= FlushMin && b.devices >= StormMin && float64(b.observed) > StormFactor*b.expected
}

func (b bunch) finding(in *Incident) Finding {
	f := Finding{Rule: backlogID, Kind: "backlog/flush-storm", Severity: Warning, Device: Fleet, Start: b.at, End: b.at + int64(StormWindow), Records: b.refs}
	f.Message = fmt.Sprintf("%d outbox messages from %d devices flushed in the 1s from %s after the incident at %s; spread over the outage and recovery, %.0f a second",
		b.observed, b.devices, fmtTime(b.at), fmtTime(in.LostAt), b.expected)
	f.Explanation = fmt.Sprintf("After the incident at %s the broker was back at %s and the last of its devices to recover connected at %s: %s s "+
		"from the loss. From the broker's return on the devices flushed %d messages from their outboxes (outbox_flushed, placed at the record "+
		"before it, or the backlog a connected record shows waiting when no later record reports its flush: a flush starts when the session is "+
		"up). Spread uniformly over the time the backlog built up and drained in, about the rate the devices queued it at, that is %.1f a second. "+
		"Observed: %d in the 1s from %s, from %s, %.1f× that (a bunched flush needs at least %d messages from at least %d devices, over %.0f× "+
		"the uniform rate). The broker takes the backlog as a second wave just after the reconnects: pace the flush (a batch a second) or "+
		"give it a random delay of its own.",
		fmtTime(in.LostAt), fmtTime(in.FirstConnectAt), fmtTime(b.lastConn), fmtSeconds(b.span), b.total, b.expected, b.observed,
		fmtTime(b.at), nOf(b.devices, "device"), float64(b.observed)/max(b.expected, 1e-9), FlushMin, StormMin, StormFactor)
	return f
}
