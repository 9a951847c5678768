package analyze

import (
	"math"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// window is a span of recorded_at, [lo, hi): a check with Options.Since
// or Until judges only the records inside it, and counts the others. A
// device connected when the window opens keeps its last connected record
// before it, as the state the window starts from.
type window struct {
	lo, hi  int64
	outside int64 // records left out
}

// newWindow returns the window of since and until (zero: unbounded), or
// nil when both are zero.
func newWindow(since, until time.Time) *window {
	if since.IsZero() && until.IsZero() {
		return nil
	}
	w := &window{lo: math.MinInt64, hi: math.MaxInt64}
	if !since.IsZero() {
		w.lo = since.UnixNano()
	}
	if !until.IsZero() {
		w.hi = until.UnixNano()
	}
	return w
}

// cut leaves out d's events recorded outside the window, before d is
// built, and reports whether any is left. A nil window keeps them all.
func (w *window) cut(d *Device) bool {
	if w == nil {
		return true
	}
	// the device's last record before the window, when it is connected:
	// the state the window opens on, without which a loss inside it that
	// no disconnect recorded would not be seen
	before := -1
	for i, e := range d.Events {
		if e.At < w.lo && (before < 0 || e.At >= d.Events[before].At) {
			before = i
		}
	}
	if before >= 0 && d.Events[before].Outcome != auditfmt.Connected {
		before = -1
	}
	kept, inside := d.Events[:0], 0
	for i, e := range d.Events {
		in := e.At >= w.lo && e.At < w.hi
		if in {
			inside++
		}
		if in || i == before {
			kept = append(kept, e)
		}
	}
	if inside == 0 { // the state it was in is no record of the window
		w.outside += int64(len(d.Events))
		d.Events = kept[:0]
		return false
	}
	w.outside += int64(len(d.Events) - len(kept))
	d.Events = kept
	if len(d.Secrets) > 0 {
		secrets := d.Secrets[:0]
		for _, s := range d.Secrets {
			if s.At >= w.lo && s.At < w.hi {
				secrets = append(secrets, s)
			}
		}
		d.Secrets = secrets
	}
	return len(kept) > 0
}

// left returns how many records the window left out (0 for none).
func (w *window) left() int64 {
	if w == nil {
		return 0
	}
	return w.outside
}
