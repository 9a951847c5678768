package replay

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/hashchain"
)

// StatusTopic returns the topic of a device's status: "online", retained,
// when it connects; its Last Will, "offline", retained, when its
// connection ends without a DISCONNECT.
func StatusTopic(clientID string) string { return "stormaudit/replay/" + clientID + "/status" }

// Options configure Run.
type Options struct {
	// Broker is the broker's host:port; TLS, when set, wraps every
	// connection (mqtts). BrokerName names it in the report, without
	// credentials.
	Broker     string
	TLS        *tls.Config
	BrokerName string
	// Protocol is MQTT311 (the default) or MQTT5.
	Protocol byte
	// Username and Password, when set, go in every CONNECT.
	Username, Password []byte
	// Speed compresses time: 10 plays the plan ten times faster (default 1).
	Speed float64
	// ConnectTimeout bounds a connect, from the socket-open to its
	// CONNACK (default DefaultConnectTimeout).
	ConnectTimeout time.Duration
	// Hold is how long the connections stay up after the last connect's
	// outcome before they disconnect gracefully (default 1 s).
	Hold time.Duration
	// Audit, when set, receives the replay's own audit records.
	Audit *hashchain.Writer
	// Restart, when set, is a broker restart to carry out during the
	// replay.
	Restart *Restart
	// LinkDown, when set, is an outage of the devices' link: a connect
	// due within it fails at once, without a socket, as one over a dead
	// link does, while the broker (and the publisher of Queue) stay up.
	LinkDown *Outage
	// Queue, when set, gives every device a persistent session holding
	// queued messages on its return (see Queue and docs/replay.md).
	Queue *Queue
	// Setup, when set, is called with true before the replay sets up the
	// devices' sessions for Queue and with false after: the embedded
	// broker neither counts nor limits those connects (Embedded.Setup).
	Setup func(on bool)
	// LostAtStart writes a disconnected record for every device at the
	// start of the audit log: the plan starts at an incident's loss, and
	// so the replay's log shows the loss that check infers the incident
	// from.
	LostAtStart bool
	// Progress, when set, is called about every 200 ms with the connects
	// attempted so far and scheduled in all.
	Progress func(done, total int)
	// Wills, when set, counts the wills the broker sent (the embedded
	// broker's Wills); without it an observer connection subscribes to
	// every device's status topic and counts them, as a client of any
	// broker would.
	Wills func() int64
	// Shard, when set, says the plan is one shard of a replay several
	// processes make together (Plan.Shard): the report carries its
	// Samples, for Merge, and the wills counted are its devices' alone.
	Shard *Shard
	// StartAt, when set, is the replay's start, which shards share: the
	// plan's time 0. Run waits for it; it must not have passed.
	StartAt time.Time
	// AcceptErrors, when set, counts by error the connections the
	// broker's listener could not accept for a reason of this machine
	// (the embedded broker's AcceptErrors): the replay's failure, not the
	// broker's.
	AcceptErrors func() map[string]int64
	// Service, when set, has every accepted connect ask for its first
	// useful service, as a device does: it subscribes to its command
	// topic (ServiceTopic) at QoS 1, and the audit records the SUBACK as
	// a connected record of stage service (a refused one, with the
	// SUBACK's code, when the broker refused the subscription; an
	// attempt_failed when none came within ConnectTimeout).
	Service bool
}

// ServiceTopic is the command topic a device subscribes to for its first
// useful service (Options.Service).
func ServiceTopic(clientID string) string { return "stormaudit/replay/" + clientID + "/cmd" }

// serviceID is the packet id of the service subscription: a queue's
// subscription uses 1.
const serviceID = 2

// QueueQuiet is how long the end of a replay with queued messages waits
// with nothing received before it stops waiting for the rest: long enough
// that a loaded machine's pause is not taken for messages lost (a second
// was not, with a second test run beside it on two cores).
const QueueQuiet = 5 * time.Second

// Restart takes the broker down At after the replay's start (in plan time)
// for Down, through Stop and Start.
type Restart struct {
	At, Down    time.Duration
	Stop, Start func() error
}

// Outage is a span of plan time: from At for Down.
type Outage struct{ At, Down time.Duration }

// down returns the outages the replay schedules: its broker restart and
// its link outage.
func (o *Options) down() []Outage {
	var d []Outage
	if o.Restart != nil {
		d = append(d, Outage{o.Restart.At, o.Restart.Down})
	}
	if o.LinkDown != nil {
		d = append(d, *o.LinkDown)
	}
	return d
}

// within reports whether plan time at falls in one of the outages.
func within(outages []Outage, at time.Duration) bool {
	for _, o := range outages {
		if at >= o.At && at < o.At+o.Down {
			return true
		}
	}
	return false
}

// MemoryLimit returns the soft memory limit (runtime/debug.SetMemoryLimit)
// that a process replaying should run under, with the garbage collector
// off below it (runtime/debug.SetGCPercent(-1)): a quarter of available,
// the memory the system has available in bytes, and at least 1 GiB.
// Thousands of connections each allocate buffers and grow goroutine
// stacks, and at the default pace the collector's work delayed connects
// by tens of milliseconds (BenchmarkReplay10k: p99 lateness 150 ms with
// GOGC 100). A lower limit the process was given (GOMEMLIMIT) should
// stand: the collector then runs whenever the process reaches it.
//
// Run sets neither: the collector's settings are the process's, and the
// program's to choose. stormaudit replay sets both for the replay's
// duration (cmd/stormaudit/memory.go).
func MemoryLimit(available int64) int64 { return max(available/4, 1<<30) }

// DefaultConnectTimeout is Options.ConnectTimeout when it is 0.
const DefaultConnectTimeout = 5 * time.Second

// result is what became of one scheduled connect.
type result struct {
	kind      uint8         // one of the outcomes below
	code      byte          // a refusal's code
	lateness  time.Duration // its socket-open after its scheduled moment
	opened    time.Duration // its socket-open, from the start (wall)
	connack   time.Duration // socket-open to CONNACK
	at        time.Duration // when it was accepted, from the start (wall)
	attempted bool
	errno     string // a local failure's error (localErrno)
}

// The outcomes of a connect.
const (
	notAttempted uint8 = iota
	accepted
	refused
	timedOutKind
	failed   // the socket could not be opened, or the connection ended before a CONNACK
	linkDown // due while Options.LinkDown held the link down: no socket was opened
	protocol // the broker's answer broke the protocol (errProtocol)
	local    // failed for a reason of this machine (localErrno)
)

// live is a device's state during a replay.
type live struct {
	mu   sync.Mutex
	cl   *client
	seq  atomic.Int64 // device_seq of its next audit record
	last atomic.Int64 // recorded_at of its last audit record, Unix ns
}

// run is one replay in progress.
type run struct {
	plan    *Plan
	opts    Options
	start   time.Time
	devs    []live
	results []result
	audit   auditLog
	wills   atomic.Int64
	// broke counts the accepted connections whose later packets broke the
	// protocol, dropped the accepted connections the broker ended
	broke, dropped atomic.Int64
	ctx            context.Context
	queue          *queueRun   // nil without Options.Queue
	ports          *localPorts // the devices' local ports; nil: connect() chooses
	idsOnce        sync.Once
	ids            map[string]bool // the status topics of a shard's devices (ours)
}

// Run plays the plan against the broker: one connection per scheduled
// connect, each at its moment; see the package documentation. It returns
// the report, partial when ctx was cancelled or the broker failed; an
// error only when it could not start.
func Run(ctx context.Context, plan *Plan, opts Options) (*Report, error) {
	if opts.Protocol == 0 {
		opts.Protocol = MQTT311
	}
	if opts.Protocol != MQTT311 && opts.Protocol != MQTT5 {
		return nil, fmt.Errorf("replay: protocol %d: expected 4 (3.1.1) or 5", opts.Protocol)
	}
	if opts.Speed <= 0 {
		opts.Speed = 1
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = DefaultConnectTimeout
	}
	if opts.Hold <= 0 {
		opts.Hold = time.Second
	}
	if !opts.StartAt.IsZero() && time.Until(opts.StartAt) < 0 {
		return nil, fmt.Errorf("replay: the start at %s has passed: every connect would be late", opts.StartAt.Format(time.RFC3339Nano))
	}
	r := &run{plan: plan, opts: opts, devs: make([]live, len(plan.Devices)), results: make([]result, len(plan.Connects)),
		audit: auditLog{w: opts.Audit}, ctx: ctx}
	if opts.Queue != nil {
		if err := opts.Queue.Validate(); err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
		r.queue = newQueueRun(r)
	}
	observerDone := make(chan struct{})
	stopObserver := func() {}
	var wills0 int64
	if opts.Wills == nil {
		stopObserver = r.observe(observerDone)
	} else {
		close(observerDone)
		wills0 = opts.Wills()
	}
	growFDTable(2*len(plan.Devices) + 256) // each device's end and the embedded broker's
	if m := ThisMachine(); m.PortsFrom > 0 && chooseLocalPorts && len(plan.Devices) > m.Ports/ownPortsFrom {
		r.ports = newLocalPorts(m.PortsFrom, m.PortsFrom+m.Ports-1)
	}
	if err := r.setUp(); err != nil {
		stopObserver()
		<-observerDone
		return nil, fmt.Errorf("replay: %w", err)
	}
	r.start = time.Now()
	if !opts.StartAt.IsZero() {
		if !sleepUntil(ctx, opts.StartAt) {
			stopObserver()
			<-observerDone
			return nil, fmt.Errorf("replay: interrupted before the start at %s: %w", opts.StartAt.Format(time.RFC3339Nano), ctx.Err())
		}
		r.start = opts.StartAt
	}
	if r.queue != nil {
		r.queue.last.Store(r.start.UnixNano())
		r.queue.pub = startPublisher(r, r.queue)
	}
	if opts.LostAtStart {
		for i := range r.devs {
			r.audit.record(&r.devs[i], &plan.Devices[i], auditfmt.Disconnected, 0, 0, r.start, nil)
		}
	}
	stopRestart := r.restart()
	stopProgress := r.progress()
	var wg sync.WaitGroup
	interrupted := !r.schedule(&wg)
	wg.Wait()
	stopRestart()
	if !interrupted {
		sleepCtx(ctx, opts.Hold)
	}
	if r.queue != nil {
		r.queue.settle(ctx, max(opts.Hold, QueueQuiet))
	}
	r.disconnectAll()
	if r.queue != nil {
		r.queue.pub.stop()
	}
	time.Sleep(100 * time.Millisecond) // the wills in flight reach the observer
	stopObserver()
	<-observerDone
	if opts.Wills != nil {
		r.wills.Store(opts.Wills() - wills0)
	}
	stopProgress()
	rep := r.report(interrupted || ctx.Err() != nil)
	if err := r.audit.err(); err != nil {
		return rep, fmt.Errorf("replay: audit log: %w", err)
	}
	return rep, nil
}

// setUp gives the devices their sessions for Options.Queue, if any.
func (r *run) setUp() error {
	if r.queue == nil {
		return nil
	}
	if r.opts.Setup != nil {
		r.opts.Setup(true)
		defer r.opts.Setup(false)
	}
	return r.prime()
}

// workers is how many goroutines make the connects: each takes the next
// connect due, so that a connect starts on a goroutine whose stack has
// grown already. When all of them wait on the broker, a connect gets a
// goroutine of its own: the schedule never waits for a slow broker.
const workers = 512

// lead is how long before its moment a connect is handed to a worker,
// which then sleeps to the moment itself: the wakeups of many sleepers do
// not queue behind one another as those of one scheduler do.
const lead = 3 * time.Millisecond

// schedule hands each connect to a worker at its moment; false if ctx
// ended it first.
func (r *run) schedule(wg *sync.WaitGroup) bool {
	type job struct {
		i   int
		due time.Time
	}
	jobs := make(chan job)
	for range min(workers, len(r.plan.Connects)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				if sleepUntil(r.ctx, j.due) {
					r.attempt(j.i, j.due)
				}
			}
		}()
	}
	defer close(jobs)
	for i := range r.plan.Connects {
		c := &r.plan.Connects[i]
		due := r.start.Add(dueAt(c.At, r.opts.Speed))
		if !sleepUntil(r.ctx, due.Add(-lead)) {
			return false
		}
		select {
		case jobs <- job{i, due}:
		default: // every worker waits on a connect: one more, so the schedule never waits on the broker
			wg.Add(1)
			go func() {
				defer wg.Done()
				if sleepUntil(r.ctx, due) {
					r.attempt(i, due)
				}
			}()
		}
	}
	return true
}

// sleepUntil waits until t; false if ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	if d := time.Until(t); d > 0 {
		return sleepCtx(ctx, d)
	}
	return ctx.Err() == nil
}

// sleepCtx sleeps for d; false if ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// attempt makes connect i, due at due.
func (r *run) attempt(i int, due time.Time) {
	c := &r.plan.Connects[i]
	dev, d := &r.devs[c.Device], &r.plan.Devices[c.Device]
	dev.mu.Lock()
	defer dev.mu.Unlock()
	if dev.cl != nil {
		dev.cl.drop() // a new attempt: the old connection was lost
		dev.cl = nil
	}
	wait := time.Duration(float64(c.Wait) / r.opts.Speed)
	r.audit.record(dev, d, auditfmt.BackoffWait, c.Attempt, wait.Seconds(), due.Add(-wait), nil)
	started := time.Now()
	res := &r.results[i]
	res.attempted, res.lateness, res.opened = true, started.Sub(due), started.Sub(r.start)
	if r.opts.LinkDown != nil && within([]Outage{*r.opts.LinkDown}, c.At) {
		res.kind = linkDown
		r.audit.record(dev, d, auditfmt.AttemptFailed, c.Attempt+1, wait.Seconds(), time.Now(), func(rec *auditfmt.Record) {
			rec.FailureClass = auditfmt.FailTransient
		})
		return
	}
	deadline := started.Add(r.opts.ConnectTimeout)
	nc, err := r.ports.dial(r.ctx, r.opts.Broker, r.opts.TLS, deadline)
	var cl *client
	var present bool
	if err == nil {
		cl, present, err = connect(nc, r.opts.Protocol, connectParams{clientID: d.ID, clean: d.Clean, keepalive: d.Keepalive,
			willTopic: StatusTopic(d.ID), willOnline: []byte("offline"), username: r.opts.Username, password: r.opts.Password}, deadline)
		if err != nil {
			nc.Close()
		}
	}
	res.connack = time.Since(started)
	var ref errRefused
	var perr errProtocol
	switch {
	case errors.As(err, &perr):
		res.kind = protocol
		r.audit.record(dev, d, auditfmt.AttemptFailed, c.Attempt+1, wait.Seconds(), time.Now(), func(rec *auditfmt.Record) {
			rec.FailureClass = auditfmt.FailUnknown
		})
	case err == nil:
		res.kind, res.at = accepted, time.Since(r.start)
		r.audit.record(dev, d, auditfmt.Connected, 0, wait.Seconds(), time.Now(), func(rec *auditfmt.Record) {
			rec.SessionPresent, rec.Has = present, rec.Has|auditfmt.HasSessionPresent
		})
		cl.publish(StatusTopic(d.ID), []byte("online"), true)
		dev.cl = cl
		on := r.handler(c.Device, cl, present)
		if r.opts.Service {
			on = r.serve(dev, d, cl, on)
		}
		cl.keep(d.Keepalive, func(err error) { r.lost(dev, d, cl, err) }, on)
	case errors.As(err, &ref):
		res.kind, res.code = refused, ref.code
		r.audit.record(dev, d, auditfmt.Refused, c.Attempt+1, wait.Seconds(), time.Now(), func(rec *auditfmt.Record) {
			rec.ReasonCode, rec.Has, rec.FailureClass = int64(ref.code), rec.Has|auditfmt.HasReasonCode, refusalClass(ref.code)
		})
	case r.ended():
		res.kind = notAttempted // interrupted before its outcome: no broker's doing
		res.attempted = false
		return
	default:
		res.kind = failed
		if timedOut(err) {
			res.kind = timedOutKind
		}
		if name := localErrno(err); name != "" {
			res.kind, res.errno = local, name
		}
		r.audit.record(dev, d, auditfmt.AttemptFailed, c.Attempt+1, wait.Seconds(), time.Now(), func(rec *auditfmt.Record) {
			rec.FailureClass = auditfmt.FailTransient
		})
	}
}

// handler returns what an accepted connect of device k does with what
// the broker sends it: with Options.Queue, it notes the return, counts
// and acknowledges the queued messages, and subscribes again when the
// broker kept no session (present false), as a device does.
func (r *run) handler(k int32, cl *client, present bool) func(packets.FixedHeader, []byte) {
	if r.queue == nil {
		return nil
	}
	r.queue.accepted(k, time.Since(r.start))
	topic := QueueTopic(r.plan.Devices[k].ID)
	if !present {
		cl.subscribe(topic, r.queue.q.QoS)
	}
	return r.queue.handler(k, topic, cl)
}

// serve subscribes cl to d's command topic and returns the handler that
// records the SUBACK as the device's first useful service, then hands
// every packet on to next (nil: none). A SUBACK that has not come within
// ConnectTimeout is recorded as a service attempt_failed.
func (r *run) serve(dev *live, d *Device, cl *client, next func(packets.FixedHeader, []byte)) func(packets.FixedHeader, []byte) {
	var once sync.Once
	answer := func(o auditfmt.Outcome, set func(*auditfmt.Record)) {
		once.Do(func() {
			r.audit.record(dev, d, o, 0, 0, time.Now(), func(rec *auditfmt.Record) {
				rec.Stage = auditfmt.StageService
				if set != nil {
					set(rec)
				}
			})
		})
	}
	if err := cl.subscribeID(ServiceTopic(d.ID), 1, serviceID); err != nil {
		return next
	}
	timer := time.AfterFunc(r.opts.ConnectTimeout, func() {
		if !cl.stopped() {
			answer(auditfmt.AttemptFailed, func(rec *auditfmt.Record) { rec.FailureClass = auditfmt.FailTransient })
		}
	})
	return func(fh packets.FixedHeader, body []byte) {
		if fh.Type == packets.Suback && packetID(body) == serviceID {
			timer.Stop()
			pk := packets.Packet{FixedHeader: fh, ProtocolVersion: cl.proto}
			if pk.SubackDecode(body) == nil && len(pk.ReasonCodes) > 0 && pk.ReasonCodes[0] >= 0x80 {
				code := pk.ReasonCodes[0]
				answer(auditfmt.Refused, func(rec *auditfmt.Record) {
					rec.ReasonCode, rec.Has = int64(code), rec.Has|auditfmt.HasReasonCode
				})
				return
			}
			answer(auditfmt.Connected, nil)
			return
		}
		if next != nil {
			next(fh, body)
		}
	}
}

// ended reports whether the replay's context has ended, or reached its
// deadline (a dial can fail on the deadline a moment before the context
// says so).
func (r *run) ended() bool {
	d, ok := r.ctx.Deadline()
	return r.ctx.Err() != nil || ok && !time.Now().Before(d)
}

// lost is called when the broker ends a device's connection.
func (r *run) lost(dev *live, d *Device, cl *client, err error) {
	r.dropped.Add(1)
	if errors.As(err, &errProtocol{}) {
		r.broke.Add(1)
	}
	dev.mu.Lock()
	defer dev.mu.Unlock()
	if dev.cl == cl {
		dev.cl = nil
		r.audit.record(dev, d, auditfmt.Disconnected, 0, 0, time.Now(), nil)
	}
}

// refusalClass is the failure class of a CONNACK refusal code.
func refusalClass(code byte) auditfmt.FailureClass {
	switch code {
	case 4, 5, 0x86, 0x87, 0x8C:
		return auditfmt.FailAuth
	case 3, 0x88, 0x89, 0x97, 0x9F:
		return auditfmt.FailOverload
	case 1, 2, 0x84, 0x85:
		return auditfmt.FailUnsupported
	}
	return auditfmt.FailUnknown
}

// disconnectAll ends every connection gracefully: DISCONNECT, so the
// broker sends no will, and a stopped record; many at once, since each
// waits for the broker to close its side.
func (r *run) disconnectAll() {
	next := make(chan int)
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				dev, d := &r.devs[i], &r.plan.Devices[i]
				dev.mu.Lock()
				if dev.cl != nil {
					dev.cl.disconnect()
					dev.cl = nil
					r.audit.record(dev, d, auditfmt.Stopped, 0, 0, time.Now(), nil)
				}
				dev.mu.Unlock()
			}
		}()
	}
	for i := range r.devs {
		next <- i
	}
	close(next)
	wg.Wait()
}

// restart carries out Options.Restart; the function it returns waits for
// it (or ends it, when the replay ended first).
func (r *run) restart() func() {
	rs := r.opts.Restart
	if rs == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(r.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if !sleepUntil(ctx, r.start.Add(time.Duration(float64(rs.At)/r.opts.Speed))) {
			return
		}
		rs.Stop()
		sleepCtx(ctx, time.Duration(float64(rs.Down)/r.opts.Speed))
		rs.Start() // also when the replay ends while it is down: the broker is left up
	}()
	return func() {
		cancel()
		<-done
	}
}

// progress calls Options.Progress until the function it returns is called.
func (r *run) progress() func() {
	if r.opts.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				n := 0
				for i := range r.results {
					if r.results[i].attempted {
						n++
					}
				}
				r.opts.Progress(n, len(r.results))
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

// ours reports whether the status topic is one of the plan's devices':
// every device's, unless the plan is a shard (Options.Shard), whose
// observer sees the other shards' wills too.
func (r *run) ours(topic string) bool {
	if r.opts.Shard == nil {
		return true
	}
	r.idsOnce.Do(func() {
		r.ids = make(map[string]bool, len(r.plan.Devices))
		for _, d := range r.plan.Devices {
			r.ids[StatusTopic(d.ID)] = true
		}
	})
	return r.ids[topic]
}

// observerPrefix begins the client id of the replay's observer.
const observerPrefix = "stormaudit-obs-"

func isObserver(id string) bool { return strings.HasPrefix(id, observerPrefix) }

// observe keeps a connection subscribed to every device's status topic,
// reconnecting when the broker drops it, and counts the wills ("offline"
// published by the broker, not retained) delivered. The function it
// returns ends it; done is closed once it has ended.
func (r *run) observe(done chan struct{}) func() {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer close(done)
		id := fmt.Sprintf("%s%08x", observerPrefix, uint32(time.Now().UnixNano())) // 23 bytes: the 3.1.1 limit
		for ctx.Err() == nil {
			deadline := time.Now().Add(2 * time.Second)
			nc, err := dial(ctx, r.opts.Broker, r.opts.TLS, deadline)
			var cl *client
			if err == nil {
				if cl, _, err = connect(nc, r.opts.Protocol, connectParams{clientID: id, clean: true, keepalive: 30,
					username: r.opts.Username, password: r.opts.Password}, deadline); err != nil {
					nc.Close()
				}
			}
			if err != nil {
				sleepCtx(ctx, 200*time.Millisecond)
				continue
			}
			ended := make(chan struct{})
			cl.keep(30, func(error) { close(ended) }, func(fh packets.FixedHeader, body []byte) {
				if pk, ok := cl.decodePublish(fh, body); ok && !pk.FixedHeader.Retain && string(pk.Payload) == "offline" && r.ours(pk.TopicName) {
					r.wills.Add(1)
				}
			})
			cl.subscribe(StatusTopic("+"), 0)
			select {
			case <-ctx.Done():
				cl.disconnect()
				return
			case <-ended:
			}
		}
	}()
	return cancel
}
