package analyze

import (
	"fmt"
	"path/filepath"
	"slices"
)

// A Finisher finishes a split check from its partials given one at a
// time, in any order, as a distributed run's finishing worker receives
// them: it merges each into those of the parts before it as soon as all
// of those have come, so it holds what is merged and only the partials
// that came before their turn, not every part's at once. Put back into
// each partial what was taken from it before it is added.
type Finisher struct {
	s         *Split
	first     *Partial // part 0, which the others merge into; nil until it comes
	next      int      // the part that merges next
	early     map[int]*Partial
	counts    []int32 // each merged part's devices, which resync's fires name
	figuresOf []int   // the parts whose figures were put into a partial merged
	figuresN  int64   // and their devices
}

// NewFinisher returns a Finisher of s's partials.
func (s *Split) NewFinisher() *Finisher { return &Finisher{s: s, early: map[int]*Partial{}} }

// Add gives f the partial of one part (or Check's one partial of every
// part), merging it if every part before it has come.
func (f *Finisher) Add(p *Partial) error {
	s := f.s
	if p.fingerprint != s.fingerprint {
		return fmt.Errorf("%s: part %d: made with other options (rules, thresholds, window or policy) than this check", s.dir, p.part)
	}
	if p.part == -1 && f.first == nil && len(f.early) == 0 { // every part in one
		return f.merge(p)
	}
	if p.part < f.next || p.part >= s.Parts() || f.early[p.part] != nil || f.first != nil && f.first.part == -1 {
		return fmt.Errorf("%s: part %d given twice, or no part of %d parts", s.dir, p.part, s.Parts())
	}
	f.early[p.part] = p
	for q := f.early[f.next]; q != nil; q = f.early[f.next] {
		delete(f.early, f.next)
		if err := f.merge(q); err != nil {
			return err
		}
		f.next++
	}
	return nil
}

// merge merges p, whose turn it is, into the parts before it.
func (f *Finisher) merge(p *Partial) error {
	first := f.first
	if first == nil {
		first = p
	}
	if err := f.s.mergeable(p, first); err != nil {
		return err
	}
	if p.figuresOf != nil {
		if f.figuresOf != nil {
			return fmt.Errorf("%s: figures put into two partials", f.s.dir)
		}
		f.figuresOf, f.figuresN = p.figuresOf, p.figuresDevices
	}
	if r := p.resync(); r != nil {
		f.counts = append(f.counts, r.Devices)
	}
	if f.first == nil {
		f.first = p
		return nil
	}
	f.first.k.merge(p.k)
	p.k = nil // used up
	return nil
}

// Finish runs every rule's Finish on the partials of every part, merged,
// and returns the result; fires holds what KeepFires kept of every shard
// when the parts' resync fires were taken (TakeFires).
func (f *Finisher) Finish(fires ...[]byte) (*Result, error) {
	s := f.s
	if f.first == nil || len(f.early) > 0 || f.first.part != -1 && f.next != s.Parts() {
		return nil, fmt.Errorf("%s: expected the partials of %d parts, found %d", s.dir, s.Parts(), f.next+len(f.early))
	}
	kept, err := f.s.keptOf(f.first, fires, f.counts)
	if err != nil {
		return nil, err
	}
	return f.finish(kept)
}

// keptOf returns the fires KeepFires kept, fires, of parts whose devices
// counts holds, and first the partial of part 0.
func (s *Split) keptOf(first *Partial, fires [][]byte, counts []int32) ([]shardFire, error) {
	if !first.firesTaken {
		if len(fires) > 0 {
			return nil, fmt.Errorf("%s: resync fires given, but no part's were taken", s.dir)
		}
		return nil, nil
	}
	kept, err := keptFires(fires, counts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.dir, err)
	}
	return kept, nil
}

// finish finishes the merged partials with the fires kept.
func (f *Finisher) finish(kept []shardFire) (*Result, error) {
	s, first := f.s, f.first
	if err := judgedAll([]*Partial{first}); err != nil {
		return nil, fmt.Errorf("%s: %w", s.dir, err)
	}
	if all := partsTo(f.next); first.figuresTaken && !slices.Equal(f.figuresOf, all) {
		return nil, fmt.Errorf("%s: figures of parts %v put back, expected those of parts %v (MergeFigures, PutFigures)", s.dir, f.figuresOf, all)
	}
	if first.figuresTaken && f.figuresN != int64(first.k.fc.St.Devices) {
		return nil, fmt.Errorf("%s: figures of %d devices put back, and the parts read %d", s.dir, f.figuresN, first.k.fc.St.Devices)
	}
	k := first.k
	if first.firesTaken {
		restoreFires(first.resync(), kept, f.counts)
	}
	if err := k.namesHeld(); err != nil {
		return nil, fmt.Errorf("%s: %w", s.dir, err)
	}
	if inf := k.fc.Inc.Inferred; inf != nil {
		if err := k.fc.Inc.peaksHeld(len(inf.Incidents)); err != nil {
			return nil, fmt.Errorf("%s: %w", s.dir, err)
		}
	}
	k.changedLogs, k.unlisted = s.k.changedLogs, s.k.unlisted
	res := k.finish(s.dir, s.man, first.sources)
	for _, file := range s.man.Files {
		res.Files = append(res.Files, filepath.Join(s.dir, file.Name))
	}
	return res, nil
}

// partsTo returns the parts 0 to n-1.
func partsTo(n int) []int {
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	return all
}

// FinishWindow is the window of parts FinishInPasses decodes in a pass
// that stormaudit-beam's finishing worker uses, and FinishPasses the
// most passes it makes: with more than FinishWindow × FinishPasses parts
// the window widens, so that the side input is read at most
// FinishPasses times (and a pass holds at most 1/FinishPasses of it).
const (
	FinishWindow = 8
	FinishPasses = 8
)

// FinishInPasses finishes a split check whose partials it reads from a
// source it can read again, as a finishing worker reads a side input
// without holding it: each pass reads every partial (each calls yield
// with each one's part and bytes, in any order, and stops on an error of
// yield), decodes only those of the next window parts, puts back what
// was taken from them (put) and merges them, so that no more than window
// decoded partials are held at once, in ⌈parts/window⌉ passes, at most
// FinishPasses (the window widens to keep to that). fires is what
// KeepFires kept of every shard, if the fires were taken.
func (s *Split) FinishInPasses(window int, each func(yield func(part int, data []byte) error) error, put func(*Partial) error, fires ...[]byte) (*Result, error) {
	window = max(window, 1, (s.Parts()+FinishPasses-1)/FinishPasses)
	f := s.NewFinisher()
	for f.next < s.Parts() {
		lo, hi := f.next, min(f.next+window, s.Parts())
		err := each(func(part int, data []byte) error {
			if part < 0 || part >= s.Parts() {
				return fmt.Errorf("%s: a partial of part %d, of %d parts", s.dir, part, s.Parts())
			}
			if part < lo || part >= hi {
				return nil // another pass's
			}
			p, err := s.Decode(data)
			if err != nil {
				return err
			}
			if p.part != part {
				return fmt.Errorf("%s: the partial of part %d given as part %d", s.dir, p.part, part)
			}
			if err := put(p); err != nil {
				return err
			}
			return f.Add(p)
		})
		if err != nil {
			return nil, err
		}
		if f.next < hi {
			return nil, fmt.Errorf("%s: expected the partials of %d parts, part %d is missing", s.dir, s.Parts(), f.next)
		}
	}
	return f.Finish(fires...)
}
