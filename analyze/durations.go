package analyze

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"math"
	"time"

	"github.com/DataDog/sketches-go/ddsketch/mapping"
	"github.com/DataDog/sketches-go/ddsketch/store"

	"github.com/stormaudit/stormaudit/internal/radix"
)

// ExactDurations is how many values a Durations holds one by one; beyond
// it, a sketch.
const ExactDurations = 1 << 16

// exactDurations is ExactDurations, but for tests of the sketch on small
// fleets.
var exactDurations = ExactDurations

// DurationsAccuracy is the relative accuracy of a Durations beyond
// ExactDurations: a percentile it gives lies within this share of the
// true one (nearest rank), above or below.
const DurationsAccuracy = 0.001

// durationsMapping maps a duration (ns) to its sketch bin: bin i holds
// the values in [γ^i, γ^(i+1)), γ = (1+α)/(1-α), and stands for one value,
// within α of each of them (DDSketch, Masson et al., VLDB 2019).
var durationsMapping = func() *mapping.LogarithmicMapping {
	m, err := mapping.NewLogarithmicMapping(DurationsAccuracy)
	if err != nil {
		panic(err)
	}
	return m
}()

// Durations is a multiset of non-negative durations kept for their
// nearest-rank percentiles, and it merges: every value while it holds at
// most ExactDurations, beyond that a DDSketch (github.com/DataDog/
// sketches-go: logarithmic bins of relative accuracy DurationsAccuracy,
// counted; zeros counted apart) and the exact maximum. Which of the two
// it is depends only on how many values it holds, and a sketch's bins
// are counts, the same whatever order the values were added or merged in:
// Check and a Split of many parts give the same figures. The zero value
// is empty and ready to use; it encodes with encoding/gob.
type Durations struct {
	vals  []time.Duration   // every value while exact (sorted once Sort is called)
	bins  *store.DenseStore // beyond ExactDurations: the positive values' bins; nil while exact
	zeros int               // beyond ExactDurations: the zero values
	n     int
	max   time.Duration
}

// DurationsOf returns the durations xs, sorted.
func DurationsOf(xs ...time.Duration) Durations {
	var d Durations
	for _, x := range xs {
		d.Add(x)
	}
	d.Sort()
	return d
}

// Add adds x (a negative x counts as 0).
func (d *Durations) Add(x time.Duration) {
	x = max(x, 0)
	d.n++
	d.max = max(d.max, x)
	if d.bins == nil {
		d.vals = append(d.vals, x)
		if len(d.vals) > exactDurations {
			d.toSketch()
		}
		return
	}
	d.put(x, 1)
}

// put counts n values x in the sketch.
func (d *Durations) put(x time.Duration, n int) {
	if x == 0 {
		d.zeros += n
		return
	}
	d.bins.AddWithCount(durationsMapping.Index(float64(x)), float64(n))
}

// toSketch moves the values into the sketch's bins.
func (d *Durations) toSketch() {
	d.bins = store.NewDenseStore()
	for _, x := range d.vals {
		d.put(x, 1)
	}
	d.vals = nil
}

// Merge adds every value of o to d.
func (d *Durations) Merge(o *Durations) {
	if o.n == 0 {
		return
	}
	d.n += o.n
	d.max = max(d.max, o.max)
	if d.bins == nil && o.bins == nil && d.n <= exactDurations {
		d.vals = append(d.vals, o.vals...)
		return
	}
	if d.bins == nil {
		d.toSketch()
	}
	if o.bins != nil {
		d.bins.MergeWith(o.bins)
		d.zeros += o.zeros
		return
	}
	for _, x := range o.vals {
		d.put(x, 1)
	}
}

// Sort sorts the exact values, which Rank and At need, and lays a
// sketch's bins out as a sketch of the same counts built in one go would
// be (so that two of the same values are equal, however they were merged).
func (d *Durations) Sort() {
	if d.bins == nil {
		radix.Int64s(d.vals)
		return
	}
	b := store.NewDenseStore()
	d.bins.ForEach(func(i int, n float64) bool {
		if n > 0 {
			b.AddWithCount(i, n)
		}
		return false
	})
	d.bins = b
}

// Len returns how many values d holds.
func (d *Durations) Len() int { return d.n }

// Exact reports whether d holds every value (at most ExactDurations):
// its figures are exact, not estimates within DurationsAccuracy.
func (d *Durations) Exact() bool { return d.bins == nil }

// Max returns the largest value, exactly; 0 if none.
func (d *Durations) Max() time.Duration { return d.max }

// Values returns the values, sorted (after Sort), while d is exact; nil
// beyond.
func (d *Durations) Values() []time.Duration { return d.vals }

// Rank returns the nearest-rank p-quantile (0 < p <= 1), 0 if d is
// empty; beyond ExactDurations an estimate within DurationsAccuracy of
// it, relative, and never above the maximum (p = 1: the maximum).
func (d *Durations) Rank(p float64) time.Duration {
	if d.n == 0 {
		return 0
	}
	return d.At(nearestRank(d.n, p))
}

// At returns the k-th smallest value (from 0; 0 <= k < Len), after
// Sort; beyond ExactDurations an estimate within DurationsAccuracy, and
// the maximum for the last.
func (d *Durations) At(k int) time.Duration {
	switch {
	case d.bins == nil:
		return d.vals[k]
	case k == d.n-1:
		return d.max
	case k < d.zeros:
		return 0
	}
	v := durationsMapping.Value(d.bins.KeyAtRank(float64(k - d.zeros)))
	return min(time.Duration(math.Round(v)), d.max)
}

// Fairness returns Jain's index of the values, (Σx)² / (n·Σx²), 1 when
// every value is the same (or all are 0), 0 if there are none; beyond
// ExactDurations, of the sketch's values.
func (d *Durations) Fairness() float64 {
	var sum, sq float64
	if d.bins == nil {
		for _, x := range d.vals {
			sum += x.Seconds()
			sq += x.Seconds() * x.Seconds()
		}
	} else {
		d.bins.ForEach(func(i int, n float64) bool {
			x := durationsMapping.Value(i) / 1e9
			sum += n * x
			sq += n * x * x
			return false
		})
	}
	switch {
	case sq > 0:
		return sum * sum / (float64(d.n) * sq)
	case d.n > 0:
		return 1
	}
	return 0
}

// durationsWire is a Durations as it travels in a Partial: the sketch as
// its non-empty bins, which decode bounded (a bin's index is that of a
// positive int64 of nanoseconds).
type durationsWire struct {
	Vals     []time.Duration
	Bins     []int32
	Counts   []int64
	Zeros, N int
	Max      time.Duration
	Sketch   bool
}

// GobEncode encodes d for a Partial.
func (d *Durations) GobEncode() ([]byte, error) {
	w := durationsWire{Vals: d.vals, Zeros: d.zeros, N: d.n, Max: d.max, Sketch: d.bins != nil}
	if d.bins != nil {
		d.bins.ForEach(func(i int, n float64) bool {
			if n > 0 {
				w.Bins, w.Counts = append(w.Bins, int32(i)), append(w.Counts, int64(n))
			}
			return false
		})
	}
	var b bytes.Buffer
	err := gob.NewEncoder(&b).Encode(&w)
	return b.Bytes(), err
}

// GobDecode decodes what GobEncode wrote, and refuses what it could not
// have written.
func (d *Durations) GobDecode(b []byte) error {
	var w durationsWire
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&w); err != nil {
		return err
	}
	lo, hi := durationsMapping.Index(1), durationsMapping.Index(math.MaxInt64)
	total := len(w.Vals) + w.Zeros
	switch {
	case w.Sketch && len(w.Vals) > 0, !w.Sketch && (w.Zeros != 0 || len(w.Bins) > 0), len(w.Bins) != len(w.Counts), w.Zeros < 0:
		return fmt.Errorf("durations: a sketch and values together, or bins without counts")
	}
	for i, k := range w.Bins {
		if int(k) < lo || int(k) > hi || w.Counts[i] <= 0 {
			return fmt.Errorf("durations: bin %d (count %d) is not one of a duration", k, w.Counts[i])
		}
		total += int(w.Counts[i])
	}
	if total != w.N || w.Max < 0 || !w.Sketch && w.N > exactDurations || w.Sketch && w.N <= exactDurations {
		return fmt.Errorf("durations: %d values counted, %d held", w.N, total)
	}
	*d = Durations{vals: w.Vals, zeros: w.Zeros, n: w.N, max: w.Max}
	if w.Sketch {
		d.bins = store.NewDenseStore()
		for i, k := range w.Bins {
			d.bins.AddWithCount(int(k), float64(w.Counts[i]))
		}
	}
	return nil
}
