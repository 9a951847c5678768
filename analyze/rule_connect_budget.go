package analyze

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/stormaudit/stormaudit/policy"
)

// BudgetResolution is the resolution the connect-budget rule counts
// socket-opens at: its sliding windows start on whole multiples of it.
const BudgetResolution = time.Millisecond

// budgetRule flags the intervals where the fleet's socket-opens in a
// sliding window exceed the broker's declared accept budget. It counts
// opens in a sparse histogram of BudgetResolution buckets: memory grows
// with the time span the opens cover, not with their number.
type budgetRule struct {
	Ready  bool
	On     bool
	Budget float64 // connect_budget_per_s
	Window float64 // connect_budget_window_s
	Hist   *timeHist
}

func (r *budgetRule) merge(next Rule) {
	n := next.(*budgetRule)
	if !r.Ready {
		*r = *n
		return
	}
	r.Hist.merge(n.Hist)
}

func (r *budgetRule) Info() RuleInfo {
	return RuleInfo{ID: "connect-budget", Severity: Error,
		Needs: [][]string{{"connect_budget_per_s"}}, Uses: []string{"connect_budget_window_s"},
		Title: "fleet socket-opens in a sliding window above the broker's accept budget",
		Help: "The fleet's socket-opens, counted in a sliding window of connect_budget_window_s, above " +
			"connect_budget_per_s times the window. A broker pushed past its accept budget refuses or times out " +
			"connects, healthy clients included, and the refused ones retry into the next window."}
}

// budgetOf returns the broker's declared accept budget and its window
// (1 s unless declared), for rule; a budget that is missing or 0 is noted
// once, and ok is false.
func budgetOf(c *Context, rule string) (budget, window float64, ok bool) {
	b, ok := c.Param(rule, "connect_budget_per_s", func(p *policy.Policy) float64 { return p.ConnectBudgetPerS })
	if !ok {
		return 0, 0, false
	}
	if b <= 0 {
		c.Skip(rule, "connect_budget_per_s is 0 (undeclared): nothing to check")
		return 0, 0, false
	}
	window = c.Policy.ConnectBudgetWindowS
	if window <= 0 {
		window = 1
	}
	return b, window, true
}

func (r *budgetRule) init(c *Context) bool {
	if r.Ready {
		return r.On
	}
	r.Ready = true
	if r.Budget, r.Window, r.On = budgetOf(c, "connect-budget"); !r.On {
		return false
	}
	r.Hist = newTimeHist(min(int64(BudgetResolution), max(nanos(r.Window), 1)))
	r.Hist.Keep = true // its opens move onto the fleet's clock (correct)
	return true
}

func (r *budgetRule) Device(c *Context, d *Device) {
	if !r.init(c) {
		return
	}
	id := strings.Clone(d.ID)
	for i := range d.Attempts {
		if a := &d.Attempts[i]; isSessionStage(a.Stage) && openInLog(d, a) { // sockets to the broker
			r.Hist.add(a.Open, d.Events[a.Backoff].Ref, id)
		}
	}
}

// overload is a maximal run of over-budget windows that overlap: the
// interval the broker was pushed past its budget.
type overload struct {
	first, last int64 // the first and last non-empty bucket in it
	until       int64 // the end of its last window, in buckets
	peak        int64 // the most opens in one window
	peakAt      int64 // the first bucket of that window
	windows     int64 // over-budget windows (starting at an open)
}

func (r *budgetRule) Finish(c *Context) {
	if !r.On {
		return
	}
	r.Hist.correct(c.Fleet.clocks())
	k := max(int64(math.Round(r.Window*1e9/float64(r.Hist.Res))), 1)
	limit := math.Round(r.Budget*r.Window*1e9) / 1e9
	var cur *overload
	r.Hist.windows(k, func(first, last, n int64) {
		if float64(n) <= limit {
			return
		}
		if cur != nil && first < cur.until {
			cur.last, cur.until, cur.windows = max(cur.last, last), first+k, cur.windows+1
			if n > cur.peak {
				cur.peak, cur.peakAt = n, first
			}
			return
		}
		if cur != nil {
			c.Report(r.finding(c, cur, k, limit))
		}
		cur = &overload{first: first, last: last, until: first + k, peak: n, peakAt: first, windows: 1}
	})
	if cur != nil {
		c.Report(r.finding(c, cur, k, limit))
	}
}

func (r *budgetRule) finding(c *Context, o *overload, k int64, limit float64) Finding {
	res := r.Hist.Res
	from, to := o.peakAt*res, (o.peakAt+k)*res
	w := durS(k * res)
	msg := fmt.Sprintf("%d socket-opens in the %s s from %s, above the broker's budget of %s per %s s (connect_budget_per_s %s)",
		o.peak, w, timeText(from), fmtNum(limit), w, fmtNum(r.Budget))
	var x strings.Builder
	fmt.Fprintf(&x, "connect_budget_per_s = %s and connect_budget_window_s = %s (%s): at most %s × %s = %s socket-opens in any %s s window. ",
		fmtNum(r.Budget), fmtNum(r.Window), budgetOrigin(c), fmtNum(r.Budget), fmtNum(r.Window), fmtNum(limit), w)
	fmt.Fprintf(&x, "Counting the fleet's socket-opens (each the backoff_wait's recorded_at + backoff_delay_s + any rate_limited_wait delays) "+
		"in %s s windows that start on whole multiples of %s s, %d window(s) held more than %s between %s and %s. ",
		w, durS(res), o.windows, fmtNum(limit), timeText(o.first*res), timeText((o.last+1)*res))
	fmt.Fprintf(&x, "The peak: %d socket-opens in [%s, %s), %.1f× the budget.", o.peak, timeText(from), timeText(to), float64(o.peak)/limit)
	samples := r.Hist.samplesIn(from, to, MaxRefs)
	x.WriteString(sampleList(samples, 5))
	var refs []Ref
	for _, s := range samples {
		refs = append(refs, s.Ref)
	}
	return Finding{Rule: "connect-budget", Kind: "connect-budget/over-budget", Severity: Error, Device: Fleet, Start: o.first * res, End: (o.last + 1) * res,
		Message: msg, Explanation: x.String(), Records: refs}
}

// sampleList says " Among them: dev at T, ..." for up to max samples.
func sampleList(samples []histSample, max int) string {
	if len(samples) == 0 {
		return ""
	}
	var parts []string
	for _, s := range samples[:min(len(samples), max)] {
		parts = append(parts, s.Dev+" at "+timeText(s.At))
	}
	return " Among them: " + strings.Join(parts, ", ") + "."
}

// budgetOrigin says whether the window was declared or is the default.
func budgetOrigin(c *Context) string {
	if c.Policy.Declared("connect_budget_window_s") {
		return "declared"
	}
	return "the budget declared, the window its default"
}

// histChunkLen is the number of buckets in one chunk of a timeHist, and
// histSamples the records a chunk keeps as examples.
const (
	histChunkLen = 64
	histSamples  = 8
)

// timeHist counts events in buckets of res nanoseconds. Buckets come in
// chunks of histChunkLen, allocated only where events lie, so memory
// grows with the time the events cover, not with their number. Each chunk
// keeps the first few events it saw as examples for reports.
type timeHist struct {
	Res    int64
	Chunks map[int64]*histChunk
	// Kept holds each device's event times, on its own clock, while it
	// has at most KeptPerDevice of them (nil once it has more), so that
	// correct can move them onto the fleet's clock: memory grows with the
	// devices, not their records. Only when Keep is set (its device ids
	// must then be copies that pin no batch).
	Keep bool
	Kept map[string][]int64
}

// KeptPerDevice is how many of a device's events a timeHist keeps to
// correct for its clock offset; a device with more is left on its own
// clock there.
const KeptPerDevice = 64

// correct moves the events of the devices whose clocks ix says are off
// onto the fleet's clock, with the examples kept of them.
func (h *timeHist) correct(ix clockIndex) {
	if ix.byName == nil {
		return
	}
	for dev, ts := range h.Kept {
		if ix.byName[dev] == nil {
			continue
		}
		for _, t := range ts {
			if o := ix.name(dev, t); o != 0 {
				h.bump(t, ^uint32(0)) // -1
				h.bump(t-o, 1)
				h.moveSample(dev, t, t-o)
			}
		}
	}
}

// bump adds d (^uint32(0) for -1) to the count of at's bucket.
func (h *timeHist) bump(at int64, d uint32) {
	ch, i := h.chunk(at)
	ch.N[i] += d
}

// chunk returns the chunk of at's bucket, made if need be, and the
// bucket's index in it.
func (h *timeHist) chunk(at int64) (*histChunk, int64) {
	b := floorDiv(at, h.Res)
	key := floorDiv(b, histChunkLen)
	ch := h.Chunks[key]
	if ch == nil {
		ch = &histChunk{}
		h.Chunks[key] = ch
	}
	return ch, b - key*histChunkLen
}

// moveSample moves the example of dev at from to to, if one was kept.
func (h *timeHist) moveSample(dev string, from, to int64) {
	key := floorDiv(floorDiv(from, h.Res), histChunkLen)
	if ch := h.Chunks[key]; ch != nil {
		for i := range ch.Samples {
			if s := &ch.Samples[i]; s.Dev == dev && s.At == from {
				s.At = to
				return
			}
		}
	}
}

// merge adds the counts of next, a histogram of the same resolution, and
// its samples while a chunk has room for them.
func (h *timeHist) merge(next *timeHist) {
	if h == nil || next == nil {
		return
	}
	if h.Chunks == nil {
		h.Chunks = map[int64]*histChunk{}
	}
	for key, nc := range next.Chunks {
		ch := h.Chunks[key]
		if ch == nil {
			h.Chunks[key] = nc
			continue
		}
		for i, n := range nc.N {
			ch.N[i] += n
		}
		room := max(histSamples-len(ch.Samples), 0)
		ch.Samples = append(ch.Samples, nc.Samples[:min(room, len(nc.Samples))]...)
	}
	for dev, ts := range next.Kept {
		if h.Kept == nil {
			h.Kept = map[string][]int64{}
		}
		h.Kept[dev] = ts
	}
}

type histChunk struct {
	N       [histChunkLen]uint32
	Samples []histSample
}

// histSample is an event kept as an example: its time, record and device.
type histSample struct {
	At  int64
	Ref Ref
	Dev string
}

func newTimeHist(res int64) *timeHist {
	return &timeHist{Res: res, Chunks: map[int64]*histChunk{}}
}

func (h *timeHist) add(at int64, ref Ref, dev string) {
	ch, i := h.chunk(at)
	ch.N[i]++
	if len(ch.Samples) < histSamples {
		ch.Samples = append(ch.Samples, histSample{At: at, Ref: ref, Dev: dev})
	}
	if !h.Keep {
		return
	}
	if h.Kept == nil {
		h.Kept = map[string][]int64{}
	}
	switch ts, seen := h.Kept[dev]; {
	case !seen:
		h.Kept[dev] = []int64{at}
	case ts != nil && len(ts) < KeptPerDevice:
		h.Kept[dev] = append(ts, at)
	case ts != nil:
		h.Kept[dev] = nil // too many to keep: left on its own clock
	}
}

// histCursor walks the non-empty buckets of a timeHist in order.
type histCursor struct {
	keys   []int64
	chunks []*histChunk
	ki, bi int
}

func (h *timeHist) cursor() *histCursor {
	c := &histCursor{keys: slices.Sorted(maps.Keys(h.Chunks))}
	for _, k := range c.keys {
		c.chunks = append(c.chunks, h.Chunks[k])
	}
	return c
}

// next returns the next non-empty bucket and its count.
func (c *histCursor) next() (bucket, n int64, ok bool) {
	for c.ki < len(c.keys) {
		ch := c.chunks[c.ki]
		for c.bi < histChunkLen {
			i := c.bi
			c.bi++
			if ch.N[i] > 0 {
				return c.keys[c.ki]*histChunkLen + int64(i), int64(ch.N[i]), true
			}
		}
		c.ki, c.bi = c.ki+1, 0
	}
	return 0, 0, false
}

// windows calls fn, in time order, for each window of k buckets that
// starts at a non-empty bucket: with its first bucket, the last
// non-empty bucket in it, and the events it holds. A window that starts
// at an empty bucket holds no more events than the window starting at
// the next non-empty one, so these windows hold every maximum.
func (h *timeHist) windows(k int64, fn func(first, last, n int64)) {
	lead, trail := h.cursor(), h.cursor()
	lb, ln, lok := lead.next()
	var sum, last int64
	for {
		b, n, ok := trail.next()
		if !ok {
			return
		}
		for lok && lb < b+k {
			sum, last = sum+ln, lb
			lb, ln, lok = lead.next()
		}
		fn(b, last, sum)
		sum -= n
	}
}

// samplesIn returns up to max of the examples kept with times in
// [from, to), earliest first.
func (h *timeHist) samplesIn(from, to int64, max int) []histSample {
	var out []histSample
	for key := floorDiv(floorDiv(from, h.Res), histChunkLen); key*histChunkLen*h.Res < to; key++ {
		if ch := h.Chunks[key]; ch != nil {
			for _, s := range ch.Samples {
				if s.At >= from && s.At < to {
					out = append(out, s)
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b histSample) int { return cmp.Or(cmp.Compare(a.At, b.At), compareRefs(a.Ref, b.Ref)) })
	return out[:min(len(out), max)]
}
