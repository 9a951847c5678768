package simulate

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/policy"
)

// Reason codes the model writes (MQTT 5).
const (
	reasonNotAuthorized = 135 // 0x87, a CONNACK refusing bad credentials
	reasonServerBusy    = 137 // 0x89, a CONNACK refusing a connect over capacity
	reasonShuttingDown  = 139 // 0x8B, the session lost as the broker went down
	batchRecords        = 8192
	microsPerSecond     = 1_000_000
)

// A device's phase says what its queued step is.
const (
	phaseWait    uint8 = iota // the socket-open
	phaseSlot                 // a reserved spacing slot: the socket-open, spacing checked
	phaseResolve              // the connect's outcome
	phaseUp                   // none: connected
	phaseBoot                 // the first attempt of a cold boot
)

// device is one client's state. While it waits for its next step it
// travels through the queue by value, with the step's time: the model
// takes events in time order, which is no order of devices, and state
// that moved with the event is in cache when the event is taken, where a
// table of a million devices would cost a miss per event.
type device struct {
	t          int64  // when the queued step is due, microseconds from the drop
	who        uint32 // the device's index + 1; 0 is the broker
	attempt    int32
	rng        rand.PCG
	prev       float64 // the previous delay drawn
	delay      float64 // the delay before the pending socket-open
	upAt       int64   // when the current session came up
	hostNext   int64   // the next free slot of its host, when each device is its own host
	seq        int32   // device_seq of the next record
	tries      int32   // the attempts begun, which number the attempt_ids
	phase      uint8
	badAuth    bool
	authFailed bool  // the last failure was an authentication failure
	gen        uint8 // with a library loop: a manager's event is stale unless its gen, t and phase are the device's
	addr       bool  // the pending attempt is of the address stage (Config.AddressDown)
	out        outbox
}

func (d *device) index() int { return int(d.who - 1) }

// rec is a record in the making: times in microseconds from the drop.
type rec struct {
	t        int64
	delay    float64
	ceiling  float64 // < 0: not written
	dev      int32
	attempt  int32
	seq      int32
	outcome  auditfmt.Outcome
	stage    auditfmt.Stage // 0: not written (the session)
	fail     auditfmt.FailureClass
	reason   uint8 // 0: not written
	presence bool  // session_present (connected records)
	// commands marks a service record that counts the commands its
	// session's queue brought (Config.CommandsPerS): depth holds them
	// (inbound_redelivered) and flushed those expired (inbound_expired;
	// < 0: not written), a service record carrying no outbox
	commands bool
	depth    int64 // outbox_depth; < 0: not written
	flushed  int64 // outbox_flushed
	dropped  int64 // outbox_dropped; < 0: not written (no outbox_limit)
	try      int32 // the attempt_id's number; 0: not written
}

// fleet runs the model; see the package documentation.
type fleet struct {
	cfg      *Config
	pol      *policy.Policy
	draw     *policy.Sampler
	up       []device // the connected devices, in the order they connected
	hostNext []int64  // per host: its next free slot (several devices per host)
	q        queue
	down     []int64 // the broker's transitions to come: down at down[0], up at down[1], ...
	isDown   bool
	spacing  int64
	latency  int64
	tick     int64 // microseconds
	horizon  int64
	capWin   int64 // the current capacity window and the connects accepted in it
	capUsed  int
	batch    []rec
	emit     func([]rec)  // takes ownership of a full batch
	reuse    <-chan []rec // batches the emitter is done with
	stats    *counter
	lib      *library // the library's own reconnect loop, or nil
}

func newFleet(cfg *Config, emit func([]rec), reuse <-chan []rec, st *counter) *fleet {
	f := &fleet{cfg: cfg, pol: &cfg.Policy, draw: cfg.Policy.Sampler(), emit: emit, reuse: reuse, stats: st,
		up: make([]device, cfg.Devices),
		// a spacing longer than the run is as long as the run, and no sum of them overflows
		spacing: min(seconds(cfg.Policy.MinConnectSpacingS), cfg.Horizon.Microseconds()+1),
		latency: cfg.Latency.Microseconds(),
		tick:    cfg.Tick.Microseconds(),
		horizon: cfg.Horizon.Microseconds(),
		capWin:  -1,
	}
	f.batch = f.newBatch()
	if cfg.Library != nil {
		f.lib = newLibrary(cfg)
	}
	if cfg.DevicesPerHost > 1 {
		f.hostNext = make([]int64, cfg.hosts())
		for i := range f.hostNext {
			f.hostNext[i] = math.MinInt64
		}
	}
	bad := int64(math.Round(cfg.BadAuth * float64(cfg.Devices)))
	for i := range f.up {
		d := &f.up[i]
		k := uint64(i)
		if cfg.SameSeed {
			k = 0
		}
		d.who, d.phase, d.hostNext = uint32(i)+1, phaseUp, math.MinInt64
		d.rng.Seed(splitmix(cfg.Seed^splitmix(k)), splitmix(cfg.Seed+k))
		// bad credentials spread evenly over the fleet, exactly bad of them
		d.badAuth = (int64(i)+1)*bad/int64(cfg.Devices) > int64(i)*bad/int64(cfg.Devices)
		if f.lib != nil {
			f.lib.state[i] = *d
		}
	}
	if cfg.ColdBoot {
		f.boot()
	}
	t := cfg.Outage.Microseconds()
	f.down = append(f.down, 0, t)
	for range cfg.Flaps {
		if t > f.horizon {
			break // the transitions after the horizon never come
		}
		t += cfg.FlapUp.Microseconds()
		f.down = append(f.down, t)
		t += cfg.FlapDown.Microseconds()
		f.down = append(f.down, t)
	}
	return f
}

// boot queues every device's first attempt of a cold boot, after a
// startup delay drawn uniformly from [0, startup_spread_s): none is
// connected at the start.
func (f *fleet) boot() {
	spread := seconds(f.pol.StartupSpreadS)
	for i := range f.up {
		d := f.up[i]
		u := float64(d.rng.Uint64()>>11) * 0x1p-53
		d.t, d.phase = int64(u*float64(spread)), phaseBoot
		f.q.push(d)
	}
	f.up = f.up[:0]
}

// run processes events up to the horizon and flushes the last batch. It
// reports false if stop closed first.
func (f *fleet) run(stop <-chan struct{}) bool {
	f.q.push(device{t: f.down[0]})
	for n := 0; f.q.len() > 0; n++ {
		if n&0xffff == 0 {
			select {
			case <-stop:
				return false
			default:
			}
		}
		d := f.q.pop()
		if d.t > f.horizon {
			break
		}
		switch {
		case d.who == 0:
			f.transition(d.t)
		case f.lib == nil:
			f.step(&d)
		case d.who >= libWho:
			f.lib.step(f, &d)
		default:
			if st := &f.lib.state[d.index()]; st.gen == d.gen && st.t == d.t && st.phase == d.phase {
				f.step(st) // else another owner connected the device meanwhile
			}
		}
	}
	if len(f.batch) > 0 {
		f.emit(f.batch)
	}
	return true
}

// transition turns the broker down or up at t and queues its next
// transition; going down drops every established session.
func (f *fleet) transition(t int64) {
	f.down = f.down[1:]
	if len(f.down) > 0 {
		f.q.push(device{t: f.down[0]})
	}
	if f.isDown = !f.isDown; !f.isDown {
		return
	}
	for i := range f.up {
		d := &f.up[i]
		if f.lib != nil {
			d = &f.lib.state[d.index()]
			f.lib.start(f, d.index(), t)
		}
		if f.pol.StableResetS > 0 && t > 0 && t-d.upAt >= seconds(f.pol.StableResetS) {
			d.attempt = 0
		}
		f.record(d, rec{t: t, outcome: auditfmt.Disconnected, reason: reasonShuttingDown, ceiling: -1})
		f.backoff(d, t)
	}
	f.up = f.up[:0]
}

// step takes the queued step of d, which the queue handed over.
func (f *fleet) step(d *device) {
	switch d.phase {
	case phaseWait:
		f.open(d, true)
	case phaseSlot:
		f.open(d, false)
	case phaseResolve:
		f.resolve(d)
	case phaseBoot:
		f.backoff(d, d.t)
	}
}

// open is d's socket-open, due at d.t; check says whether its host's
// spacing is still to be checked.
func (f *fleet) open(d *device, check bool) {
	t := d.t
	if f.spacing > 0 {
		next := &d.hostNext
		if f.hostNext != nil {
			next = &f.hostNext[d.index()/f.cfg.DevicesPerHost]
		}
		if check && *next > t {
			slot := *next
			*next = slot + f.spacing
			f.record(d, rec{t: t, delay: float64(slot-t) / microsPerSecond, outcome: auditfmt.RateLimitedWait, ceiling: -1})
			d.t, d.phase = slot, phaseSlot
			f.q.push(*d)
			return
		}
		if check {
			*next = t + f.spacing
		}
	}
	d.t, d.phase = t+f.latency, phaseResolve
	f.q.push(*d)
}

// resolve decides d's connect at d.t.
func (f *fleet) resolve(d *device) {
	t := d.t
	// counted here, not at the socket-open: an open whose outcome the
	// horizon cuts off is not in the log
	if d.addr {
		f.resolveAddress(d, t)
		return
	}
	f.stats.open(t - f.latency)
	if f.cfg.OnOpen != nil {
		f.cfg.OnOpen(Open{Device: d.index(), At: time.Duration(t-f.latency) * time.Microsecond, Delay: d.delay, Attempt: d.attempt})
	}
	switch {
	case f.isDown:
		f.fail(d, auditfmt.AttemptFailed, auditfmt.FailTransient, 0)
	case d.badAuth:
		f.fail(d, auditfmt.Refused, auditfmt.FailAuth, reasonNotAuthorized)
	case f.overCapacity(t):
		f.fail(d, auditfmt.Refused, auditfmt.FailOverload, reasonServerBusy)
	default:
		if f.pol.StableResetS == 0 {
			d.attempt = 0
		}
		lost := f.cfg.lostAfter(d.upAt)
		d.phase, d.upAt, d.authFailed = phaseUp, t, false
		f.record(d, rec{t: t, delay: d.delay, outcome: auditfmt.Connected, presence: !f.pol.CleanSession, ceiling: -1})
		f.serve(d, t, lost)
		f.up = append(f.up, *d)
	}
}

// serve records the service stage of d's connect at t (Config.Service):
// for a connect once the broker is up for good, its service checks until
// the application answers, all written now (a later drop cannot cut
// them short: the broker stays up). Its first useful exchange counts the
// commands queued since its session was lost at lost (Config.CommandsPerS).
func (f *fleet) serve(d *device, t, lost int64) {
	if !f.cfg.Service && f.cfg.ServiceDown == 0 && f.cfg.CommandsPerS == 0 {
		return
	}
	up := f.cfg.brokerUp().Microseconds()
	if t < up {
		return // during a flap: the session drops again before its service answers
	}
	queued, expired := f.commands(t, lost) // they come on the connect, whether the application answers or not
	back, timeout := up+f.cfg.ServiceDown.Microseconds(), ServiceTimeout.Microseconds()
	for t+timeout <= back {
		t += timeout
		f.record(d, rec{t: t, outcome: auditfmt.AttemptFailed, stage: auditfmt.StageService, fail: auditfmt.FailTransient, ceiling: -1})
	}
	served := rec{t: max(t, back) + f.latency, outcome: auditfmt.Connected, stage: auditfmt.StageService, ceiling: -1}
	if queued >= 0 {
		served.depth, served.flushed, served.commands = queued, expired, true
	}
	f.record(d, served)
}

// commands returns the commands a session lost at lost and back at t
// brings, and of them those that expired before t: -1 each when it is not
// written (no commands; no expiry).
func (f *fleet) commands(t, lost int64) (queued, expired int64) {
	if f.cfg.CommandsPerS == 0 {
		return -1, -1
	}
	if f.pol.CleanSession || f.cfg.ColdBoot {
		return 0, -1 // no session to queue them in
	}
	perUs := f.cfg.CommandsPerS / microsPerSecond
	queued, expired = int64(math.Floor(float64(t-lost)*perUs)), -1
	if ttl := f.cfg.CommandTTL.Microseconds(); ttl > 0 {
		expired = int64(math.Floor(float64(max(0, t-ttl-lost)) * perUs))
	}
	return queued, expired
}

// resolveAddress decides d's address attempt at t (Config.AddressDown):
// it fails while the address service is down; once it is up, the device
// records its address, and its session attempt follows at once (a
// backoff_wait of no delay), resolved a latency later.
func (f *fleet) resolveAddress(d *device, t int64) {
	if f.isDown {
		f.fail(d, auditfmt.AttemptFailed, auditfmt.FailTransient, 0)
		return
	}
	f.record(d, rec{t: t, outcome: auditfmt.Connected, stage: auditfmt.StageAddress, ceiling: -1})
	d.addr, d.delay = false, 0
	d.tries++
	f.record(d, rec{t: t, outcome: auditfmt.BackoffWait, ceiling: -1})
	d.t, d.phase = t+f.latency, phaseResolve
	f.q.push(*d)
}

// overCapacity counts a connect at t against the broker's capacity and
// reports whether it is refused.
func (f *fleet) overCapacity(t int64) bool {
	if f.cfg.Capacity == 0 {
		return false
	}
	if w := t / f.cfg.CapacityWindow.Microseconds(); w != f.capWin {
		f.capWin, f.capUsed = w, 0
	}
	if f.capUsed >= f.cfg.Capacity {
		return true
	}
	f.capUsed++
	return false
}

// fail records a failed connect of d at d.t and backs off.
func (f *fleet) fail(d *device, o auditfmt.Outcome, class auditfmt.FailureClass, reason uint8) {
	d.attempt++
	d.authFailed = class == auditfmt.FailAuth
	f.stats.failed(class)
	r := rec{t: d.t, delay: d.delay, outcome: o, fail: class, reason: reason, ceiling: -1}
	if d.addr {
		r.stage = auditfmt.StageAddress
	}
	f.record(d, r)
	f.backoff(d, d.t)
}

// backoff draws d's next delay at t, records it and queues the
// socket-open after it.
func (f *fleet) backoff(d *device, t int64) {
	a := int64(d.attempt)
	u := float64(d.rng.Uint64()>>11) * 0x1p-53
	delay := f.draw.Draw(a, d.prev, u)
	if d.authFailed && delay < f.pol.AuthMinDelayS {
		delay = f.pol.AuthMinDelayS
	}
	us := seconds(delay)
	if f.tick > 0 {
		us = (us + f.tick - 1) / f.tick * f.tick // in whole microseconds: 2.1 s is 7 ticks of 0.3 s, not 8
	}
	delay = float64(us) / microsPerSecond
	d.prev, d.delay, d.phase = delay, delay, phaseWait
	d.tries++
	r := rec{t: t, delay: delay, outcome: auditfmt.BackoffWait, ceiling: f.draw.Ceiling(a)}
	if d.addr = f.cfg.AddressDown && f.isDown; d.addr {
		r.stage = auditfmt.StageAddress // the address service is down: the attempt begins with it
	}
	f.record(d, r)
	d.t = t + us
	f.q.push(*d)
}

// record adds d's next record, with its attempt counter and sequence
// number, to the batch.
func (f *fleet) record(d *device, r rec) {
	r.dev, r.attempt, r.seq = int32(d.index()), d.attempt, d.seq
	r.dropped = -1
	if !r.commands {
		r.depth = -1
	}
	if f.cfg.AttemptIDs && r.outcome != auditfmt.Disconnected && r.stage == 0 {
		r.try = d.tries
	}
	if f.cfg.OutboxPerS > 0 && r.stage == 0 {
		var dropped int64
		r.depth, r.flushed, dropped = d.out.record(r.t, d.phase == phaseUp && r.outcome != auditfmt.Connected, f.cfg, f.pol)
		if f.pol.OutboxLimit > 0 { // a device whose outbox can fill says what it dropped
			r.dropped = dropped
		}
	}
	d.seq++
	f.stats.records++
	f.batch = append(f.batch, r)
	if len(f.batch) == cap(f.batch) {
		f.emit(f.batch)
		f.batch = f.newBatch()
	}
}

// newBatch returns an empty batch, reusing one the emitter is done with.
func (f *fleet) newBatch() []rec {
	select {
	case b := <-f.reuse:
		return b[:0]
	default:
		return make([]rec, 0, batchRecords)
	}
}

// seconds converts s seconds to whole microseconds, saturating.
func seconds(s float64) int64 {
	us := math.Round(s * microsPerSecond)
	if us >= math.MaxInt64/4 {
		return math.MaxInt64 / 4
	}
	return int64(us)
}

// splitmix returns the SplitMix64 mix of x.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
