package simulate

import (
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/policy"
)

// libWho is the who of the first library event: a library loop's events
// come after every manager's at one instant, so the order stays total.
const libWho = 1 << 31

// library is the MQTT library's own automatic reconnect loop, one per
// device, beside the manager that writes the audit records (Config.Library).
//
// With a library loop the devices' state does not travel through the
// queue: two loops may have a step queued for one device, so state lives
// in a table, and each manager step carries the generation it was queued
// in; a library connect moves the generation on and the manager's queued
// step, now stale, is dropped when it comes.
type library struct {
	draw  *policy.Sampler
	seed  uint64
	state []device  // every device's state, the manager's and the session's
	loops []libLoop // the library loop of each device
}

// libLoop is one device's library loop.
type libLoop struct {
	attempt int32
	pending bool    // a library socket-open is queued
	prev    float64 // the delay it drew before
}

func newLibrary(cfg *Config) *library {
	return &library{draw: cfg.Library.Sampler(), seed: splitmix(cfg.Seed ^ 0x6c6962), state: make([]device, cfg.Devices),
		loops: make([]libLoop, cfg.Devices)}
}

// start begins device i's library loop when its session drops at t,
// unless a library socket-open is queued already.
func (l *library) start(f *fleet, i int, t int64) {
	lp := &l.loops[i]
	if lp.pending {
		return
	}
	lp.attempt, lp.prev, lp.pending = 0, 0, true
	l.queue(f, i, t)
}

// queue draws the library's next delay for device i from t and queues its
// socket-open.
func (l *library) queue(f *fleet, i int, t int64) {
	lp := &l.loops[i]
	u := float64(splitmix(l.seed^splitmix(uint64(i)<<20^uint64(lp.attempt)))>>11) * 0x1p-53
	delay := l.draw.Draw(int64(lp.attempt), lp.prev, u)
	lp.prev = delay
	f.q.push(device{t: t + seconds(delay), who: libWho + uint32(i), phase: phaseWait})
}

// step takes a library event: its socket-open, or the connect's outcome.
// Nothing the library does is recorded but the connect it makes: the
// manager's on-connect callback writes connected whoever connected.
func (l *library) step(f *fleet, e *device) {
	i := int(e.who - libWho)
	if e.phase == phaseWait {
		f.stats.libOpen(e.t)
		if f.cfg.OnOpen != nil && e.t+f.latency <= f.horizon {
			f.cfg.OnOpen(Open{Device: i, At: time.Duration(e.t) * time.Microsecond, Attempt: l.state[i].attempt, Library: true})
		}
		f.q.push(device{t: e.t + f.latency, who: e.who, phase: phaseResolve})
		return
	}
	d, lp := &l.state[i], &l.loops[i]
	if f.isDown || d.badAuth || f.overCapacity(e.t) {
		lp.attempt++
		l.queue(f, i, e.t)
		return
	}
	lp.pending = false
	if d.phase == phaseUp {
		// the manager connected it first; the library reconnects anyway,
		// over the session (paho-mqtt 1.x's loop_forever does)
		f.record(d, rec{t: e.t, outcome: auditfmt.Connected, presence: !f.pol.CleanSession, ceiling: -1})
		return
	}
	d.gen++ // the manager's queued step is stale
	if f.pol.StableResetS == 0 {
		d.attempt = 0
	}
	lost := f.cfg.lostAfter(d.upAt)
	d.phase, d.upAt, d.authFailed = phaseUp, e.t, false
	f.record(d, rec{t: e.t, delay: d.delay, outcome: auditfmt.Connected, presence: !f.pol.CleanSession, ceiling: -1})
	f.serve(d, e.t, lost)
	f.up = append(f.up, *d)
}
