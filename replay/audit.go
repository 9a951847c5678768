package replay

import (
	"sync"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/hashchain"
)

// auditLog writes the replay's own audit records, in the schema the
// fleet's records are in (docs/replay.md says which), through a
// hashchain.Writer, so that check reads what the replay did as any log.
type auditLog struct {
	w     *hashchain.Writer
	mu    sync.Mutex
	first error
}

// record appends one record of device d at time at; set fills in the
// fields beyond the reference client's six.
func (a *auditLog) record(dev *live, d *Device, o auditfmt.Outcome, attempt int32, delay float64, at time.Time, set func(*auditfmt.Record)) {
	if a.w == nil {
		return
	}
	// a backoff_wait is stamped when its delay began, which can be a
	// moment before the outcome of the attempt before it was recorded:
	// never before the device's last record
	ns := max(at.UnixNano(), dev.last.Load())
	dev.last.Store(ns)
	rec := auditfmt.Record{ClientID: d.ID, Attempt: int64(attempt), BackoffDelayS: roundMicros(delay), Outcome: o,
		CleanSession: d.Clean, RecordedAt: ns, DeviceSeq: dev.seq.Add(1) - 1, Has: auditfmt.HasDeviceSeq}
	if set != nil {
		set(&rec)
	}
	if _, err := a.w.Append(&rec); err != nil {
		a.mu.Lock()
		if a.first == nil {
			a.first = err
		}
		a.mu.Unlock()
	}
}

func (a *auditLog) err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.first
}

// roundMicros rounds a delay to the microsecond, as clients log it, and
// keeps it plausible (auditfmt.MinDelayS to MaxDelayS, or 0).
func roundMicros(s float64) float64 {
	s = float64(int64(s*1e6+0.5)) / 1e6
	return min(s, auditfmt.MaxDelayS)
}
