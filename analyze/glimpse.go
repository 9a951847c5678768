package analyze

import (
	"cmp"
	"slices"
	"time"
)

// Glimpse is the fleet as far as a survey has read it, for a front end
// to draw before the check is done: the records and devices read, and
// their activity per whole second. It is taken before the check's
// finishing step, so it knows no incident, finding or clock offset: each
// device's activity stands on its own clock.
type Glimpse struct {
	Devices int   // devices read
	Records int64 // their records
	// Seconds are the seconds with any socket-open, connect or flush, in
	// time order, each a Bucket one second wide.
	Seconds []Bucket
}

// Span returns the first and last second with activity (their starts,
// Unix ns); ok is false when there is none.
func (g *Glimpse) Span() (first, last int64, ok bool) {
	if len(g.Seconds) == 0 {
		return 0, 0, false
	}
	return g.Seconds[0].Start, g.Seconds[len(g.Seconds)-1].Start, true
}

// Histogram returns n buckets of width from from, as Activity.Histogram
// does. A glimpse counts whole seconds: width must be a whole number of
// seconds and from a whole second, or the buckets are off by the part of
// a second.
func (g *Glimpse) Histogram(from int64, width time.Duration, n int) []Bucket {
	out := make([]Bucket, n)
	w := int64(max(width, time.Second))
	for b := range out {
		out[b].Start = from + int64(b)*w
	}
	i, _ := slices.BinarySearchFunc(g.Seconds, from, func(s Bucket, t int64) int { return cmp.Compare(s.Start, t) })
	for _, s := range g.Seconds[i:] {
		b := (s.Start - from) / w
		if b >= int64(n) {
			break
		}
		o := &out[b]
		for k := range o.Opens {
			o.Opens[k] += s.Opens[k]
		}
		o.Connects += s.Connects
		o.Flushed = addSat(o.Flushed, s.Flushed)
	}
	return out
}

// glimpser keeps a survey's glimpse as the devices come, and hands a copy
// to watch every so often: after the first device, then at most once an
// interval, and after every device once all the records the survey
// expects (total, math.MaxInt64 when it cannot tell) are read.
type glimpser struct {
	watch func(*Glimpse)
	every time.Duration
	total int64
	last  time.Time
	g     Glimpse
	at    map[int64]int // a second's index in g.Seconds
	cache [4096]struct {
		s int64 // the second
		k int   // its index in g.Seconds, plus 1 (0: none)
	}
	// the activity's opens, connects and flushes already counted
	opens, conns, flushes int
}

// add counts device d, and what the survey gathered since the last call:
// act's opens and flushes and the connects conns past those counted.
func (gl *glimpser) add(d *Device, act *Activity, conns []Open) {
	gl.g.Devices++
	gl.g.Records += int64(len(d.Events))
	for _, o := range act.Opens[gl.opens:] {
		gl.second(o.At).Opens[o.Kind]++
	}
	for _, c := range conns[gl.conns:] {
		gl.second(c.At).Connects++
	}
	for _, f := range act.Flushes[gl.flushes:] {
		s := gl.second(f.At)
		s.Flushed = addSat(s.Flushed, f.N)
	}
	gl.opens, gl.conns, gl.flushes = len(act.Opens), len(conns), len(act.Flushes)
	now := time.Now()
	if gl.g.Devices > 1 && now.Sub(gl.last) < gl.every && gl.g.Records < gl.total {
		return
	}
	gl.last = now
	g := gl.g
	g.Seconds = slices.Clone(gl.g.Seconds)
	slices.SortFunc(g.Seconds, func(a, b Bucket) int { return cmp.Compare(a.Start, b.Start) })
	gl.watch(&g)
}

// second returns the bucket of the second holding t, made if new. A
// direct-mapped cache of the seconds' indices (a glimpse's seconds are
// mostly a span of an hour or so) spares most lookups in the map.
func (gl *glimpser) second(t int64) *Bucket {
	s := floorDiv(t, int64(time.Second))
	c := &gl.cache[uint64(s)%uint64(len(gl.cache))]
	if c.k != 0 && c.s == s {
		return &gl.g.Seconds[c.k-1]
	}
	k, ok := gl.at[s]
	if !ok {
		if gl.at == nil {
			gl.at = map[int64]int{}
		}
		k = len(gl.g.Seconds)
		gl.at[s] = k
		gl.g.Seconds = append(gl.g.Seconds, Bucket{Start: s * int64(time.Second)})
	}
	c.s, c.k = s, k+1
	return &gl.g.Seconds[k]
}
