package analyze

import (
	"fmt"
	"slices"
)

// The fleet's times to recover (FleetStats.TTR) and starvation's waits
// hold a value for every recovered loss and device in each part, up to
// ExactDurations. They merge in any order (Durations.Merge), so a
// distributed driver need not ship every part's to the one place that
// finishes: Partial.TakeFigures takes them out of each partial,
// MergeFigures merges two parts' (a combine, in any order and grouping),
// and Partial.PutFigures puts every part's, merged, into one partial
// before Finish. The one place then holds at most ExactDurations values,
// or a sketch, of each, whatever the parts.

// figuresPart is what TakeFigures encodes, and MergeFigures merges: the
// figures of the parts it names.
type figuresPart struct {
	Parts   []int // sorted, each once
	TTR     Durations
	Waits   Durations // starvation's; empty if it does not run
	Devices int64     // the parts' devices
	IDs     []string  // their ids, sorted, while Devices <= MaxIDs (FleetStats.IDs); nil beyond
}

// TakeFigures removes the fleet's times to recover and starvation's waits
// from the partial and returns them, encoded. A partial they were taken
// from needs every part's back, merged, in one partial (PutFigures)
// before its Split's Finish. Call MedianTTR before it.
func (p *Partial) TakeFigures() ([]byte, error) {
	fc := p.k.fc
	if p.figuresTaken || fc.NamesTaken {
		return nil, fmt.Errorf("partial of part %d: figures: taken twice, or after its device ids (TakeNames)", p.part)
	}
	f := figuresPart{Parts: []int{p.part}, Devices: int64(fc.St.Devices)}
	if f.Devices <= MaxIDs {
		f.IDs = slices.Sorted(slices.Values(fc.Names))
	}
	f.TTR, fc.St.TTR = fc.St.TTR, Durations{}
	if r := p.starvation(); r != nil {
		f.Waits, r.Waits = r.Waits, Durations{}
	}
	b, err := encode(&f)
	if err != nil {
		return nil, fmt.Errorf("partial of part %d: figures: %w", p.part, err)
	}
	p.figuresTaken = true
	return b, nil
}

// MergeFigures merges the figures of two disjoint sets of parts, as
// TakeFigures or MergeFigures returned them, and returns those of both.
func MergeFigures(a, b []byte) ([]byte, error) {
	fa, err := decodeFigures(a)
	if err != nil {
		return nil, err
	}
	fb, err := decodeFigures(b)
	if err != nil {
		return nil, err
	}
	parts := append(fa.Parts, fb.Parts...)
	slices.Sort(parts)
	if len(slices.Compact(slices.Clone(parts))) != len(parts) {
		return nil, fmt.Errorf("figures: the figures of a part merged twice (parts %v and %v)", fa.Parts, fb.Parts)
	}
	fa.Parts, fa.Devices = parts, fa.Devices+fb.Devices
	ids := append(fa.IDs, fb.IDs...)
	fa.IDs = nil
	if fa.Devices <= MaxIDs {
		slices.Sort(ids)
		fa.IDs = ids
	}
	fa.TTR.Merge(&fb.TTR)
	fa.Waits.Merge(&fb.Waits)
	return encode(&fa)
}

// PutFigures puts the figures of every part, merged (MergeFigures), into
// the partial: the finishing step takes them from the one partial they
// were put in.
func (p *Partial) PutFigures(b []byte) error {
	if !p.figuresTaken {
		return fmt.Errorf("partial of part %d: its figures were not taken", p.part)
	}
	if p.figuresOf != nil {
		return fmt.Errorf("partial of part %d: figures put in twice", p.part)
	}
	f, err := decodeFigures(b)
	if err != nil {
		return fmt.Errorf("partial of part %d: %w", p.part, err)
	}
	r := p.starvation()
	if r == nil && f.Waits.Len() > 0 {
		return fmt.Errorf("partial of part %d: starvation's waits, and starvation does not run", p.part)
	}
	p.k.fc.St.TTR.Merge(&f.TTR)
	if r != nil {
		r.Waits.Merge(&f.Waits)
	}
	p.figuresOf, p.figuresDevices, p.k.fc.ids = f.Parts, f.Devices, f.IDs // ids nil: beyond MaxIDs, or no device
	return nil
}

// decodeFigures decodes figures and checks that they name each part once.
func decodeFigures(b []byte) (figuresPart, error) {
	var f figuresPart
	if err := decode(b, &f); err != nil {
		return f, fmt.Errorf("figures: %w", err)
	}
	if len(f.Parts) == 0 || !slices.IsSorted(f.Parts) || len(slices.Compact(slices.Clone(f.Parts))) != len(f.Parts) {
		return f, fmt.Errorf("figures: of parts %v: expected each part once, in order", f.Parts)
	}
	if f.Devices < 0 || f.Devices <= MaxIDs && int64(len(f.IDs)) != f.Devices || f.Devices > MaxIDs && f.IDs != nil {
		return f, fmt.Errorf("figures: %d ids of %d devices: expected every device's up to %d devices, none beyond", len(f.IDs), f.Devices, MaxIDs)
	}
	return f, nil
}

// figuresPutAll reports an error unless, when the parts' figures were
// taken, one partial holds those of every part, merged, and none other.
func figuresPutAll(parts []*Partial) error {
	if err := takenOfAll(parts, "figures", func(p *Partial) bool { return p.figuresTaken }); err != nil {
		return err
	}
	var put []int
	for _, p := range parts {
		if p.figuresOf != nil {
			if put != nil {
				return fmt.Errorf("figures put into two partials")
			}
			put = p.figuresOf
		}
	}
	if !parts[0].figuresTaken {
		return nil
	}
	all := make([]int, len(parts))
	for i, p := range parts {
		all[i] = p.part
	}
	if !slices.Equal(put, all) {
		return fmt.Errorf("figures of parts %v put back, expected those of parts %v (MergeFigures, PutFigures)", put, all)
	}
	return nil
}
