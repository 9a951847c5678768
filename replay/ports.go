package replay

import (
	"context"
	"crypto/tls"
	"errors"
	"math/rand/v2"
	"net"
	"sync"
	"syscall"
	"time"
)

// localPorts hands out the local ports of the devices' connections, in
// turn over the ephemeral range, instead of leaving the choice to
// connect(). Linux's connect() tries the even ports of the range first,
// leaving the odd ones to bind(), and once every even port holds a
// connection to the broker's address (14,116 of the default range) each
// connect scans them all before it tries an odd one: about 90 µs a
// connect in the kernel, and a replay of 15,000 devices against
// Mosquitto fell 400 ms behind its schedule at 7,500 connects a second,
// where 14,000 devices kept within 3 ms. Bound to a port it names, a
// socket costs one lookup.
type localPorts struct {
	mu   sync.Mutex
	lo   int
	ours []bool // by port - lo: held by one of the replay's connections
	next int    // the port - lo to try next
}

// chooseLocalPorts is whether Run hands out the local ports itself; the
// benchmarks turn it off to compare with connect()'s choice.
var chooseLocalPorts = true

// ownPortsFrom says from when Run hands out the local ports itself: for a
// plan of more devices than the ephemeral range's size over ownPortsFrom
// (7,058 of the default range), well before connect()'s search of the
// even ports slows (14,116). Below, connect() chooses, as before: a
// queued replay of 20 devices under load lost one device's queue once in
// about 30 runs with the replay's own ports and never in 70 without, not
// yet explained (docs/replay.md).
const ownPortsFrom = 4

// portTries is how many ports a dial tries before it gives up on a
// range where every port is bound elsewhere, or in TIME_WAIT.
const portTries = 64

// newLocalPorts returns the range lo to hi, handed out from a point of
// it chosen at random (so that shards replaying on one machine do not
// walk it in step, each losing to the others the ports it tries); nil
// when it is empty.
func newLocalPorts(lo, hi int) *localPorts {
	if lo <= 0 || hi < lo || hi > 65535 {
		return nil
	}
	return &localPorts{lo: lo, ours: make([]bool, hi-lo+1), next: rand.IntN(hi - lo + 1)}
}

// take returns the next port none of the replay's connections holds,
// and marks it held; false when all of them are.
func (p *localPorts) take() (int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for range len(p.ours) {
		k := p.next
		p.next = (p.next + 1) % len(p.ours)
		if !p.ours[k] {
			p.ours[k] = true
			return p.lo + k, true
		}
	}
	return 0, false
}

// give marks port free again.
func (p *localPorts) give(port int) {
	p.mu.Lock()
	p.ours[port-p.lo] = false
	p.mu.Unlock()
}

// dial opens the socket to addr (TLS when tlsConf is set) before
// deadline from a port of p's, the next that is free: a port bound
// elsewhere (another process's, or one of the replay's own in TIME_WAIT)
// is passed over, and after portTries of them connect() chooses. Without
// p, connect() chooses (dial).
func (p *localPorts) dial(ctx context.Context, addr string, tlsConf *tls.Config, deadline time.Time) (net.Conn, error) {
	if p == nil {
		return dial(ctx, addr, tlsConf, deadline)
	}
	for range portTries {
		port, ok := p.take()
		if !ok {
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.EADDRNOTAVAIL}
		}
		d := net.Dialer{Deadline: deadline, LocalAddr: &net.TCPAddr{Port: port}}
		var nc net.Conn
		var err error
		if tlsConf != nil {
			td := tls.Dialer{NetDialer: &d, Config: tlsConf}
			nc, err = td.DialContext(ctx, "tcp", addr)
		} else {
			nc, err = d.DialContext(ctx, "tcp", addr)
		}
		if err == nil {
			return &portConn{Conn: nc, free: func() { p.give(port) }}, nil
		}
		p.give(port)
		if !errors.Is(err, syscall.EADDRINUSE) && !errors.Is(err, syscall.EADDRNOTAVAIL) {
			return nil, err
		}
	}
	return dial(ctx, addr, tlsConf, deadline)
}

// portConn is a connection from a port of localPorts, which it gives
// back when closed.
type portConn struct {
	net.Conn
	once sync.Once
	free func()
}

func (c *portConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.free)
	return err
}

// SetLinger sets SO_LINGER on the TCP connection beneath, if it is one.
func (c *portConn) SetLinger(sec int) error {
	if tc, ok := c.Conn.(*net.TCPConn); ok {
		return tc.SetLinger(sec)
	}
	return nil
}
