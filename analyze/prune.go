package analyze

import (
	"math"
	"slices"
	"time"

	"github.com/stormaudit/stormaudit/internal/radix"
)

// MedianTTR returns the nearest-rank median of the times to recover of
// the partial's part alone (FleetStats.TTR50 had it been the whole
// fleet); ok is false when no loss of it recovered.
//
// The fleet's median is never below the least of its parts' medians: in
// each part fewer than half its times lie below its own median, so fewer
// than half of all lie below the least of them, and the fleet's median,
// the ⌈n/2⌉-th smallest, is at least that. Prune takes that bound.
func (p *Partial) MedianTTR() (time.Duration, bool) {
	ttr := p.k.fc.St.TTR
	if len(ttr) == 0 {
		return 0, false
	}
	sorted := slices.Clone(ttr)
	radix.Int64s(sorted)
	return rank(sorted, 0.5), true
}

// Prune drops from the partial what its Split's Finish could not report
// when the fleet's median time to recover is at least median (the least
// of every part's MedianTTR), and returns how many devices it dropped:
// starvation's devices that recovered within 3 × median, inside the
// bound a recovered device is held to (at least 3 × the fleet's median).
// The result of Finish is the same; the finishing step decodes less.
func (p *Partial) Prune(median time.Duration) int {
	bound := int64(math.MaxInt64)
	if median < math.MaxInt64/3 {
		bound = 3 * int64(median)
	}
	n := 0
	for _, r := range p.k.rules {
		if s, ok := r.(*starvation); ok {
			before := len(s.Devs)
			s.Devs = slices.DeleteFunc(s.Devs, func(d starveDevice) bool { return d.Until != NoTime && d.Until-d.From <= bound })
			n += before - len(s.Devs)
		}
	}
	return n
}
