package analyze

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/dataset"
)

// Overview is a checked dataset as a front end browses it: the check's
// result, the fleet's activity over time and each device's figures, all
// gathered in the check's one pass over the dataset.
type Overview struct {
	Result   *Result
	Activity Activity
	// Devices holds every device's figures in dataset order (sorted by
	// client_id).
	Devices []DeviceFigures
}

// DeviceFigures are the figures of one device that a device list shows.
type DeviceFigures struct {
	ID       string
	Records  int
	Attempts int // socket-opens the log shows (as FleetStats.Attempts counts them)
	Failed   int // of those, the ones refused or failed
	Losses   int // connections lost (session-stage episodes that are losses)
	// TTR is the longest time the device took to recover from a loss, -1
	// when it recovered from none; Down reports whether its records end
	// in an outage (a loss, or a start that never connected).
	TTR  time.Duration
	Down bool
	// Findings counts the findings about the device, Worst is their worst
	// severity (0 when none).
	Findings int
	Worst    Severity
	// First and Last are the earliest and latest recorded_at of its
	// records, Unix ns.
	First, Last int64
	// Opens holds the times of its socket-opens, sorted.
	Opens []int64
}

// OpenKind is what became of a socket-open.
type OpenKind uint8

// The kinds of socket-open.
const (
	OpenConnected OpenKind = iota // the broker accepted the connect
	OpenRefused                   // the broker refused it (a CONNACK with an error)
	OpenFailed                    // it failed otherwise (attempt_failed, or the device gave up or stopped)
	OpenPending                   // no outcome was recorded
	NumOpenKinds
)

var openKindNames = [NumOpenKinds]string{"connected", "refused", "failed", "no outcome"}

// String returns the kind's name.
func (k OpenKind) String() string {
	if k < NumOpenKinds {
		return openKindNames[k]
	}
	return "OpenKind(?)"
}

// Open is one socket-open of the fleet.
type Open struct {
	At    int64 // Unix ns
	Kind  OpenKind
	Stage auditfmt.Stage // link, address or session (a record without one is of the session)
	dev   int32          // the device's index in Overview.Devices (its clock offset's key)
}

// Activity is what the fleet did over time, kept as sorted instants so
// that a histogram of any bucket width is exact.
type Activity struct {
	Opens    []Open  // socket-opens, sorted by time
	Connects []int64 // connected records of the session stage, sorted
	Flushes  []Flush // outbox messages flushed, placed as Device.Flushes places them, sorted
}

// Flush is N outbox messages flushed at At (Unix ns).
type Flush struct {
	At, N int64
	dev   int32 // as Open's
}

// Bucket is one bar of a histogram: the socket-opens by kind, the
// connects and the outbox messages flushed in [Start, Start+width).
type Bucket struct {
	Start    int64
	Opens    [NumOpenKinds]int
	Connects int
	Flushed  int64
}

// Total returns the bucket's socket-opens of every kind.
func (b *Bucket) Total() int {
	n := 0
	for _, k := range b.Opens {
		n += k
	}
	return n
}

// Span returns the times of the first and last socket-open or connect;
// ok is false when there are none.
func (a *Activity) Span() (first, last int64, ok bool) {
	if len(a.Opens) == 0 && len(a.Connects) == 0 {
		return 0, 0, false
	}
	first, last = NoTime, NoTime
	if len(a.Opens) > 0 {
		first, last = a.Opens[0].At, a.Opens[len(a.Opens)-1].At
	}
	if len(a.Connects) > 0 {
		if first == NoTime || a.Connects[0] < first {
			first = a.Connects[0]
		}
		last = max(last, a.Connects[len(a.Connects)-1])
	}
	return first, last, true
}

// Histogram returns n buckets of width from from: zero buckets included.
func (a *Activity) Histogram(from int64, width time.Duration, n int) []Bucket {
	out := make([]Bucket, n)
	w := int64(max(width, 1))
	i := sort.Search(len(a.Opens), func(k int) bool { return a.Opens[k].At >= from })
	j := sort.Search(len(a.Connects), func(k int) bool { return a.Connects[k] >= from })
	f := sort.Search(len(a.Flushes), func(k int) bool { return a.Flushes[k].At >= from })
	for b := range out {
		out[b].Start = from + int64(b)*w
		end := out[b].Start + w
		for ; i < len(a.Opens) && a.Opens[i].At < end; i++ {
			out[b].Opens[a.Opens[i].Kind]++
		}
		k := sort.Search(len(a.Connects)-j, func(k int) bool { return a.Connects[j+k] >= end })
		out[b].Connects, j = k, j+k
		for ; f < len(a.Flushes) && a.Flushes[f].At < end; f++ {
			out[b].Flushed = addSat(out[b].Flushed, a.Flushes[f].N)
		}
	}
	return out
}

// Active returns the indices in o.Devices of the devices with a
// socket-open in [from, to), in dataset order.
func (o *Overview) Active(from, to int64) []int {
	var out []int
	for i := range o.Devices {
		opens := o.Devices[i].Opens
		k := sort.Search(len(opens), func(k int) bool { return opens[k] >= from })
		if k < len(opens) && opens[k] < to {
			out = append(out, i)
		}
	}
	return out
}

// Device returns the index in o.Devices of the device id, or -1.
func (o *Overview) Device(id string) int {
	k, ok := slices.BinarySearchFunc(o.Devices, id, func(f DeviceFigures, id string) int { return cmp.Compare(f.ID, id) })
	if !ok {
		return -1
	}
	return k
}

// Survey checks the dataset in dir as Check does, and in the same pass
// gathers the fleet's activity and every device's figures. opts.Observe,
// if set, is still called.
func Survey(dir string, opts Options) (*Overview, error) {
	return SurveyWatched(dir, opts, 0, nil)
}

// SurveyWatched is Survey that also shows the fleet as it is read: watch,
// unless nil, is called with a Glimpse after the first device, then at
// most once every interval, and after each device once the manifest's
// records are all read (with opts.Since or Until, which leave records
// out, the records kept cannot tell when that is: then only the first two
// apply); on the goroutine that reads, so it must be quick (hand the
// glimpse to another goroutine). The glimpse is watch's to keep.
func SurveyWatched(dir string, opts Options, every time.Duration, watch func(*Glimpse)) (*Overview, error) {
	o := &Overview{}
	observe := opts.Observe
	var conns []Open // the connects, with their devices
	var gl *glimpser
	if watch != nil {
		man, err := dataset.ReadManifest(dir)
		if err != nil {
			return nil, err
		}
		gl = &glimpser{watch: watch, every: every, total: math.MaxInt64}
		if opts.Since.IsZero() && opts.Until.IsZero() && man.Rows > 0 {
			gl.total = man.Rows
		}
	}
	opts.Observe = func(d *Device) {
		o.Devices = append(o.Devices, figures(d, int32(len(o.Devices)), &o.Activity, &conns))
		if gl != nil {
			gl.add(d, &o.Activity, conns)
		}
		if observe != nil {
			observe(d)
		}
	}
	res, err := Check(dir, opts)
	if err != nil {
		return nil, err
	}
	o.Result = res
	o.correct(conns)
	slices.SortFunc(o.Activity.Opens, func(a, b Open) int { return cmp.Compare(a.At, b.At) })
	slices.Sort(o.Activity.Connects)
	slices.SortFunc(o.Activity.Flushes, func(a, b Flush) int { return cmp.Compare(a.At, b.At) })
	for _, f := range res.Findings {
		if k := o.Device(f.Device); k >= 0 {
			o.Devices[k].Findings++
			o.Devices[k].Worst = max(o.Devices[k].Worst, f.Severity)
		}
	}
	return o, nil
}

// correct moves the activity and figures of the devices whose clocks the
// check found off onto the fleet's clock (FleetStats.ClockOffsets), as
// the incidents are, and fills Activity.Connects from conns.
func (o *Overview) correct(conns []Open) {
	var ix clockIndex
	if st := o.Result.Summary.Fleet; st != nil {
		ix = st.clocks()
	}
	at := func(k int32, t int64) int64 { // the fleet's time of device k's t
		if ix.byName == nil {
			return t
		}
		return t - ix.name(o.Devices[k].ID, t)
	}
	for k := range o.Devices {
		f := &o.Devices[k]
		if ix.byName == nil || ix.byName[f.ID] == nil {
			continue
		}
		f.First, f.Last = at(int32(k), f.First), at(int32(k), f.Last)
		for i := range f.Opens {
			f.Opens[i] = at(int32(k), f.Opens[i])
		}
		slices.Sort(f.Opens) // a clock that stepped can reorder them
	}
	a := &o.Activity
	for i := range a.Opens {
		a.Opens[i].At = at(a.Opens[i].dev, a.Opens[i].At)
	}
	for i := range a.Flushes {
		a.Flushes[i].At = at(a.Flushes[i].dev, a.Flushes[i].At)
	}
	a.Connects = make([]int64, len(conns))
	for i, c := range conns {
		a.Connects[i] = at(c.dev, c.At)
	}
}

// figures returns the figures of d, the device of index k, adding its
// socket-opens to act and its connects to conns.
func figures(d *Device, k int32, act *Activity, conns *[]Open) DeviceFigures {
	f := DeviceFigures{ID: d.ID, Records: len(d.Events), TTR: -1, First: NoTime, Last: NoTime}
	d.Flushes(func(_ int, at, n int64) { act.Flushes = append(act.Flushes, Flush{At: at, N: n, dev: k}) })
	for i := range d.Events {
		e := &d.Events[i]
		if f.First == NoTime || e.At < f.First {
			f.First = e.At
		}
		if f.Last == NoTime || e.At > f.Last {
			f.Last = e.At
		}
		if e.Outcome == auditfmt.Connected && (e.Stage == 0 || e.Stage == auditfmt.StageSession) {
			*conns = append(*conns, Open{At: e.At, dev: k})
		}
	}
	for _, o := range d.Opens() {
		f.Attempts++
		if o.Kind == OpenRefused || o.Kind == OpenFailed {
			f.Failed++
		}
		f.Opens = append(f.Opens, o.At)
		o.dev = k
		act.Opens = append(act.Opens, o)
	}
	slices.Sort(f.Opens)
	for i := range d.Episodes {
		if ep := &d.Episodes[i]; ep.Loss() {
			f.Losses++
			if ep.End != NoTime {
				f.TTR = max(f.TTR, ep.recovery())
			}
		}
	}
	_, f.Down = d.Outage()
	return f
}

// Opens returns the device's socket-opens that the log shows (as
// FleetStats.Attempts counts them), each with what became of it, in
// attempt order.
func (d *Device) Opens() []Open {
	var out []Open
	for i := range d.Attempts {
		a := &d.Attempts[i]
		if !openInLog(d, a) {
			continue
		}
		kind := OpenPending
		if a.Outcome >= 0 {
			switch d.Events[a.Outcome].Outcome {
			case auditfmt.Connected:
				kind = OpenConnected
			case auditfmt.Refused:
				kind = OpenRefused
			default:
				kind = OpenFailed
			}
		}
		st := a.Stage
		if isSessionStage(st) {
			st = auditfmt.StageSession
		}
		out = append(out, Open{At: a.Open, Kind: kind, Stage: st})
	}
	return out
}

// BucketWidths are the widths a histogram of the fleet's activity steps
// through as it zooms: round durations from 1 ms to 30 days.
var BucketWidths = []time.Duration{
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond,
	50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour, 7 * 24 * time.Hour, 30 * 24 * time.Hour,
}

// BucketWidth returns the narrowest of BucketWidths, at least least, in
// which [first, last] spans at most n buckets (the widest when none does).
func BucketWidth(first, last int64, least time.Duration, n int) time.Duration {
	for _, w := range BucketWidths {
		if w < least {
			continue
		}
		origin := floorDiv(first, int64(w)) * int64(w)
		span := uint64(max(last, origin)) - uint64(origin) // exact: the int64 difference can overflow
		if span/uint64(w)+1 <= uint64(n) {
			return w
		}
	}
	return BucketWidths[len(BucketWidths)-1]
}
