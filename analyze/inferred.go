package analyze

import (
	"bytes"
	"cmp"
	"encoding/gob"
	"fmt"
	"slices"
)

// The incidents found apart from the one place that finishes. A
// distributed driver need not ship every loss, connect and tally of what
// the devices met to the worker that finishes: Partial.TakeIncidents
// takes out of each partial what finds the incidents (its losses, its
// connects, its device ids) and what details them (its tallies of what
// the devices met while down, their last states); Split.Infer, once, over
// every part's, finds the incidents and clock offsets as the finishing
// step would, and returns for each part the losses its incidents hold,
// on the fleet's clock; Split.Detail, in each part's worker, reduces
// the part's tallies against them to each incident's detail (what its
// devices met, who never came back, their service: incidentDetail),
// which merges by device; Partial.PutIncidents gives the partial those,
// and Split.Finish then takes the incidents as Infer found them, with
// their details merged, instead of finding them. The result is the one
// Check gives. With a broker's log the finishing step finds the
// incidents itself (the broker's account is set against each incident's
// devices): TakeIncidents takes nothing then.

// incidentCore is what TakeIncidents takes of one part.
type incidentCore struct {
	Part     int
	End      int64 // the part's last record
	Devices  int32
	Known    int
	Names    []string
	Losses   []lossEvent // MetAt: into the part's own tallies
	Connects []int64
	ConnDevs []int32
}

// incidentTallies is what details one part's incidents: its tallies of
// what its devices met while down and their last states.
type incidentTallies struct {
	Part    int
	Devices int32
	Names   []string
	Met     []metCount
	Last    []lastState
	// Storm holds recovery-storm's losses when the rule runs (Storms)
	Storms bool
	Storm  []stormLoss
}

// stormShare is what one part's losses of one incident tell
// recovery-storm (Detail sends it on to JudgeStorm, by incident).
type stormShare struct {
	Part, Inc int
	Back      int64 // the incident's first connect, the broker's return
	Sp        stormPart
}

// incidentDetails is what Detail returns for one part: the incidents and
// each one's detail over the part's devices.
type incidentDetails struct {
	Part    int
	Summary inferredSummary
	Details []incidentDetail
	Stormy  []int32 // the incidents the part sent recovery-storm's losses of
}

// incidentAssign is what Infer returns for one part: the losses of it
// that the incidents hold, and what the finishing step needs of them.
type incidentAssign struct {
	Part    int
	End     int64 // the log's last record, of every part
	Summary inferredSummary
	// Losses are the part's losses in an incident, in the time order
	// of the fleet, each with its incident, on the fleet's clock, its
	// device the part's own ordinal
	Losses []assignedLoss
	// Offsets are the clock offsets of the part's devices, with the
	// part's own ordinals
	Offsets []offsetWire
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
}

func wireOffsets(offs []ClockOffset, dev func(int32) (int32, bool)) []offsetWire {
	var out []offsetWire
	for _, o := range offs {
		if d, ok := dev(o.dev); ok {
			out = append(out, offsetWire{O: o, Dev: d, FoundAt: o.at})
		}
	}
	return out
}

func unwireOffsets(ws []offsetWire) []ClockOffset {
	var out []ClockOffset // nil for none, as the finishing step's own
	for _, w := range ws {
		o := w.O
		o.dev, o.at = w.Dev, w.FoundAt
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
	c := incidentCore{Part: p.part, End: p.k.c.End, Devices: ic.Devices, Known: ic.Known, Names: fc.Names,
		Losses: ic.Losses, Connects: ic.Connects, ConnDevs: ic.ConnDevs}
	t := incidentTallies{Part: p.part, Devices: ic.Devices, Names: fc.Names, Met: ic.Met, Last: ic.Last}
	rs := p.k.recoveryStorm()
	if rs != nil {
		t.Storms, t.Storm = true, rs.Losses
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
	p.incidentsTaken = true
	return core, tallies, nil
}

// recoveryStorm returns the check's recovery-storm rule, nil if it does
// not run.
func (k *checker) recoveryStorm() *recoveryStorm {
	for _, r := range k.rules {
		if rs, ok := r.(*recoveryStorm); ok {
			return rs
		}
	}
	return nil
}

// encode encodes v with encoding/gob.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	err := gob.NewEncoder(&b).Encode(v)
	return b.Bytes(), err
}

// Infer finds the incidents from what TakeIncidents took of every part,
// once each, in any order, and returns, by part, what PutIncidents needs
// of them, encoded.
func (s *Split) Infer(cores [][]byte) (map[int][]byte, error) {
	cs := make([]incidentCore, len(cores))
	for i, b := range cores {
		if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&cs[i]); err != nil {
			return nil, fmt.Errorf("%s: incidents of a part: %w", s.dir, err)
		}
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
		ic.merge(&incidentCounter{Losses: c.Losses, Connects: c.Connects, ConnDevs: c.ConnDevs, Devices: c.Devices, Known: c.Known})
		ic.names = append(ic.names, c.Names...)
		ic.end = max(ic.end, c.End)
	}
	bases[len(cs)] = ic.Devices
	ic.keepalive = s.k.keepalive()
	incs, offs, spans := ic.find()
	partOf := func(dev int32) int {
		i, _ := slices.BinarySearch(bases, dev+1)
		return i - 1
	}
	sum := inferredSummary{Incidents: incs, Offsets: wireOffsets(offs, func(d int32) (int32, bool) { return d, true })}
	out := map[int][]byte{}
	for i := range cs {
		a := incidentAssign{Part: i, End: ic.end, Summary: sum,
			Offsets: wireOffsets(offs, func(d int32) (int32, bool) { return d - bases[i], partOf(d) == i })}
		for k, sp := range spans {
			for _, l := range ic.Losses[sp[0]:sp[1]] {
				if partOf(l.Dev) == i {
					l.Dev -= bases[i]
					a.Losses = append(a.Losses, assignedLoss{Inc: int32(k), Loss: l})
				}
			}
		}
		var b bytes.Buffer
		if err := gob.NewEncoder(&b).Encode(&a); err != nil {
			return nil, fmt.Errorf("%s: incidents of part %d: %w", s.dir, i, err)
		}
		out[i] = b.Bytes()
	}
	return out, nil
}

// valid checks that c names every device by an ordinal below its count.
func (c *incidentCore) valid() error {
	if c.Devices < 0 || len(c.Names) != int(c.Devices) || len(c.Connects) != len(c.ConnDevs) {
		return fmt.Errorf("%d device ids for %d devices, %d connects of %d devices", len(c.Names), c.Devices, len(c.Connects), len(c.ConnDevs))
	}
	for _, l := range c.Losses {
		if l.Dev < 0 || l.Dev >= c.Devices {
			return fmt.Errorf("a loss names device %d of %d", l.Dev, c.Devices)
		}
	}
	for _, d := range c.ConnDevs {
		if d < 0 || d >= c.Devices {
			return fmt.Errorf("a connect names device %d of %d", d, c.Devices)
		}
	}
	return nil
}

// Detail reduces one part's tallies (what TakeIncidents took) against
// what Infer returned for the part to each incident's detail over the
// part's devices, and returns them with the incidents, encoded, for the
// part's partial (PutIncidents); and, by incident, what the part's
// losses of it tell recovery-storm, for JudgeStorm.
func (s *Split) Detail(tallies, assign []byte) ([]byte, map[int][]byte, error) {
	details, t, a, ic, err := s.detail(tallies, assign)
	if err != nil {
		return nil, nil, err
	}
	storms, err := s.stormShares(&t, &a, &ic, &details)
	if err != nil {
		return nil, nil, err
	}
	b, err := encode(&details)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: incidents of part %d: %w", s.dir, t.Part, err)
	}
	return b, storms, nil
}

// detail is Detail's reduction of the tallies to the incidents' details.
func (s *Split) detail(tallies, assign []byte) (incidentDetails, incidentTallies, incidentAssign, incidentCounter, error) {
	var d incidentDetails
	var ic incidentCounter
	var t incidentTallies
	var a incidentAssign
	if err := gob.NewDecoder(bytes.NewReader(tallies)).Decode(&t); err != nil {
		return d, t, a, ic, fmt.Errorf("%s: incidents' tallies: %w", s.dir, err)
	}
	if err := gob.NewDecoder(bytes.NewReader(assign)).Decode(&a); err != nil {
		return d, t, a, ic, fmt.Errorf("%s: incidents of part %d: %w", s.dir, t.Part, err)
	}
	if a.Part != t.Part {
		return d, t, a, ic, fmt.Errorf("%s: the incidents of part %d against the tallies of part %d", s.dir, a.Part, t.Part)
	}
	ic = incidentCounter{Devices: t.Devices, Met: t.Met, Last: t.Last, end: a.End, names: t.Names}
	if err := ic.validTallies(); err != nil {
		return d, t, a, ic, fmt.Errorf("%s: incidents' tallies of part %d: %w", s.dir, t.Part, err)
	}
	n := len(a.Summary.Incidents)
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
	for k, ls := range byInc {
		d.Details[k] = ic.detailOf(ls, ix, 0, 1)
	}
	return d, t, a, ic, nil
}

// stormShares returns, by incident with a return, what the part's
// recovery-storm losses of it tell (stormPart), on the fleet's clock and
// in its order, as recoveryStorm.Finish takes them from all the losses;
// and notes in d which incidents it sent.
func (s *Split) stormShares(t *incidentTallies, a *incidentAssign, ic *incidentCounter, d *incidentDetails) (map[int][]byte, error) {
	pol := s.k.c.Policy
	if !t.Storms || pol == nil {
		return nil, nil
	}
	ix := indexClocks(unwireOffsets(a.Offsets))
	ls := t.Storm
	for i := range ls {
		if ls[i].Dev < 0 || ls[i].Dev >= ic.Devices {
			return nil, fmt.Errorf("%s: part %d: a recovery-storm loss names device %d of %d", s.dir, t.Part, ls[i].Dev, ic.Devices)
		}
		if o := ix.dev(ls[i].Dev, ls[i].LossAt); o != 0 { // as Finish moves them
			l := &ls[i]
			l.LossAt, l.Conn, l.Start = l.LossAt-o, l.Conn-o, l.Start-o
		}
	}
	ls = byTime(ls, func(l *stormLoss) int64 { return l.LossAt }, func(a, b stormLoss) int { return compareLines(a.Ref, b.Ref) })
	out := map[int][]byte{}
	for k, in := range a.Summary.Incidents {
		if in.FirstConnectAt == NoTime {
			continue
		}
		lo, _ := slices.BinarySearchFunc(ls, in.LostAt, func(l stormLoss, t int64) int { return cmp.Compare(l.LossAt, t) })
		hi, _ := slices.BinarySearchFunc(ls, in.LastLoss+1, func(l stormLoss, t int64) int { return cmp.Compare(l.LossAt, t) })
		if lo == hi {
			continue
		}
		b, err := encode(&stormShare{Part: t.Part, Inc: k, Back: in.FirstConnectAt, Sp: reduceStorm(pol, ls[lo:hi], in.FirstConnectAt)})
		if err != nil {
			return nil, fmt.Errorf("%s: part %d: recovery-storm: %w", s.dir, t.Part, err)
		}
		out[k] = b
		d.Stormy = append(d.Stormy, int32(k))
	}
	return out, nil
}

// JudgeStorm judges one incident's return for recovery-storm from what
// every part's losses of it tell (Detail's for that incident, in any
// order), and returns the verdict, encoded, for the finishing step
// (PutStorm).
func (s *Split) JudgeStorm(shares [][]byte) ([]byte, error) {
	if len(shares) == 0 {
		return nil, fmt.Errorf("%s: recovery-storm: no part's losses to judge", s.dir)
	}
	ss := make([]stormShare, len(shares))
	for i, b := range shares {
		if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&ss[i]); err != nil {
			return nil, fmt.Errorf("%s: recovery-storm: %w", s.dir, err)
		}
		if ss[i].Inc != ss[0].Inc || ss[i].Back != ss[0].Back {
			return nil, fmt.Errorf("%s: recovery-storm: the losses of incident %d judged with incident %d's", s.dir, ss[i].Inc+1, ss[0].Inc+1)
		}
	}
	slices.SortFunc(ss, func(a, b stormShare) int { return a.Part - b.Part })
	sp := ss[0].Sp
	for i := 1; i < len(ss); i++ {
		if ss[i].Part == ss[i-1].Part {
			return nil, fmt.Errorf("%s: recovery-storm: part %d's losses of incident %d twice", s.dir, ss[i].Part, ss[0].Inc+1)
		}
		sp.merge(&ss[i].Sp)
	}
	st, ok := sp.judge(ss[0].Back)
	j := judgedOf(int32(ss[0].Inc), st, ok)
	return encode(&j)
}

// PutStorm gives the partial one incident's verdict of recovery-storm,
// as JudgeStorm returned it: the finishing step takes each from the
// partial it was put in (one partial may hold them all).
func (p *Partial) PutStorm(b []byte) error {
	rs := p.k.recoveryStorm()
	if rs == nil || !rs.Apart {
		return fmt.Errorf("partial of part %d: recovery-storm's losses were not taken apart", p.part)
	}
	var j stormJudged
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&j); err != nil {
		return fmt.Errorf("partial of part %d: recovery-storm: %w", p.part, err)
	}
	rs.Judged = append(rs.Judged, j)
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
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&d); err != nil {
		return fmt.Errorf("partial of part %d: incidents: %w", p.part, err)
	}
	if d.Part != p.part || len(d.Details) != len(d.Summary.Incidents) {
		return fmt.Errorf("partial of part %d: the incidents of part %d (%d details of %d incidents)", p.part, d.Part, len(d.Details), len(d.Summary.Incidents))
	}
	ic.Inferred, ic.Details = &d.Summary, d.Details
	if rs := p.k.recoveryStorm(); rs != nil {
		rs.Expect = d.Stormy
	}
	return nil
}
