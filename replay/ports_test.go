package replay

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"testing"
	"time"
)

// TestLocalPorts: the devices' connections take the range's ports in
// turn, pass over a port bound elsewhere, give theirs back when closed,
// and leave the choice to connect() when none of the range is left.
func TestLocalPorts(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	// three ports of the range, below the ephemeral range (where the
	// kernel gives no other connection one): the first is bound elsewhere
	busy, lo := freeBlock(t)
	defer busy.Close()
	p := newLocalPorts(lo, lo+2)
	p.next = 0 // from the first, which is bound elsewhere
	deadline := time.Now().Add(5 * time.Second)
	var conns []net.Conn
	for range 2 {
		c, err := p.dial(context.Background(), l.Addr().String(), nil, deadline)
		if err != nil {
			t.Skipf("a port next to %d is taken on this machine: %v", lo, err)
		}
		conns = append(conns, c)
	}
	for k, c := range conns {
		if got := c.LocalAddr().(*net.TCPAddr).Port; got != lo+1+k {
			t.Errorf("connection %d from port %d, want %d", k, got, lo+1+k)
		}
	}
	// none of the range is left: connect() chooses one
	c3, err := p.dial(context.Background(), l.Addr().String(), nil, deadline)
	if err != nil {
		t.Fatal(err)
	}
	if got := c3.LocalAddr().(*net.TCPAddr).Port; got >= lo && got <= lo+2 {
		t.Errorf("with the range taken, a connection from port %d of it", got)
	}
	c3.Close()
	conns[0].(*portConn).SetLinger(0) // as a drop does: no TIME_WAIT
	conns[0].Close()
	c, err := p.dial(context.Background(), l.Addr().String(), nil, deadline)
	if err != nil || c.LocalAddr().(*net.TCPAddr).Port != lo+1 {
		t.Fatalf("after a close: %v, want port %d again", err, lo+1)
	}
	c.Close()
	conns[1].Close()
	if newLocalPorts(0, 10) != nil || newLocalPorts(10, 9) != nil {
		t.Error("an empty range gives ports")
	}
}

// freeBlock returns a listener on a port lo of [20000, 30000) and lo,
// where lo+1 and lo+2 were free a moment ago: below Linux's default
// ephemeral range, so that no connection of another test takes them.
func freeBlock(t *testing.T) (net.Listener, int) {
	t.Helper()
	for lo := 20000 + 3*rand.IntN(3000); lo < 30000; lo += 3 {
		busy, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", lo))
		if err != nil {
			continue
		}
		free := true
		for _, port := range []int{lo + 1, lo + 2} {
			l, err := net.Listen("tcp", fmt.Sprintf(":%d", port))
			if err != nil {
				free = false
				break
			}
			l.Close()
		}
		if free {
			return busy, lo
		}
		busy.Close()
	}
	t.Skip("no three free ports from 20000 to 30000")
	return nil, 0
}
