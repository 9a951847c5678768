package replay

import (
	"net"
	"sync"

	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"
)

// listener returns the embedded broker's listener: one that rides out
// this machine's failures to accept (steadyListener), and, with
// BrokerOptions.MaxInflight, whose connections hold the broker to that
// many unacknowledged QoS 1 and 2 messages.
func (b *Embedded) listener() (listeners.Listener, error) {
	l, err := net.Listen("tcp", b.addr)
	if err != nil {
		return nil, err
	}
	l = steadyListener{l, &b.acceptErrs}
	if b.opts.MaxInflight > 0 {
		l = gatedListener{l, b.opts.MaxInflight}
	}
	return listeners.NewNet("tcp", l), nil
}

// gatedListener accepts gated connections.
type gatedListener struct {
	net.Listener
	n int
}

func (l gatedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return newGatedConn(c, l.n), nil
}

// gatedConn is the broker's end of a connection with an in-flight window,
// which mochi lacks: mochi sends a returning session everything it holds
// at once. What the broker writes is split into packets and queued in
// order; a writer goroutine sends them, holding back a QoS 1 or 2 PUBLISH
// while n are unacknowledged; the acknowledgements (PUBACK, PUBCOMP) are
// seen as the broker reads them. A held message is, to the client, a
// queued one, as in Mosquitto or EMQX; to mochi it is sent, so that
// mochi goes on reading while its writes wait.
type gatedConn struct {
	net.Conn
	n        int
	mu       sync.Mutex
	cond     sync.Cond
	out      [][]byte // packets to send, in order
	inflight map[uint16]bool
	closed   bool
	err      error // the writer's, returned by later writes
	wsplit   splitter
	rsplit   splitter
}

func newGatedConn(c net.Conn, n int) *gatedConn {
	g := &gatedConn{Conn: c, n: n, inflight: map[uint16]bool{}}
	g.cond.L = &g.mu
	go g.writer()
	return g
}

// Write queues the packets in p.
func (g *gatedConn) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return 0, net.ErrClosed
	}
	if g.err != nil {
		return 0, g.err
	}
	g.wsplit.feed(p, func(pk []byte) { g.out = append(g.out, append([]byte(nil), pk...)) })
	g.cond.Broadcast()
	return len(p), nil
}

// Read reads what the client sent, and frees the window's place of each
// message it acknowledged.
func (g *gatedConn) Read(p []byte) (int, error) {
	n, err := g.Conn.Read(p)
	g.mu.Lock()
	g.rsplit.feed(p[:n], func(pk []byte) {
		if t := pk[0] >> 4; t == packets.Puback || t == packets.Pubcomp {
			delete(g.inflight, packetID(pk[headerLen(pk):]))
			g.cond.Broadcast()
		}
	})
	g.mu.Unlock()
	return n, err
}

// Close closes the connection and ends the writer; what was queued is
// not sent.
func (g *gatedConn) Close() error {
	g.mu.Lock()
	g.closed = true
	g.cond.Broadcast()
	g.mu.Unlock()
	return g.Conn.Close()
}

// writer sends the queued packets as the window allows.
func (g *gatedConn) writer() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for {
		for !g.closed && !g.ready() {
			g.cond.Wait()
		}
		if g.closed {
			return
		}
		pk := g.out[0]
		g.out = g.out[1:]
		if id, ok := qosPublishID(pk); ok {
			g.inflight[id] = true
		}
		g.mu.Unlock()
		_, err := g.Conn.Write(pk)
		g.mu.Lock()
		if err != nil {
			g.err = err
			return
		}
	}
}

// ready reports whether the first queued packet can be sent.
func (g *gatedConn) ready() bool {
	if len(g.out) == 0 {
		return false
	}
	id, ok := qosPublishID(g.out[0])
	return !ok || g.inflight[id] || len(g.inflight) < g.n
}

// qosPublishID returns the packet id of a QoS 1 or 2 PUBLISH.
func qosPublishID(pk []byte) (uint16, bool) {
	if pk[0]>>4 != packets.Publish || pk[0]>>1&3 == 0 {
		return 0, false
	}
	body := pk[headerLen(pk):]
	if len(body) < 2 {
		return 0, false
	}
	n := int(body[0])<<8 | int(body[1])
	if len(body) < 2+n+2 {
		return 0, false
	}
	return packetID(body[2+n:]), true
}

// splitter splits a byte stream into MQTT packets.
type splitter struct{ buf []byte }

// feed takes the next bytes of the stream and calls packet with each
// packet they complete.
func (s *splitter) feed(p []byte, packet func([]byte)) {
	s.buf = append(s.buf, p...)
	for {
		n, ok := packetLen(s.buf)
		if !ok || len(s.buf) < n {
			break
		}
		packet(s.buf[:n])
		s.buf = s.buf[n:]
	}
	if len(s.buf) == 0 {
		s.buf = nil
	}
}

// packetLen returns the length of the packet b begins with, false until
// its fixed header is complete.
func packetLen(b []byte) (int, bool) {
	rem, mul := 0, 1
	for i := 1; i < len(b) && i <= 4; i++ {
		rem += int(b[i]&0x7f) * mul
		if b[i]&0x80 == 0 {
			return i + 1 + rem, true
		}
		mul *= 128
	}
	return 0, false
}

// headerLen returns the length of the fixed header of a whole packet.
func headerLen(pk []byte) int {
	i := 1
	for i < len(pk) && i < 5 && pk[i]&0x80 != 0 {
		i++
	}
	return i + 1
}
