package replay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"
)

// Queue asks a replay for the second load event of a reconnect: the
// messages a broker queued for persistent sessions while their devices
// were away, pushed to each device on its return (Options.Queue).
type Queue struct {
	// Messages is how many messages the publisher puts on each device's
	// topic while it is away.
	Messages int
	// QoS is the QoS of the devices' subscriptions and of the messages, 1
	// or 2.
	QoS byte
	// AckDelay is how long a device takes to acknowledge each message it
	// receives (wall time, not divided by Options.Speed).
	AckDelay time.Duration
	// Expiry is how long each message stays valid after it was published
	// (plan time: divided by Options.Speed on the wire); 0: forever. Over
	// MQTT 5 each PUBLISH carries it as its message expiry interval (whole
	// seconds, rounded up), and a broker drops what expires while queued;
	// over 3.1.1 nothing carries it. Either way a device counts what
	// arrived older than it: stale (Redelivery.Stale), as a command it
	// must ignore (a valid_until).
	Expiry time.Duration
}

// Validate says what is wrong with q, naming the flag a user sets.
func (q *Queue) Validate() error {
	if q.Messages <= 0 || q.Messages > maxQueued {
		return fmt.Errorf("--queued: expected 1 to %d messages a device, found %d", maxQueued, q.Messages)
	}
	if q.QoS != 1 && q.QoS != 2 {
		return fmt.Errorf("--queued-qos: expected 1 or 2, found %d", q.QoS)
	}
	if q.AckDelay < 0 {
		return fmt.Errorf("--ack-delay: expected a duration >= 0, found %v", q.AckDelay)
	}
	if q.Expiry < 0 || q.Expiry > maxExpiry {
		return fmt.Errorf("--queued-expiry: expected a duration from 0 to %v, found %v", maxExpiry, q.Expiry)
	}
	return nil
}

// maxExpiry bounds Queue.Expiry: MQTT 5's expiry interval is 32 bits
// of seconds; a week is more than any outage replayed.
const maxExpiry = 7 * 24 * time.Hour

// expiryInterval is the message expiry interval a PUBLISH carries for an
// expiry (plan time) at speed: whole seconds of wall time, rounded up; 0
// for none.
func expiryInterval(expiry time.Duration, speed float64) uint32 {
	if expiry <= 0 {
		return 0
	}
	return uint32(math.Ceil(float64(expiry) / speed / float64(time.Second)))
}

// remaining returns the expiry interval a resend of a message first
// published at sent (Unix ns) carries over MQTT 5 (what is left of its
// validity, whole seconds rounded up; 0 without an expiry or over 3.1.1),
// and whether it is still valid: a publisher that reconnects with a clean
// session makes its resend a new message to the broker, which must not
// live longer than the first.
func (q *queueRun) remaining(sent int64) (uint32, bool) {
	if q.wallExpiry <= 0 {
		return q.interval, true
	}
	left := q.wallExpiry - time.Duration(time.Now().UnixNano()-sent)
	if left <= 0 {
		return 0, false
	}
	if q.interval == 0 {
		return 0, true
	}
	return uint32(math.Ceil(left.Seconds())), true
}

// maxQueued bounds Queue.Messages: a device's messages are told apart by
// a sequence number, and a session cannot hold more than 65,535 in flight.
const maxQueued = 65535

// QueueTopic returns the topic of a device's queued messages.
func QueueTopic(clientID string) string { return "stormaudit/replay/" + clientID + "/queued" }

// bitmap is a set of small integers.
type bitmap []uint64

func newBitmap(n int) bitmap { return make(bitmap, (n+63)/64) }

// has reports whether i is in the set.
func (b bitmap) has(i int) bool { return b[i/64]&(uint64(1)<<(i%64)) != 0 }

// set adds i, and reports whether it was new.
func (b bitmap) set(i int) bool {
	w, m := i/64, uint64(1)<<(i%64)
	if b[w]&m != 0 {
		return false
	}
	b[w] |= m
	return true
}

// queueDev is what one device's queue did: a few counters and two
// bitmaps of its message ids, so that memory is bounded by the queue and
// not by the messages seen.
type queueDev struct {
	mu         sync.Mutex
	seen       bitmap // ids received
	published  bitmap // ids the broker acknowledged to the publisher
	received   int32  // PUBLISHes on its topic
	dupFlagged int32  // of which with the DUP flag
	duplicates int32  // of which with an id received before
	unique     int32
	nPublished int32
	stale      int32         // received older than the expiry (Queue.Expiry)
	lastNew    time.Duration // wall, from the start: the latest first receipt of an id
	back       time.Duration // wall, from the start: the CONNACK of its first accepted connect; -1 none
}

// queueRun is the queue of a replay in progress.
type queueRun struct {
	q      Queue
	tag    string // this replay's mark in every payload: other replays' messages are not counted
	devs   []queueDev
	ret    []time.Duration // plan time of each device's return
	mu     sync.Mutex
	perSec []int32      // messages received in each second of wall time from the start
	last   atomic.Int64 // wall ns of the latest message received or publish acknowledged
	pub    *publisher
	start  *time.Time
	// wallExpiry is Queue.Expiry in wall time (0: none), and interval the
	// message expiry interval each PUBLISH carries over MQTT 5 (0: none)
	wallExpiry time.Duration
	interval   uint32
	speed      float64 // Options.Speed
}

// newQueueRun sets up the queue of r's plan.
func newQueueRun(r *run) *queueRun {
	var b [4]byte
	rand.Read(b[:])
	q := &queueRun{q: *r.opts.Queue, tag: hex.EncodeToString(b[:]), devs: make([]queueDev, len(r.plan.Devices)),
		ret: returns(r.plan, r.opts.down()), start: &r.start, wallExpiry: time.Duration(float64(r.opts.Queue.Expiry) / r.opts.Speed),
		speed: r.opts.Speed}
	if r.opts.Protocol == MQTT5 {
		q.interval = expiryInterval(q.q.Expiry, r.opts.Speed)
	}
	for i := range q.devs {
		q.devs[i].seen, q.devs[i].published, q.devs[i].back = newBitmap(q.q.Messages), newBitmap(q.q.Messages), -1
	}
	return q
}

// payload is message seq's payload: the replay's tag, the id, and when
// it was first published (wall, Unix ns).
func (q *queueRun) payload(seq int32, sent int64) []byte {
	return []byte(q.tag + "/" + strconv.Itoa(int(seq)) + "/" + strconv.FormatInt(sent, 10))
}

// parse returns the id a payload carries and when it was first
// published, false when it is not one of this replay's.
func (q *queueRun) parse(p []byte) (int, int64, bool) {
	tag, rest, ok := strings.Cut(string(p), "/")
	if !ok || tag != q.tag {
		return 0, 0, false
	}
	id, at, ok := strings.Cut(rest, "/")
	n, err := strconv.Atoi(id)
	sent, err2 := strconv.ParseInt(at, 10, 64)
	return n, sent, ok && err == nil && err2 == nil && n >= 0 && n < q.q.Messages
}

// returns gives the plan time of each device's return: its first connect
// outside the scheduled outages (downs), or the plan's span when it has
// none.
func returns(p *Plan, downs []Outage) []time.Duration {
	ret := make([]time.Duration, len(p.Devices))
	for i := range ret {
		ret[i] = -1
	}
	for _, c := range p.Connects {
		if ret[c.Device] < 0 && !within(downs, c.At) {
			ret[c.Device] = c.At
		}
	}
	for i := range ret {
		if ret[i] < 0 {
			ret[i] = p.Span()
		}
	}
	return ret
}

// received counts a message device k received.
func (q *queueRun) received(k int32, pk packets.Packet) {
	seq, sent, ok := q.parse(pk.Payload)
	if !ok {
		return
	}
	now := time.Now()
	stale := q.wallExpiry > 0 && now.UnixNano()-sent > int64(q.wallExpiry)
	at := now.Sub(*q.start)
	q.last.Store(now.UnixNano())
	d := &q.devs[k]
	d.mu.Lock()
	d.received++
	if pk.FixedHeader.Dup {
		d.dupFlagged++
	}
	if d.seen.set(seq) {
		d.unique++
		d.lastNew = at
		if stale { // a message, not each time it came
			d.stale++
		}
	} else {
		d.duplicates++
	}
	d.mu.Unlock()
	sec := int(max(at, 0) / time.Second)
	q.mu.Lock()
	for len(q.perSec) <= sec {
		q.perSec = append(q.perSec, 0)
	}
	q.perSec[sec]++
	q.mu.Unlock()
}

// accepted notes device k's accepted connect at (wall, from the start).
func (q *queueRun) accepted(k int32, at time.Duration) {
	d := &q.devs[k]
	d.mu.Lock()
	if d.back < 0 {
		d.back = at
	}
	d.mu.Unlock()
}

// handler returns what device k's connection cl does with the packets it
// receives: counts the messages on its queue topic, and acknowledges
// every QoS 1 and 2 message as a device does.
func (q *queueRun) handler(k int32, topic string, cl *client) func(packets.FixedHeader, []byte) {
	a := newAcker(cl, q.q.AckDelay)
	return func(fh packets.FixedHeader, body []byte) {
		switch fh.Type {
		case packets.Publish:
			pk, ok := cl.decodePublish(fh, body)
			if !ok {
				return
			}
			if pk.TopicName == topic {
				q.received(k, pk)
			}
			if fh.Qos > 0 {
				a.ack(fh.Qos, pk.PacketID)
			}
		case packets.Pubrel:
			cl.sendAck(packets.Pubcomp, packetID(body))
		}
	}
}

// drained reports whether every device received every message the
// broker acknowledged for it.
func (q *queueRun) drained() bool {
	for i := range q.devs {
		d := &q.devs[i]
		d.mu.Lock()
		done := d.unique >= d.nPublished || d.unique+int32(q.expiredUnreceived(int32(i), time.Since(*q.start))) >= d.nPublished
		d.mu.Unlock()
		if !done {
			return false
		}
	}
	return true
}

// settle waits until the publisher is done and every queue drained, or
// nothing was received or acknowledged for quiet, or ctx ends.
func (q *queueRun) settle(ctx context.Context, quiet time.Duration) {
	for sleepCtx(ctx, 50*time.Millisecond) {
		idle := time.Since(time.Unix(0, q.last.Load())) >= quiet
		if q.pub.finished() && (q.drained() || idle) || idle && q.pub.stuck() {
			return
		}
	}
}

// prime gives every device its persistent session before the plan
// starts, as it had before the outage: a connect with clean_session to
// clear what an earlier replay left, then one with the device's own
// clean_session flag that subscribes to its queue topic and disconnects;
// and, for a persistent session, a third that finds it kept, or makes it
// again. The third is for a broker that ends the clearing connection
// after it has answered the next one: the embedded broker (mochi 2.7)
// closes the socket on DISCONNECT and only then forgets a clean session,
// by client id, which can forget the persistent session made meanwhile;
// its queue was then lost before the plan began (1 device in about 60
// replays of the real-client corpus, three at once).
func (r *run) prime() error {
	next := make(chan int)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range min(64, len(r.devs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				d := &r.plan.Devices[i]
				_, err := r.session(d.ID, true, "", false)
				if err == nil {
					_, err = r.session(d.ID, d.Clean, QueueTopic(d.ID), false)
				}
				for try := 0; err == nil && !d.Clean && try < 3; try++ {
					var kept bool
					if kept, err = r.session(d.ID, false, QueueTopic(d.ID), true); kept {
						break
					}
				}
				if err != nil {
					select {
					case errs <- fmt.Errorf("queued: the session of %s before the start: %w", d.ID, err):
					default:
					}
				}
			}
		}()
	}
	for i := range r.devs {
		next <- i
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// session connects as id with clean, subscribes to topic (if any) at the
// queue's QoS, unless lost is true and the broker kept a session, and
// disconnects; it reports whether the broker kept a session.
func (r *run) session(id string, clean bool, topic string, lost bool) (bool, error) {
	deadline := time.Now().Add(r.opts.ConnectTimeout)
	nc, err := dial(r.ctx, r.opts.Broker, r.opts.TLS, deadline)
	if err != nil {
		return false, err
	}
	cl, present, err := connect(nc, r.opts.Protocol, connectParams{clientID: id, clean: clean, keepalive: 30,
		username: r.opts.Username, password: r.opts.Password}, deadline)
	if err != nil {
		nc.Close()
		return false, err
	}
	if topic != "" && !(lost && present) {
		if err = cl.subscribe(topic, r.opts.Queue.QoS); err == nil {
			err = cl.await(packets.Suback, deadline)
		}
	}
	cl.disconnect()
	return present, err
}
