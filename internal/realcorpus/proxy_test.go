package realcorpus

import (
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// echoServer echoes every connection back and counts them; a connection
// that sends "bye" is closed by the server.
func echoServer(t *testing.T) (string, *atomic.Int32) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			go func() {
				defer c.Close()
				buf := make([]byte, 64)
				for {
					k, err := c.Read(buf)
					if err != nil {
						return
					}
					if string(buf[:k]) == "bye" {
						return
					}
					c.Write(buf[:k])
				}
			}()
		}
	}()
	return ln.Addr().String(), &n
}

func dialProxy(t *testing.T, p *Proxy) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p.Port())), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// roundTrip sends s and reads what comes back within wait.
func roundTrip(c net.Conn, s string, wait time.Duration) (string, error) {
	if _, err := c.Write([]byte(s)); err != nil {
		return "", err
	}
	c.SetReadDeadline(time.Now().Add(wait))
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	return string(buf[:n]), err
}

func TestProxyFreezeRestore(t *testing.T) {
	target, accepted := echoServer(t)
	p, err := StartProxy("127.0.0.1:0", target)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	a, b := dialProxy(t, p), dialProxy(t, p)
	for _, c := range []net.Conn{a, b} {
		if got, err := roundTrip(c, "ping", time.Second); got != "ping" || err != nil {
			t.Fatalf("before the freeze: %q, %v", got, err)
		}
	}

	p.Freeze()
	// an open connection goes silent: nothing comes back, nothing closes
	if got, err := roundTrip(a, "ping", 300*time.Millisecond); got != "" || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("frozen: %q, %v; want silence", got, err)
	}
	// the server closing its end is not passed on
	if _, err := b.Write([]byte("bye")); err != nil {
		t.Fatal(err)
	}
	b.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := b.Read(make([]byte, 8)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("frozen: the server's close reached the client: %v", err)
	}
	// a new connection is accepted and held, never reaching the server
	before := accepted.Load()
	c := dialProxy(t, p)
	if got, err := roundTrip(c, "ping", 300*time.Millisecond); got != "" || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("frozen, new connection: %q, %v; want silence", got, err)
	}
	if n := accepted.Load(); n != before {
		t.Errorf("the server accepted %d connections while the link was frozen", n-before)
	}

	p.Restore()
	// every connection the freeze held is reset
	for name, c := range map[string]net.Conn{"a": a, "b": b, "c": c} {
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, err := c.Read(make([]byte, 8))
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("%s after the restore: %v, want a reset", name, err)
		}
	}
	// new connections are forwarded again
	d := dialProxy(t, p)
	if got, err := roundTrip(d, "ping", time.Second); got != "ping" || err != nil {
		t.Errorf("after the restore: %q, %v", got, err)
	}
}

// TestProxyPassesCloses: while not frozen, a close of either end reaches
// the other.
func TestProxyPassesCloses(t *testing.T) {
	target, _ := echoServer(t)
	p, err := StartProxy("127.0.0.1:0", target)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c := dialProxy(t, p)
	if _, err := c.Write([]byte("bye")); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Read(make([]byte, 8)); err != io.EOF {
		t.Errorf("the server's close came through as %v, want EOF", err)
	}
}
