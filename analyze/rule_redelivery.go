package analyze

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

const redeliveryID = "redelivery"

// The default thresholds of redelivery (docs/rules.md): a wave needs at
// least redeliveryMinMessages messages from at least redeliveryMinDevices
// devices in one second, over redeliveryFactor times the devices'
// recorded handling rate; a device is flagged for its application's
// duplicates from redeliveryMinDuplicates of them.
const (
	redeliveryFactor        = 3
	redeliveryMinMessages   = 100
	redeliveryMinDevices    = 10
	redeliveryMinDuplicates = 1
)

// redelivery judges the broker's queue flushing towards the devices after
// a reconnect, from inbound_redelivered and inbound_duplicates: a device
// whose application was handed redelivered messages twice (Device), and
// an incident after which the broker redelivered, in one second, far
// more than the devices' recorded handling rate (Finish).
type redelivery struct {
	factor                  float64
	minMessages, minDevices int
	minDuplicates           int64

	Placed  []flushAt     // redeliveries placed in time (Device.Redeliveries)
	Handled []handledLoss // recovered losses after which the device was redelivered messages
	Devices int32         // devices seen
}

// handledLoss is one recovered loss of a device and the messages the
// broker redelivered to it in the session that followed.
type handledLoss struct {
	Lost, Connected int64
	N               int64
}

// rate returns the loss's recorded handling rate, messages a second: the
// messages redelivered over the time the broker queued them in (from the
// loss to the connect, at least 1 s).
func (h handledLoss) rate() float64 {
	return float64(h.N) / max(time.Duration(h.Connected-h.Lost).Seconds(), StormWindow.Seconds())
}

func newRedelivery() *redelivery {
	return &redelivery{factor: redeliveryFactor, minMessages: redeliveryMinMessages, minDevices: redeliveryMinDevices,
		minDuplicates: redeliveryMinDuplicates}
}

func (r *redelivery) merge(next Rule) {
	n := next.(*redelivery)
	for _, p := range n.Placed {
		p.Dev += r.Devices
		r.Placed = append(r.Placed, p)
	}
	r.Handled = append(r.Handled, n.Handled...)
	r.Devices += n.Devices
}

func (r *redelivery) Thresholds() []Threshold {
	return []Threshold{
		{Name: "factor", Default: redeliveryFactor, Min: 1, Max: 1e6,
			Help: "a wave is more than this many times the devices' recorded handling rate in one second"},
		{Name: "min_messages", Default: redeliveryMinMessages, Min: 1, Max: 1e12, Integer: true,
			Help: "the fewest messages redelivered in one second that make a wave"},
		{Name: "min_devices", Default: redeliveryMinDevices, Min: 1, Max: 1e6, Integer: true,
			Help: "the fewest devices redelivered to in that second"},
		{Name: "min_duplicates", Default: redeliveryMinDuplicates, Min: 1, Max: 1e12, Integer: true,
			Help: "the fewest duplicates handed to a device's application that are flagged"},
	}
}

func (r *redelivery) SetThreshold(name string, v float64) {
	switch name {
	case "factor":
		r.factor = v
	case "min_messages":
		r.minMessages = int(v)
	case "min_devices":
		r.minDevices = int(v)
	case "min_duplicates":
		r.minDuplicates = int64(v)
	}
}

func (r *redelivery) Info() RuleInfo {
	return RuleInfo{ID: redeliveryID, Severity: Warning, Title: "the broker's redelivery after a reconnect comes as a wave, or reaches the application twice",
		Help: fmt.Sprintf("From inbound_redelivered and inbound_duplicates: an incident after which the broker redelivered its queued "+
			"messages at over %g× the rate the devices' records show them handling (at least %d messages from %d devices in one second): "+
			"the reconnect's second load wave, towards the devices; and a device whose application was handed redelivered messages "+
			"twice (error): its de-duplication contract is broken, and a command may run twice.", r.factor, r.minMessages, r.minDevices)}
}

func (r *redelivery) Device(c *Context, d *Device) {
	dev := r.Devices
	r.Devices++
	first := len(r.Placed)
	d.Redeliveries(func(i int, at, n int64) {
		r.Placed = append(r.Placed, flushAt{At: at, N: n, Dev: dev, Ref: d.Events[i].Ref})
	})
	r.handled(d, r.Placed[first:])
	r.duplicates(c, d)
}

// handled keeps the recovered losses of d that redeliveries followed:
// those placed from the connect that ended the loss up to the device's
// next loss.
func (r *redelivery) handled(d *Device, placed []flushAt) {
	if len(placed) == 0 {
		return
	}
	for i := range d.Episodes {
		ep := &d.Episodes[i]
		if !ep.Loss() || ep.End == NoTime {
			continue
		}
		until := int64(math.MaxInt64)
		for j := i + 1; j < len(d.Episodes); j++ {
			if d.Episodes[j].Loss() {
				until = d.Episodes[j].Lost
				break
			}
		}
		h := handledLoss{Lost: ep.Lost, Connected: ep.End}
		for _, p := range placed {
			if p.At >= ep.End && p.At < until {
				h.N = addSat(h.N, p.N)
			}
		}
		if h.N > 0 {
			r.Handled = append(r.Handled, h)
		}
	}
}

// duplicates flags d when its application was handed at least
// minDuplicates redelivered messages twice.
func (r *redelivery) duplicates(c *Context, d *Device) {
	var t tally
	var total int64
	worst := -1
	for i := range d.Events {
		e := &d.Events[i]
		if e.Duplicates <= 0 {
			continue
		}
		t.add(e.At, e.Ref)
		total = addSat(total, e.Duplicates)
		if worst < 0 || e.Duplicates > d.Events[worst].Duplicates {
			worst = i
		}
	}
	if t.n == 0 || total < r.minDuplicates {
		return
	}
	w := &d.Events[worst]
	f := t.finding(redeliveryID, Error, d, w.Ref)
	f.Kind = "redelivery/duplicates-delivered"
	f.Message = fmt.Sprintf("the application was handed %d redelivered messages twice (%s)", total, countNoun(t.n, "record", "records"))
	f.Explanation = fmt.Sprintf("%s's records say its application saw %d messages a second time (inbound_duplicates) in all; the most, %d, "+
		"on its %s at %s. A redelivery (QoS 1 after a reconnect) is the same message again: the client must drop it by its message id, "+
		"or the application must be idempotent. Here neither held, so whatever the message commanded happened twice.",
		d.ID, total, w.Duplicates, w.Outcome, fmtTime(w.At))
	c.Report(f)
}

func (r *redelivery) Finish(c *Context) {
	defer func() { r.Placed, r.Handled = nil, nil }()
	incs := c.Fleet.Incidents
	if len(incs) == 0 || len(r.Placed) == 0 {
		return
	}
	sortPlaced(r.Placed)
	slices.SortFunc(r.Handled, func(a, b handledLoss) int { return cmp.Compare(a.Lost, b.Lost) })
	recoveries(incs, func(in *Incident, next int64) {
		if w, ok := r.wave(in, next); ok {
			c.Report(w.finding(in, r))
		}
	})
}

// redeliveryWave is what wave found of one incident's redelivery.
type redeliveryWave struct {
	busy     busiest
	handling float64 // messages a second: the recorded handling rate of the incident's devices
	losses   int     // the recovered losses it is the sum of
}

// wave judges the redelivery after incident in, up to next: the busiest
// second of the messages placed from the broker's return on, against the
// sum of the recorded handling rates of the incident's recovered losses.
func (r *redelivery) wave(in *Incident, next int64) (redeliveryWave, bool) {
	var w redeliveryWave
	lo, _ := slices.BinarySearchFunc(r.Handled, in.LostAt, func(h handledLoss, t int64) int { return cmp.Compare(h.Lost, t) })
	for _, h := range r.Handled[lo:] {
		if h.Lost > in.LastLoss {
			break
		}
		w.handling += h.rate()
		w.losses++
	}
	w.busy = busiestSecond(placedWithin(r.Placed, in.FirstConnectAt, next))
	return w, w.handling > 0 && w.busy.observed >= int64(r.minMessages) && w.busy.devices >= r.minDevices &&
		float64(w.busy.observed) > r.factor*w.handling
}

func (w redeliveryWave) finding(in *Incident, r *redelivery) Finding {
	b := w.busy
	f := Finding{Rule: redeliveryID, Kind: "redelivery/wave", Severity: Warning, Device: Fleet, Start: b.at, End: b.at + int64(StormWindow), Records: b.refs}
	f.Message = fmt.Sprintf("the broker redelivered %d queued messages to %d devices in the 1s from %s after the incident at %s; "+
		"their records show them handling %.1f a second", b.observed, b.devices, fmtTime(b.at), fmtTime(in.LostAt), w.handling)
	f.Explanation = fmt.Sprintf("After the incident at %s the broker was back at %s. From then on it redelivered %d messages it had queued "+
		"for the devices (inbound_redelivered, placed at the record before it: the broker sends a resumed session its queue as soon as it "+
		"is up). The devices' recorded handling rate is %.1f messages a second: for each of the %d recovered losses after which messages "+
		"were redelivered, those messages over the time the broker queued them in (loss to reconnect), the rate the device's "+
		"subscriptions deliver and its consumer keeps up with. Observed: %d in the 1s from %s, to %s, %.1f× that (a wave needs at "+
		"least %d messages to at least %d devices, over %g× the handling rate). Devices handed their whole queue at once fall behind, "+
		"their in-flight windows fill and the broker resends, which is where duplicates come from: give the subscribers a receive "+
		"maximum, or spread the reconnects further.",
		fmtTime(in.LostAt), fmtTime(in.FirstConnectAt), b.total, w.handling, w.losses, b.observed, fmtTime(b.at),
		nOf(b.devices, "device"), float64(b.observed)/max(w.handling, 1e-9), r.minMessages, r.minDevices, r.factor)
	return f
}
