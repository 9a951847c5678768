package analyze

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// starvation holds every device that lost its connection until the
// fleet's bounds are known, and reports a device that recovered only
// past 3 × the fleet's median time to recover, or more. A distributed
// driver need not ship those to the one place that finishes:
// Partial.TakeRecovered takes the recovered ones out of each partial with
// the part's own median time to recover (Partial.MedianTTR);
// Split.KeepRecovered, given the least of every part's median, keeps
// those past 3 × it; Partial.PutRecovered puts them back before Finish.
// The result is the one Check gives: the fleet's median is never below
// the least of its parts' medians (in each part fewer than half its times
// lie below its own median, so fewer than half of all lie below the least
// of them, and the fleet's median, the ⌈n/2⌉-th smallest, is at least
// that), so a device dropped could not have been reported.

// MedianTTR returns the nearest-rank median of the times to recover of
// the partial's part alone (FleetStats.TTR50 had it been the whole
// fleet; an estimate beyond ExactDurations); ok is false when no loss of
// it recovered.
func (p *Partial) MedianTTR() (time.Duration, bool) {
	ttr := &p.k.fc.St.TTR
	if ttr.Len() == 0 {
		return 0, false
	}
	ttr.Sort() // in place: the fleet's figures sort the times again once merged
	return ttr.Rank(0.5), true
}

// recoveredPart is what TakeRecovered encodes: starvation's recovered
// devices of one part.
type recoveredPart struct {
	Part int
	Devs []starveDevice
	IDs  map[int32]string // their ids, by ordinal: the finishing step may not hold the part's (TakeNames)
}

// TakeRecovered removes starvation's devices that recovered from the
// partial and returns them, encoded; nil if starvation does not run. A
// partial they were taken from needs what KeepRecovered keeps of them
// back (PutRecovered) before its Split's Finish.
func (p *Partial) TakeRecovered() ([]byte, error) {
	r := p.starvation()
	if r == nil {
		return nil, nil
	}
	rp := recoveredPart{Part: p.part, IDs: map[int32]string{}}
	r.Devs = slices.DeleteFunc(r.Devs, func(d starveDevice) bool {
		if d.Until != NoTime {
			rp.Devs, rp.IDs[d.Dev] = append(rp.Devs, d), p.k.fc.id(d.Dev)
		}
		return d.Until != NoTime
	})
	b, err := encode(&rp)
	if err != nil {
		return nil, fmt.Errorf("partial of part %d: starvation: %w", p.part, err)
	}
	p.recoveredTaken = true
	return b, nil
}

// KeepRecovered returns what TakeRecovered took of one part, encoded,
// without the devices that recovered within 3 × median × (1-α)/(1+α),
// median the least of every part's MedianTTR and α DurationsAccuracy:
// below the bound a recovered device is held to. (The factor covers
// estimates: a part's estimated median is at most 1+α times its true
// one, and the fleet's at least 1-α times its own, which is at least the
// least part's true median.)
func (s *Split) KeepRecovered(b []byte, median time.Duration) ([]byte, error) {
	rp, err := decodeRecovered(b)
	if err != nil {
		return nil, err
	}
	bound := int64(math.MaxInt64)
	if f := 3 * float64(median) * (1 - DurationsAccuracy) / (1 + DurationsAccuracy); f < math.MaxInt64/2 {
		bound = int64(f)
	}
	rp.Devs = slices.DeleteFunc(rp.Devs, func(d starveDevice) bool { return d.Until-d.From <= bound })
	ids := map[int32]string{}
	for _, d := range rp.Devs {
		ids[d.Dev] = rp.IDs[d.Dev]
	}
	rp.IDs = ids
	return encode(&rp)
}

// PutRecovered puts back into the partial what KeepRecovered kept of the
// devices TakeRecovered took from it, in device order.
func (p *Partial) PutRecovered(b []byte) error {
	r := p.starvation()
	if r == nil || !p.recoveredTaken {
		return fmt.Errorf("partial of part %d: no recovered devices were taken from it", p.part)
	}
	rp, err := decodeRecovered(b)
	if err != nil {
		return err
	}
	if rp.Part != p.part {
		return fmt.Errorf("partial of part %d: recovered devices of part %d", p.part, rp.Part)
	}
	fc := p.k.fc
	for _, d := range rp.Devs {
		if d.Dev < 0 || d.Dev >= r.Devices || d.Until == NoTime {
			return fmt.Errorf("partial of part %d: starvation: a recovered device %d of %d", p.part, d.Dev, r.Devices)
		}
		if id, ok := rp.IDs[d.Dev]; !ok {
			return fmt.Errorf("partial of part %d: starvation: a recovered device %d without its id", p.part, d.Dev)
		} else if fc.NamesTaken {
			fc.Named[d.Dev] = id
		}
	}
	all := append(r.Devs, rp.Devs...)
	slices.SortFunc(all, func(a, b starveDevice) int { return cmp.Compare(a.Dev, b.Dev) }) // the order the part gathered them in: one a device
	r.Devs, p.recoveredTaken = all, false
	return nil
}

func decodeRecovered(b []byte) (recoveredPart, error) {
	var rp recoveredPart
	if err := decode(b, &rp); err != nil {
		return rp, fmt.Errorf("recovered devices: %w", err)
	}
	return rp, nil
}

// starvation returns the partial's starvation rule, nil if it does not
// run.
func (p *Partial) starvation() *starvation { return ruleOf[*starvation](p.k) }
