package replay

import (
	"sync"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"
)

// acker sends a device's acknowledgements of the messages it received, as
// a device does: each one Queue.AckDelay after its message arrived, in the
// order they arrived, while the connection's reader goes on reading. With
// no delay the reader acknowledges at once. It holds at most what the
// broker has in flight to the device.
type acker struct {
	c     *client
	delay time.Duration
	mu    sync.Mutex
	q     []pendingAck
	wake  chan struct{}
}

// pendingAck is one acknowledgement to send at due.
type pendingAck struct {
	due time.Time
	typ byte
	id  uint16
}

// newAcker makes the acker of c, and with a delay starts its goroutine,
// which ends with the connection.
func newAcker(c *client, delay time.Duration) *acker {
	a := &acker{c: c, delay: delay, wake: make(chan struct{}, 1)}
	if delay > 0 {
		go a.run()
	}
	return a
}

// ack acknowledges a received PUBLISH of QoS qos with packet id id: a
// PUBACK, or a PUBREC for QoS 2, now or after the delay.
func (a *acker) ack(qos byte, id uint16) {
	typ := packets.Puback
	if qos == 2 {
		typ = packets.Pubrec
	}
	if a.delay <= 0 {
		a.c.sendAck(typ, id)
		return
	}
	a.mu.Lock()
	a.q = append(a.q, pendingAck{due: time.Now().Add(a.delay), typ: typ, id: id})
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// run sends the acknowledgements as they fall due, until the connection
// ends.
func (a *acker) run() {
	for {
		a.mu.Lock()
		var next pendingAck
		ok := len(a.q) > 0
		if ok {
			next = a.q[0]
			a.q = a.q[1:]
			if len(a.q) == 0 {
				a.q = nil // let the backing array go once drained
			}
		}
		a.mu.Unlock()
		if !ok {
			select {
			case <-a.wake:
				continue
			case <-a.c.done:
				return
			}
		}
		t := time.NewTimer(time.Until(next.due))
		select {
		case <-t.C:
			a.c.sendAck(next.typ, next.id)
		case <-a.c.done:
			t.Stop()
			return
		}
	}
}
