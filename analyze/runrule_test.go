package analyze

import (
	"math"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/simulate"
)

// unitT0 is the instant the unit tests' timelines count from.
var unitT0 = simulate.DefaultStart.UnixNano()

// unitEvent is a record at sec seconds after unitT0, with no optional field.
func unitEvent(sec float64, o auditfmt.Outcome, attempt int64, delay float64) Event {
	return Event{At: unitT0 + nanos(sec), Outcome: o, Attempt: attempt, Delay: delay, Ceiling: math.NaN(), Seq: -1, Dropped: -1, Expired: -1, Reason: -1, Presence: -1}
}

// unitDevice is a device of events, numbered as lines 1, 2, ... of source
// 0 unless they say otherwise, not yet built.
func unitDevice(id string, evs ...Event) *Device {
	d := &Device{ID: id, Events: evs}
	for i := range d.Events {
		if d.Events[i].Ref.Line == 0 {
			d.Events[i].Ref.Line = int64(i + 1)
		}
		d.Events[i].Ref.Row = int64(i)
	}
	return d
}

// withSeq numbers the events with device_seq from first.
func withSeq(first int64, evs ...Event) []Event {
	for i := range evs {
		evs[i].Seq = first + int64(i)
	}
	return evs
}

// runRule builds the devices and runs rule over them as Check does; end is
// the end of the log (0: the last record of the devices).
func runRule(rule Rule, end int64, devs ...*Device) (*Context, []Finding) {
	fc := newFleetCounter(0)
	c := &Context{Fleet: &fc.St}
	for _, d := range devs {
		d.Build()
		fc.add(d)
		if n := len(d.Events); n > 0 {
			c.End = max(c.End, d.Events[n-1].At)
		}
		rule.Device(c, d)
	}
	if end != 0 {
		c.End = end
	}
	c.Fleet = fc.stats()
	rule.Finish(c)
	return c, c.findings
}
