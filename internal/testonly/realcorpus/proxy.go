package realcorpus

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// Proxy forwards the TCP connections it accepts to a target, until it is
// frozen: then it stops forwarding in both directions and closes nothing,
// as a link that silently drops every packet would. Connections open at
// the freeze go silent (what either end sends is dropped, a close is not
// passed on); connections accepted while frozen are held without reaching
// the target, so what the client sends there goes unanswered. Restore
// resets every connection the freeze held (on both sides, as a NAT that
// lost its state answers the next packet with a reset) and forwards new
// connections again.
type Proxy struct {
	ln     net.Listener
	target string

	mu       sync.Mutex
	frozen   bool
	refusing bool // answering every CONNECT with CONNACK 3 (Refuse)
	closed   bool
	links    map[*link]struct{}
	wg       sync.WaitGroup
}

// link is one proxied connection.
type link struct {
	client, server net.Conn // server is nil for a connection held while frozen
	frozen         bool     // under Proxy.mu
	dead           chan struct{}
	once           sync.Once
}

// StartProxy listens on addr (host:port, port 0 for a free one) and
// forwards to target.
func StartProxy(addr, target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, links: map[*link]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Port returns the port the proxy listens on.
func (p *Proxy) Port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// Freeze makes the link silent.
func (p *Proxy) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frozen = true
	for l := range p.links {
		l.frozen = true
	}
}

// Restore resets the connections the freeze held and forwards new ones
// again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	p.frozen = false
	var held []*link
	for l := range p.links {
		if l.frozen {
			held = append(held, l)
			delete(p.links, l)
		}
	}
	p.mu.Unlock()
	for _, l := range held {
		l.close(true)
	}
}

// Refuse closes every connection (a clean close, no DISCONNECT: the
// service behind the broker went away) and answers every CONNECT that
// comes after with CONNACK 3, server unavailable, then closes: a broker
// front whose application service failed. Serve ends it.
func (p *Proxy) Refuse() { p.closeAll(func() { p.refusing = true }) }

// closeAll sets, under the lock, what set does, and closes every
// connection (cleanly).
func (p *Proxy) closeAll(set func()) {
	p.mu.Lock()
	set()
	ls := p.links
	p.links = map[*link]struct{}{}
	p.mu.Unlock()
	for l := range ls {
		l.close(false)
	}
}

// Serve forwards new connections again after Refuse.
func (p *Proxy) Serve() {
	p.mu.Lock()
	p.refusing = false
	p.mu.Unlock()
}

// Close stops listening and closes every connection.
func (p *Proxy) Close() error {
	err := p.ln.Close()
	p.closeAll(func() { p.closed = true })
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond) // too many files: let some close
			continue
		}
		l := &link{client: c, dead: make(chan struct{})}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			return
		}
		l.frozen = p.frozen
		refusing := p.refusing
		p.links[l] = struct{}{}
		p.mu.Unlock()
		if refusing {
			p.wg.Add(1)
			go p.refuse(l)
			continue
		}
		if !l.frozen {
			p.wg.Add(1)
			go p.open(l)
		}
	}
}

// open dials the target for l and forwards both ways.
func (p *Proxy) open(l *link) {
	defer p.wg.Done()
	s, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		p.drop(l, true)
		return
	}
	p.mu.Lock()
	if _, ok := p.links[l]; !ok { // closed meanwhile
		p.mu.Unlock()
		s.Close()
		return
	}
	l.server = s
	p.mu.Unlock()
	p.wg.Add(2)
	go p.pump(l, s, l.client)
	go p.pump(l, l.client, s)
}

// refuse reads l's CONNECT and answers it with CONNACK 3 (MQTT 3.1.1's
// server unavailable; MQTT 5's 136 for a version 5 CONNECT), then closes.
func (p *Proxy) refuse(l *link) {
	defer p.wg.Done()
	defer p.drop(l, false)
	_ = l.client.SetDeadline(time.Now().Add(10 * time.Second))
	pkt, err := readPacket(l.client, 64<<10)
	if err != nil || len(pkt) < 1 || pkt[0]>>4 != 1 {
		return
	}
	ack := []byte{0x20, 0x02, 0x00, 0x03}
	if connectVersion(pkt) == 5 {
		ack = []byte{0x20, 0x03, 0x00, 0x88, 0x00} // reason 136, no properties
	}
	_, _ = l.client.Write(ack)
}

// readPacket reads one MQTT control packet (its fixed header and body),
// at most max bytes long.
func readPacket(c net.Conn, max int) ([]byte, error) {
	head := make([]byte, 1, 5)
	if _, err := io.ReadFull(c, head); err != nil {
		return nil, err
	}
	n, mult := 0, 1
	for i := 0; ; i++ {
		var b [1]byte
		if _, err := io.ReadFull(c, b[:]); err != nil {
			return nil, err
		}
		head = append(head, b[0])
		n += int(b[0]&0x7f) * mult
		if b[0]&0x80 == 0 {
			break
		}
		if mult *= 128; i == 3 {
			return nil, errors.New("mqtt: malformed remaining length")
		}
	}
	if n > max {
		return nil, errors.New("mqtt: packet too large")
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(c, body); err != nil {
		return nil, err
	}
	return append(head, body...), nil
}

// connectVersion returns the protocol level of a CONNECT packet, 0 if it
// cannot tell.
func connectVersion(pkt []byte) int {
	i := 1
	for i < len(pkt) && pkt[i]&0x80 != 0 {
		i++
	}
	i++ // past the remaining length
	if i+2 > len(pkt) {
		return 0
	}
	name := int(pkt[i])<<8 | int(pkt[i+1])
	if at := i + 2 + name; at < len(pkt) {
		return int(pkt[at])
	}
	return 0
}

// pump copies src to dst while the link is not frozen; a close or error
// of src closes both ends. On a frozen link it drops what it read and
// waits for the link to be reset.
func (p *Proxy) pump(l *link, dst, src net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if p.isFrozen(l) {
			<-l.dead
			return
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				p.drop(l, true)
				return
			}
		}
		if err != nil {
			p.drop(l, false)
			return
		}
	}
}

func (p *Proxy) isFrozen(l *link) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return l.frozen
}

// drop forgets l and closes it.
func (p *Proxy) drop(l *link, reset bool) {
	p.mu.Lock()
	delete(p.links, l)
	p.mu.Unlock()
	l.close(reset)
}

// close closes both ends of l, with a reset (no linger) when reset is set.
func (l *link) close(reset bool) {
	l.once.Do(func() {
		close(l.dead)
		for _, c := range []net.Conn{l.client, l.serverConn()} {
			if c == nil {
				continue
			}
			if tc, ok := c.(*net.TCPConn); ok && reset {
				_ = tc.SetLinger(0)
			}
			_ = c.Close()
		}
	})
}

// serverConn returns l.server; it is set once, before the pumps start,
// under Proxy.mu, and read here only after the link left the proxy's set.
func (l *link) serverConn() net.Conn { return l.server }
