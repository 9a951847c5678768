package simulate

import (
	"math"

	"github.com/stormaudit/stormaudit/policy"
)

// outbox is a device's local outbox: QoS 1 messages queued while it cannot
// send, sent once it is connected.
type outbox struct {
	depth   float64 // messages waiting, fractional between records
	sent    float64 // sent since the last record
	dropped float64 // dropped from a full outbox since the last record
	at      int64   // when depth and sent were last brought up to date, µs from the drop
}

// record brings the outbox up to t, the time of a record, and returns
// what the record says: the messages waiting (outbox_depth), those sent
// since the device's previous record (outbox_flushed) and those dropped
// since then because the outbox was full (outbox_dropped). up says
// whether the device was connected from the last update to t: then it
// flushed, FlushBatch a second or all at once; else it queued OutboxPerS
// a second, up to the policy's outbox_limit, beyond which it dropped the
// oldest.
func (o *outbox) record(t int64, up bool, cfg *Config, pol *policy.Policy) (depth, flushed, dropped int64) {
	dt := float64(t-o.at) / microsPerSecond
	o.at = t
	if up {
		n := o.depth
		if cfg.FlushBatch > 0 {
			n = min(n, float64(cfg.FlushBatch)*dt)
		}
		o.depth -= n
		o.sent += n
	} else {
		o.depth += cfg.OutboxPerS * dt
		if pol.OutboxLimit > 0 && o.depth > pol.OutboxLimit {
			o.dropped += o.depth - pol.OutboxLimit
			o.depth = pol.OutboxLimit
		}
	}
	flushed = int64(math.Floor(o.sent))
	o.sent -= float64(flushed)
	dropped = int64(math.Floor(o.dropped))
	o.dropped -= float64(dropped)
	return int64(math.Floor(o.depth)), flushed, dropped
}
