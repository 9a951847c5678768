package analyze

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// The returns judged apart. Two rules judge an incident's return from
// every device's records: recovery-storm (the recoveries' connects
// against the density the policy's draws expect) and backlog (the
// outbox flush against the backlog spread over the outage). With the
// incidents taken apart (inferred.go), Split.Detail reduces each part's
// share of each incident's return (returnShare), Split.JudgeStorm merges
// an incident's shares where they meet and judges it, and
// Partial.PutStorm gives the verdict to the finishing step: it holds no
// loss, connect or flush of either rule.

// returnShare is what one part tells of one incident's return.
type returnShare struct {
	Part, Inc int
	Back      int64      // the incident's first connect, the broker's return
	LostAt    int64      // the incident's loss
	Storm     *stormPart // recovery-storm's, when it runs
	Flush     *flushPart // backlog's, when it runs
}

// returnJudged is one incident's verdicts, as JudgeStorm returns them.
type returnJudged struct {
	Inc   int32
	Storm *stormJudged
	Flush *bunchJudged
}

// backlog returns the check's backlog rule, nil if it does not run.
func (k *checker) backlog() *backlog { return ruleOf[*backlog](k) }

// returnShares returns, by incident with a return, what the part tells
// of it: recovery-storm's losses of it and backlog's flushes and
// recovered losses, on the fleet's clock and in its order, as the rules'
// Finish takes them from every device; and notes in d which incidents
// it sent a share of.
func (s *Split) returnShares(t *incidentTallies, a *incidentAssign, ic *incidentCounter, d *incidentDetails) (map[int][]byte, error) {
	pol := s.k.c.Policy
	storms := t.Storms && pol != nil
	if !storms && !t.Backlogs {
		return nil, nil
	}
	ix := indexClocks(unwireOffsets(a.Offsets))
	bad := func(dev int32) bool { return dev < 0 || dev >= ic.Devices }
	ls := t.Storm
	for i := range ls {
		if bad(ls[i].Dev) {
			return nil, fmt.Errorf("%s: part %d: a recovery-storm loss names device %d of %d", s.dir, t.Part, ls[i].Dev, ic.Devices)
		}
		if o := ix.dev(ls[i].Dev, ls[i].LossAt); o != 0 { // as recovery-storm's Finish moves them
			ls[i].move(o)
		}
	}
	ls = byTime(ls, func(l *stormLoss) int64 { return l.LossAt }, func(a, b stormLoss) int { return compareLines(a.Ref, b.Ref) })
	fs, rs := t.Flushes, t.Recovered
	for i := range fs {
		if bad(fs[i].Dev) {
			return nil, fmt.Errorf("%s: part %d: a flush names device %d of %d", s.dir, t.Part, fs[i].Dev, ic.Devices)
		}
	}
	for i := range rs {
		if bad(rs[i].Dev) {
			return nil, fmt.Errorf("%s: part %d: a recovered loss names device %d of %d", s.dir, t.Part, rs[i].Dev, ic.Devices)
		}
	}
	onFleetClock(fs, rs, ix) // as backlog's Finish moves them
	out := map[int][]byte{}
	incs := a.Spans
	for k := range incs {
		in := incs[k]
		if in.FirstConnectAt == NoTime {
			continue
		}
		next := int64(math.MaxInt64)
		if k+1 < len(incs) {
			next = incs[k+1].LostAt
		}
		sh := returnShare{Part: t.Part, Inc: k, Back: in.FirstConnectAt, LostAt: in.LostAt}
		sent := false
		if storms {
			lo, _ := slices.BinarySearchFunc(ls, in.LostAt, func(l stormLoss, t int64) int { return cmp.Compare(l.LossAt, t) })
			hi, _ := slices.BinarySearchFunc(ls, in.LastLoss+1, func(l stormLoss, t int64) int { return cmp.Compare(l.LossAt, t) })
			sp := reduceStorm(pol, ls[lo:hi], in.FirstConnectAt, true)
			sh.Storm, sent = &sp, lo < hi
		}
		if t.Backlogs {
			fp := flushPartOf(fs, rs, in, next, a.Base)
			sh.Flush = &fp
			sent = sent || len(fp.Flushes) > 0 || fp.LastConn != in.FirstConnectAt
		}
		if !sent {
			continue
		}
		b, err := encode(&sh)
		if err != nil {
			return nil, fmt.Errorf("%s: part %d: the return of incident %d: %w", s.dir, t.Part, k+1, err)
		}
		out[k] = b
		d.Returns = append(d.Returns, int32(k))
	}
	return out, nil
}

// JudgeStorm judges one incident's return, for recovery-storm and for
// backlog, from what every part tells of it (Detail's shares for that
// incident, in any order), and returns the verdicts, encoded, for the
// finishing step (PutStorm). It drops each of shares (sets it to nil)
// once decoded, and each part's once merged, so as not to hold them
// twice.
func (s *Split) JudgeStorm(shares [][]byte) ([]byte, error) {
	if len(shares) == 0 {
		return nil, fmt.Errorf("%s: an incident's return: no part's share to judge", s.dir)
	}
	ss := make([]returnShare, len(shares))
	for i, b := range shares {
		if err := decode(b, &ss[i]); err != nil {
			return nil, fmt.Errorf("%s: an incident's return: %w", s.dir, err)
		}
		shares[i] = nil
		if sp := ss[i].Storm; sp != nil && sp.MaxHi < ss[i].Back {
			return nil, fmt.Errorf("%s: part %d's share of the return of incident %d: its draws end at %d, before the return at %d", s.dir, ss[i].Part, ss[i].Inc+1, sp.MaxHi, ss[i].Back)
		}
		if ss[i].Inc != ss[0].Inc || ss[i].Back != ss[0].Back || ss[i].LostAt != ss[0].LostAt || (ss[i].Storm == nil) != (ss[0].Storm == nil) || (ss[i].Flush == nil) != (ss[0].Flush == nil) {
			return nil, fmt.Errorf("%s: the return of incident %d judged with incident %d's", s.dir, ss[i].Inc+1, ss[0].Inc+1)
		}
	}
	slices.SortFunc(ss, func(a, b returnShare) int { return a.Part - b.Part })
	first := &ss[0]
	for i := 1; i < len(ss); i++ {
		if ss[i].Part == ss[i-1].Part {
			return nil, fmt.Errorf("%s: part %d's share of the return of incident %d twice", s.dir, ss[i].Part, first.Inc+1)
		}
		if first.Storm != nil {
			first.Storm.merge(ss[i].Storm)
		}
		if first.Flush != nil {
			first.Flush.merge(ss[i].Flush)
		}
		ss[i].Storm, ss[i].Flush = nil, nil // merged: held once
	}
	if judgeProbe != nil {
		judgeProbe()
	}
	j := returnJudged{Inc: int32(first.Inc)}
	if first.Storm != nil {
		first.Storm.settle()
		st, ok := first.Storm.judge(first.Back)
		sj := judgedOf(j.Inc, st, ok)
		j.Storm = &sj
	}
	if first.Flush != nil {
		sortPlaced(first.Flush.Flushes)
		b, ok := first.Flush.judge(first.LostAt)
		bj := bunchJudgedOf(j.Inc, b, ok)
		j.Flush = &bj
	}
	return encode(&j)
}

// judgeProbe, when a benchmark sets it, is called once JudgeStorm has
// merged an incident's shares, with everything it holds still held
// (BenchmarkSplit's judging worker).
var judgeProbe func()

// PutStorm gives the partial one incident's verdicts, as JudgeStorm
// returned them: the finishing step takes each from the partial it was
// put in (one partial may hold them all).
func (p *Partial) PutStorm(b []byte) error {
	if !p.incidentsTaken {
		return fmt.Errorf("partial of part %d: its incidents were not taken apart", p.part)
	}
	var j returnJudged
	if err := decode(b, &j); err != nil {
		return fmt.Errorf("partial of part %d: an incident's return: %w", p.part, err)
	}
	if j.Storm != nil {
		rs := p.k.recoveryStorm()
		if rs == nil || !rs.Apart {
			return fmt.Errorf("partial of part %d: recovery-storm's losses were not taken apart", p.part)
		}
		rs.Judged = append(rs.Judged, *j.Storm)
	}
	if j.Flush != nil {
		bl := p.k.backlog()
		if bl == nil || !bl.Apart {
			return fmt.Errorf("partial of part %d: backlog's flushes were not taken apart", p.part)
		}
		bl.Judged = append(bl.Judged, *j.Flush)
	}
	ic := &p.k.fc.Inc
	ic.Verdicts = append(ic.Verdicts, j.Inc)
	return nil
}

// judgedAll reports an error unless the partials hold one verdict of
// every incident whose return some part sent a share of, and no other.
func judgedAll(parts []*Partial) error {
	expect, judged := map[int32]bool{}, map[int32]bool{}
	for _, p := range parts {
		for _, k := range p.k.fc.Inc.Returns {
			expect[k] = true
		}
	}
	for _, p := range parts {
		for _, k := range p.k.fc.Inc.Verdicts {
			if judged[k] || !expect[k] {
				return fmt.Errorf("a verdict of the return of incident %d that was not asked for, or two", k+1)
			}
			judged[k] = true
		}
	}
	if len(judged) != len(expect) {
		return fmt.Errorf("%d of the %d incidents whose return was sent apart were not judged (JudgeStorm)", len(expect)-len(judged), len(expect))
	}
	return nil
}
