package replay

import (
	"container/heap"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"
)

// publisherWindow is how many of its messages the publisher has in
// flight (published, not yet acknowledged by the broker) at most.
const publisherWindow = 256

// publisher is the connection that puts each device's queued messages on
// its topic while it is away: message k of N at k/N of the way from the
// plan's start to the device's return. A message counts as published once
// the broker acknowledged it (PUBACK, or PUBREC for QoS 2). When the
// broker drops the connection the publisher connects again and sends what
// was unacknowledged again, with DUP, as a QoS 1 or 2 client does.
type publisher struct {
	r     *run
	q     *queueRun
	id    string
	slots chan struct{} // one per message in flight

	mu      sync.Mutex
	cl      *client
	pending map[uint16]*outMsg
	next    uint16
	sent    bool // every message was handed to the broker once

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

// outMsg is a message in flight.
type outMsg struct {
	dev      int32
	seq      int32
	sent     int64 // when it was first published, Unix ns: its resends carry it
	released bool  // QoS 2: PUBREC received, PUBREL sent
}

// startPublisher starts the publisher of r's queue; stop ends it.
func startPublisher(r *run, q *queueRun) *publisher {
	ctx, cancel := context.WithCancel(r.ctx)
	p := &publisher{r: r, q: q, id: fmt.Sprintf("%sp%07x", observerPrefix, uint32(time.Now().UnixNano())&0xfffffff),
		slots: make(chan struct{}, publisherWindow), pending: map[uint16]*outMsg{}, ctx: ctx, cancel: cancel, done: make(chan struct{})}
	go p.run()
	return p
}

// stop ends the publisher and its connection.
func (p *publisher) stop() {
	p.cancel()
	<-p.done
	p.mu.Lock()
	cl := p.cl
	p.cl = nil
	p.mu.Unlock()
	if cl != nil {
		cl.disconnect()
	}
}

// finished reports whether every message was published and acknowledged.
func (p *publisher) finished() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sent && len(p.pending) == 0
}

// stuck reports whether the publisher has no connection: the broker is
// down, or refuses it.
func (p *publisher) stuck() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cl == nil
}

// run publishes every message at its moment.
func (p *publisher) run() {
	defer close(p.done)
	due := newDueHeap(p.q.ret, p.q.q.Messages)
	for due.Len() > 0 {
		m := due.items[0]
		if !sleepUntil(p.ctx, p.r.start.Add(time.Duration(float64(m.at)/p.r.opts.Speed))) {
			return
		}
		if !p.acquire() {
			return
		}
		p.publish(m.dev, m.seq)
		due.advance()
	}
	p.mu.Lock()
	p.sent = true
	p.mu.Unlock()
	for !p.finished() && sleepCtx(p.ctx, 20*time.Millisecond) {
		p.ensure()
	}
}

// acquire waits for room in the window, connecting again meanwhile if
// the broker dropped the connection; false if the replay ended first.
func (p *publisher) acquire() bool {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case p.slots <- struct{}{}:
			return true
		case <-p.ctx.Done():
			return false
		case <-t.C:
			p.ensure()
		}
	}
}

// publish sends message seq of device dev, connecting first if need be.
func (p *publisher) publish(dev, seq int32) {
	p.mu.Lock()
	id := p.nextID()
	m := &outMsg{dev: dev, seq: seq, sent: time.Now().UnixNano()}
	p.pending[id] = m
	cl := p.cl
	p.mu.Unlock()
	if cl != nil && cl.publishQoS(QueueTopic(p.r.plan.Devices[dev].ID), p.q.payload(seq, m.sent), p.q.q.QoS, id, false, p.q.interval) == nil {
		return
	}
	if cl != nil { // the connection broke under the write
		p.lost(cl)
		cl.drop()
	}
	p.ensure() // which sends it, with what else is in flight
}

// nextID returns a packet id not in flight; p.mu is held.
func (p *publisher) nextID() uint16 {
	for {
		p.next++
		if _, busy := p.pending[p.next]; p.next != 0 && !busy {
			return p.next
		}
	}
}

// ensure connects the publisher when it has no connection, trying until
// it has one or the replay ends, and sends again what was in flight.
func (p *publisher) ensure() {
	for {
		p.mu.Lock()
		ok := p.cl != nil
		p.mu.Unlock()
		if ok || p.ctx.Err() != nil {
			return
		}
		if p.connect() == nil {
			return
		}
		sleepCtx(p.ctx, 100*time.Millisecond)
	}
}

// connect opens the publisher's connection and resends what is in flight.
func (p *publisher) connect() error {
	o := &p.r.opts
	deadline := time.Now().Add(o.ConnectTimeout)
	nc, err := dial(p.ctx, o.Broker, o.TLS, deadline)
	if err != nil {
		return err
	}
	cl, _, err := connect(nc, o.Protocol, connectParams{clientID: p.id, clean: true, keepalive: 30, username: o.Username, password: o.Password}, deadline)
	if err != nil {
		nc.Close()
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cl = cl
	cl.keep(30, func(error) { p.lost(cl) }, func(fh packets.FixedHeader, body []byte) { p.acked(cl, fh.Type, packetID(body)) })
	for id, m := range p.pending {
		if m.released {
			cl.sendAck(packets.Pubrel, id)
			continue
		}
		interval, live := p.q.remaining(m.sent)
		if !live { // expired before the broker took it: never published, as a backend drops a stale command
			delete(p.pending, id)
			<-p.slots
			continue
		}
		cl.publishQoS(QueueTopic(p.r.plan.Devices[m.dev].ID), p.q.payload(m.seq, m.sent), p.q.q.QoS, id, true, interval)
	}
	return nil
}

// lost forgets a connection the broker ended.
func (p *publisher) lost(cl *client) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cl == cl {
		p.cl = nil
	}
}

// acked takes the broker's acknowledgement of typ for packet id id.
func (p *publisher) acked(cl *client, typ byte, id uint16) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.pending[id]
	if m == nil {
		return
	}
	switch typ {
	case packets.Puback, packets.Pubcomp:
		delete(p.pending, id)
		<-p.slots
	case packets.Pubrec:
		m.released = true
		cl.sendAck(packets.Pubrel, id)
	default:
		return
	}
	p.q.last.Store(time.Now().UnixNano())
	d := &p.q.devs[m.dev]
	d.mu.Lock()
	if d.published.set(int(m.seq)) {
		d.nPublished++
	}
	d.mu.Unlock()
}

// dueMsg is a device's next message to publish, at plan time at.
type dueMsg struct {
	at       time.Duration
	dev, seq int32
}

// dueHeap orders the devices by their next message: one entry a device,
// so that the schedule of every message is never held at once.
type dueHeap struct {
	items []dueMsg
	ret   []time.Duration
	n     int32
}

func newDueHeap(ret []time.Duration, n int) *dueHeap {
	h := &dueHeap{ret: ret, n: int32(n)}
	for i := range ret {
		h.items = append(h.items, dueMsg{dev: int32(i)})
	}
	heap.Init(h)
	return h
}

// advance moves the first device on to its next message.
func (h *dueHeap) advance() {
	m := &h.items[0]
	if m.seq++; m.seq == h.n {
		heap.Pop(h)
		return
	}
	m.at = h.ret[m.dev] * time.Duration(m.seq) / time.Duration(h.n)
	heap.Fix(h, 0)
}

func (h *dueHeap) Len() int { return len(h.items) }
func (h *dueHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	return a.at < b.at || a.at == b.at && a.dev < b.dev
}
func (h *dueHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *dueHeap) Push(x any)    { h.items = append(h.items, x.(dueMsg)) }
func (h *dueHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}
