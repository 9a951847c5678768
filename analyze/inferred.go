package analyze

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"slices"
)

// The incidents found apart from the one place that finishes. A
// distributed driver need not ship every loss, connect and tally of what
// the devices met to the worker that finishes: Partial.TakeIncidents
// takes out of each partial what finds the incidents (its losses) and
// what details them (its tallies of what the devices met while down,
// their last states, its connects and its device ids); Split.Infer,
// once, over every part's losses, finds the incidents and clock offsets
// (by device ordinal) as the finishing step would, and returns for each
// part the losses its incidents hold, on the fleet's clock, and its
// devices' offsets and how they moved its connects; Split.Detail, in
// each part's worker, reduces the part's tallies against them to each
// incident's detail (what its devices met, who never came back, their
// service: incidentDetail), which merges by device, names its devices'
// offsets, and sends its connects by shard of time for each incident's
// busiest second (peaks.go); Partial.PutIncidents gives the partial
// those, and Split.Finish then takes the incidents as Infer found them,
// with their details merged, instead of finding them. The result is the one
// Check gives. With a broker's log the finishing step finds the
// incidents itself (the broker's account is set against each incident's
// devices): TakeIncidents takes nothing then.

// incidentCore is what TakeIncidents takes of one part.
type incidentCore struct {
	Part    int
	End     int64 // the part's last record
	Devices int32
	Known   int
	Losses  []lossEvent // MetAt: into the part's own tallies
}

// incidentTallies is what details one part's incidents: its tallies of
// what its devices met while down and their last states.
type incidentTallies struct {
	Part    int
	Devices int32
	Names   []string
	Met     []metCount
	Last    []lastState
	// Connects are every connected record of the session stage, of the
	// devices ConnDevs: their busiest windows are found by time (peaks.go)
	Connects []int64
	ConnDevs []int32
	// Storm holds recovery-storm's losses when the rule runs (Storms),
	// Flushes and Recovered backlog's when it does (Backlogs)
	Storms, Backlogs bool
	Storm            []stormLoss
	Flushes          []flushAt
	Recovered        []backlogLoss
}

// incidentDetails is what Detail returns for one part: each incident's
// detail over the part's devices, and for part 0 the incidents
// themselves (one copy reaches the finishing step, not one a part).
type incidentDetails struct {
	Part    int
	Summary *inferredSummary // part 0's only
	Details []incidentDetail
	Returns []int32 // the incidents whose return the part sent a share of (returnShares)
	Shards  []int64 // the shards of connects the part sent its to
	// Named holds the ids of the part's devices that a clock offset
	// names, by the part's ordinal: Infer finds the offsets without ids
	Named map[int32]string
}

// incidentSpan is what a part needs of an incident to share in its
// details and its return.
type incidentSpan struct {
	LostAt, LastLoss, FirstConnectAt int64
}

// incidentAssign is what Infer returns for one part: the losses of it
// that the incidents hold, and what the finishing step needs of them.
type incidentAssign struct {
	Part    int
	Base    int32 // the part's first device among the fleet's
	End     int64 // the log's last record, of every part
	Spans   []incidentSpan
	Summary *inferredSummary // part 0's only: the finishing step takes it from there
	// Losses are the part's losses in an incident, in the time order
	// of the fleet, each with its incident, on the fleet's clock, its
	// device the part's own ordinal
	Losses []assignedLoss
	// Offsets are the clock offsets of the part's devices, with the
	// part's own ordinals, and Moves how their connects moved
	Offsets []offsetWire
	Moves   []connectMove
}

// assignedLoss is a loss and the incident that holds it.
type assignedLoss struct {
	Inc  int32
	Loss lossEvent
}

// inferredSummary is what the finishing step takes of Infer: the
// incidents without their details, and the clock offsets, the fleet's
// ordinals.
type inferredSummary struct {
	Incidents []Incident
	Offsets   []offsetWire
}

// offsetWire is a ClockOffset as it crosses processes.
type offsetWire struct {
	O       ClockOffset
	Dev     int32
	FoundAt int64
	Round   int32
}

func wireOffsets(offs []ClockOffset, dev func(int32) (int32, bool)) []offsetWire {
	var out []offsetWire
	for _, o := range offs {
		if d, ok := dev(o.dev); ok {
			out = append(out, offsetWire{O: o, Dev: d, FoundAt: o.at, Round: o.round})
		}
	}
	return out
}

func unwireOffsets(ws []offsetWire) []ClockOffset {
	var out []ClockOffset // nil for none, as the finishing step's own
	for _, w := range ws {
		o := w.O
		o.dev, o.at, o.round = w.Dev, w.FoundAt, w.Round
		out = append(out, o)
	}
	return out
}

// TakeIncidents removes from the partial what finds the incidents and
// what details them, and returns both, encoded: core for Infer, tallies
// for Detail; both nil when the check has a broker's log (the finishing
// step finds them itself then). A partial they were taken from needs
// its incidents' details (PutIncidents) before its Split's Finish.
func (p *Partial) TakeIncidents() (core, tallies []byte, err error) {
	fc := p.k.fc
	if fc.Wit.On || p.incidentsTaken {
		return nil, nil, nil
	}
	ic := &fc.Inc
	c := incidentCore{Part: p.part, End: p.k.c.End, Devices: ic.Devices, Known: ic.Known, Losses: ic.Losses}
	t := incidentTallies{Part: p.part, Devices: ic.Devices, Names: fc.Names, Met: ic.Met, Last: ic.Last, Connects: ic.Connects, ConnDevs: ic.ConnDevs}
	rs, bl := p.k.recoveryStorm(), p.k.backlog()
	if rs != nil {
		t.Storms, t.Storm = true, rs.Losses
	}
	if bl != nil {
		t.Backlogs, t.Flushes, t.Recovered = true, bl.Flushes, bl.Losses
	}
	if core, err = encode(&c); err == nil {
		tallies, err = encode(&t)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("partial of part %d: incidents: %w", p.part, err)
	}
	ic.Losses, ic.Connects, ic.ConnDevs, ic.Met, ic.Last = nil, nil, nil, nil, nil
	if rs != nil {
		rs.Losses, rs.Apart = nil, true
	}
	if bl != nil {
		bl.Flushes, bl.Losses, bl.Apart = nil, nil, true
	}
	p.incidentsTaken = true
	return core, tallies, nil
}

// recoveryStorm returns the check's recovery-storm rule, nil if it does
// not run.
func (k *checker) recoveryStorm() *recoveryStorm { return ruleOf[*recoveryStorm](k) }

// encode encodes v with encoding/gob.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	err := gob.NewEncoder(&b).Encode(v)
	return b.Bytes(), err
}

// decode decodes b, which encode encoded, into v.
func decode(b []byte, v any) error { return gob.NewDecoder(bytes.NewReader(b)).Decode(v) }

// Infer finds the incidents from what TakeIncidents took of every part,
// once each, in any order, and returns, by part, what PutIncidents needs
// of them, encoded. It drops each of cores (sets it to nil) once decoded,
// so as not to hold every part's twice.
func (s *Split) Infer(cores [][]byte) (map[int][]byte, error) {
	cs := make([]incidentCore, len(cores))
	for i, b := range cores {
		if err := decode(b, &cs[i]); err != nil {
			return nil, fmt.Errorf("%s: incidents of a part: %w", s.dir, err)
		}
		cores[i] = nil
	}
	slices.SortFunc(cs, func(a, b incidentCore) int { return a.Part - b.Part })
	if len(cs) != s.Parts() {
		return nil, fmt.Errorf("%s: expected the incidents of %d parts, found %d", s.dir, s.Parts(), len(cs))
	}
	ic := incidentCounter{end: NoTime}
	bases := make([]int32, len(cs)+1) // each part's first device, then every device
	for i := range cs {
		c := &cs[i]
		if c.Part != i {
			return nil, fmt.Errorf("%s: expected the incidents of parts 0 to %d, found part %d where part %d belongs", s.dir, len(cs)-1, c.Part, i)
		}
		if err := c.valid(); err != nil {
			return nil, fmt.Errorf("%s: incidents of part %d: %w", s.dir, c.Part, err)
		}
		bases[i] = ic.Devices
		// no tallies here: each loss's MetAt stays its part's own
		ic.merge(&incidentCounter{Losses: c.Losses, Devices: c.Devices, Known: c.Known})
		c.Losses = nil // merged: held once
		ic.end = max(ic.end, c.End)
	}
	bases[len(cs)] = ic.Devices
	ic.keepalive = s.k.keepalive()
	incs, offs, spans := ic.find()
	if inferProbe != nil {
		inferProbe()
	}
	partOf := func(dev int32) int {
		i, _ := slices.BinarySearch(bases, dev+1)
		return i - 1
	}
	sum := inferredSummary{Incidents: incs, Offsets: wireOffsets(offs, func(d int32) (int32, bool) { return d, true })}
	out := map[int][]byte{}
	for i := range cs {
		a := incidentAssign{Part: i, Base: bases[i], End: ic.end, Spans: spansOf(incs),
			Offsets: wireOffsets(offs, func(d int32) (int32, bool) { return d - bases[i], partOf(d) == i })}
		for _, m := range ic.moves {
			if partOf(m.Dev) == i {
				m.Dev -= bases[i]
				a.Moves = append(a.Moves, m)
			}
		}
		for k, sp := range spans {
			for _, l := range ic.Losses[sp[0]:sp[1]] {
				if partOf(l.Dev) == i {
					l.Dev -= bases[i]
					a.Losses = append(a.Losses, assignedLoss{Inc: int32(k), Loss: l})
				}
			}
		}
		if i == 0 {
			a.Summary = &sum
		}
		b, err := encode(&a)
		if err != nil {
			return nil, fmt.Errorf("%s: incidents of part %d: %w", s.dir, i, err)
		}
		out[i] = b
	}
	return out, nil
}

// inferProbe, when a benchmark sets it, is called once Infer has found
// the incidents, with everything it holds still held (BenchmarkSplit's
// inferring worker).
var inferProbe func()

// spansOf returns what a part needs of each incident of incs.
func spansOf(incs []Incident) []incidentSpan {
	out := make([]incidentSpan, len(incs))
	for k := range incs {
		out[k] = spanOf(&incs[k])
	}
	return out
}

// spanOf returns what a part needs of the incident in.
func spanOf(in *Incident) incidentSpan {
	return incidentSpan{LostAt: in.LostAt, LastLoss: in.LastLoss, FirstConnectAt: in.FirstConnectAt}
}

// valid checks that c names every device by an ordinal below its count.
func (c *incidentCore) valid() error {
	if c.Devices < 0 {
		return fmt.Errorf("%d devices", c.Devices)
	}
	for _, l := range c.Losses {
		if l.Dev < 0 || l.Dev >= c.Devices {
			return fmt.Errorf("a loss names device %d of %d", l.Dev, c.Devices)
		}
	}
	return nil
}

// Detail reduces one part's tallies (what TakeIncidents took) against
// what Infer returned for the part to each incident's detail over the
// part's devices, and returns them with the incidents, encoded, for the
// part's partial (PutIncidents); by incident, what the part tells of its
// return (recovery-storm's losses, backlog's flushes), for JudgeStorm;
// and by shard of time, its connects on the fleet's clock, for Peaks.
func (s *Split) Detail(tallies, assign []byte) (details []byte, storms map[int][]byte, connects map[int64][]byte, err error) {
	d, t, a, ic, err := s.detail(tallies, assign)
	if err != nil {
		return nil, nil, nil, err
	}
	if storms, err = s.returnShares(&t, &a, &ic, &d); err != nil {
		return nil, nil, nil, err
	}
	moveConnects(t.Connects, t.ConnDevs, a.Moves)
	from := make([]int64, len(a.Spans))
	for k, sp := range a.Spans {
		from[k] = sp.LostAt
	}
	if connects, err = connectShards(t.Connects, from); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: connects of part %d: %w", s.dir, t.Part, err)
	}
	for k := range connects {
		d.Shards = append(d.Shards, k)
	}
	slices.Sort(d.Shards)
	if details, err = encode(&d); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: incidents of part %d: %w", s.dir, t.Part, err)
	}
	return details, storms, connects, nil
}

// detail is Detail's reduction of the tallies to the incidents' details.
func (s *Split) detail(tallies, assign []byte) (incidentDetails, incidentTallies, incidentAssign, incidentCounter, error) {
	var d incidentDetails
	var ic incidentCounter
	var t incidentTallies
	var a incidentAssign
	if err := decode(tallies, &t); err != nil {
		return d, t, a, ic, fmt.Errorf("%s: incidents' tallies: %w", s.dir, err)
	}
	if err := decode(assign, &a); err != nil {
		return d, t, a, ic, fmt.Errorf("%s: incidents of part %d: %w", s.dir, t.Part, err)
	}
	if a.Part != t.Part {
		return d, t, a, ic, fmt.Errorf("%s: the incidents of part %d against the tallies of part %d", s.dir, a.Part, t.Part)
	}
	ic = incidentCounter{Devices: t.Devices, Met: t.Met, Last: t.Last, end: a.End, names: t.Names}
	if err := t.validConnects(&a); err != nil {
		return d, t, a, ic, fmt.Errorf("%s: incidents' tallies of part %d: %w", s.dir, t.Part, err)
	}
	if err := ic.validTallies(); err != nil {
		return d, t, a, ic, fmt.Errorf("%s: incidents' tallies of part %d: %w", s.dir, t.Part, err)
	}
	n := len(a.Spans)
	byInc := make([][]lossEvent, n)
	for _, l := range a.Losses {
		if l.Inc < 0 || int(l.Inc) >= n || l.Loss.Dev < 0 || l.Loss.Dev >= ic.Devices ||
			l.Loss.MetAt < 0 || int(l.Loss.MetAt)+int(l.Loss.MetN) > len(ic.Met) {
			return d, t, a, ic, fmt.Errorf("%s: part %d: a loss of incident %d of %d names device %d of %d", s.dir, t.Part, l.Inc, n, l.Loss.Dev, ic.Devices)
		}
		byInc[l.Inc] = append(byInc[l.Inc], l.Loss)
	}
	ix := indexClocks(unwireOffsets(a.Offsets))
	d = incidentDetails{Part: t.Part, Summary: a.Summary, Details: make([]incidentDetail, n)}
	for _, w := range a.Offsets {
		if w.Dev < 0 || w.Dev >= ic.Devices {
			return d, t, a, ic, fmt.Errorf("%s: part %d: a clock offset of device %d of %d", s.dir, t.Part, w.Dev, ic.Devices)
		}
		if d.Named == nil {
			d.Named = map[int32]string{}
		}
		d.Named[w.Dev] = t.Names[w.Dev]
	}
	if (a.Summary != nil) != (t.Part == 0) || a.Summary != nil && len(a.Summary.Incidents) != n {
		return d, t, a, ic, fmt.Errorf("%s: incidents of part %d: %d spans, and the incidents %v", s.dir, t.Part, n, a.Summary != nil)
	}
	for k, ls := range byInc {
		d.Details[k] = ic.detailOf(ls, ix, 0, 1)
	}
	return d, t, a, ic, nil
}

// validConnects checks that t's connects and a's moves of them name
// devices of the part.
func (t *incidentTallies) validConnects(a *incidentAssign) error {
	if len(t.Connects) != len(t.ConnDevs) {
		return fmt.Errorf("%d connects of %d devices", len(t.Connects), len(t.ConnDevs))
	}
	for _, d := range t.ConnDevs {
		if d < 0 || d >= t.Devices {
			return fmt.Errorf("a connect names device %d of %d", d, t.Devices)
		}
	}
	for _, m := range a.Moves {
		if m.Dev < 0 || m.Dev >= t.Devices {
			return fmt.Errorf("a move of connects names device %d of %d", m.Dev, t.Devices)
		}
	}
	return nil
}

// validTallies checks that the last states name devices below the count,
// in order, and that every device has an id.
func (ic *incidentCounter) validTallies() error {
	if ic.Devices < 0 || len(ic.names) != int(ic.Devices) {
		return fmt.Errorf("%d device ids for %d devices", len(ic.names), ic.Devices)
	}
	for i, l := range ic.Last {
		if l.Dev < 0 || l.Dev >= ic.Devices || i > 0 && l.Dev <= ic.Last[i-1].Dev {
			return fmt.Errorf("a last state names device %d of %d, out of order", l.Dev, ic.Devices)
		}
	}
	return nil
}

// PutIncidents gives the partial the incidents and their details over
// its devices, as Detail returned them for its part.
func (p *Partial) PutIncidents(b []byte) error {
	ic := &p.k.fc.Inc
	if !p.incidentsTaken || ic.Inferred != nil {
		return fmt.Errorf("partial of part %d: its incidents were not taken (TakeIncidents), or were put back", p.part)
	}
	var d incidentDetails
	if err := decode(b, &d); err != nil {
		return fmt.Errorf("partial of part %d: incidents: %w", p.part, err)
	}
	if d.Part != p.part || (d.Summary != nil) != (d.Part == 0) || d.Summary != nil && len(d.Details) != len(d.Summary.Incidents) {
		return fmt.Errorf("partial of part %d: the incidents of part %d (%d details)", p.part, d.Part, len(d.Details))
	}
	fc := p.k.fc
	for dev, id := range d.Named { // kept whether or not the ids were taken yet (TakeNames keeps them)
		if dev < 0 || int64(dev) >= int64(fc.St.Devices) {
			return fmt.Errorf("partial of part %d: the id of device %d of %d", p.part, dev, fc.St.Devices)
		}
		if fc.Named == nil {
			fc.Named = map[int32]string{}
		}
		fc.Named[dev] = id
	}
	ic.Inferred, ic.Details, ic.Returns, ic.Detailed, ic.PeakShards = d.Summary, d.Details, d.Returns, true, d.Shards
	return nil
}
