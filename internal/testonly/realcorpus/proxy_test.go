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

// TestProxyRefuses: while refusing, the proxy closes the connections it
// forwarded, answers a CONNECT with CONNACK 3 (MQTT 3.1.1) or reason 136
// (MQTT 5) without reaching the target, and forwards again after Serve.
func TestProxyRefuses(t *testing.T) {
	target, count := echoServer(t)
	p, err := StartProxy("127.0.0.1:0", target)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	addr := "127.0.0.1:" + strconv.Itoa(p.Port())
	live, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	live.Write([]byte("hi"))
	buf := make([]byte, 8)
	if _, err := io.ReadFull(live, buf[:2]); err != nil {
		t.Fatal(err)
	}
	p.Refuse()
	live.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := live.Read(buf); err == nil {
		t.Error("a forwarded connection stayed open when the proxy began to refuse")
	}
	before := count.Load()
	for _, tc := range []struct {
		level byte
		want  []byte
	}{{4, []byte{0x20, 0x02, 0x00, 0x03}}, {5, []byte{0x20, 0x03, 0x00, 0x88, 0x00}}} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		// CONNECT: "MQTT", the level, flags, keepalive 30, client id "d"
		body := []byte{0x00, 0x04, 'M', 'Q', 'T', 'T', tc.level, 0x02, 0x00, 0x1e}
		if tc.level == 5 {
			body = append(body, 0x00) // no properties
		}
		body = append(body, 0x00, 0x01, 'd')
		c.Write(append([]byte{0x10, byte(len(body))}, body...))
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		got, err := io.ReadAll(c)
		c.Close()
		if err != nil || string(got) != string(tc.want) {
			t.Errorf("level %d: got % x (%v), want % x and a close", tc.level, got, err, tc.want)
		}
	}
	if count.Load() != before {
		t.Error("a refused connection reached the target")
	}
	p.Serve()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("hi"))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(c, buf[:2]); err != nil || string(buf[:2]) != "hi" {
		t.Errorf("after Serve: %q, %v; want the echo", buf[:2], err)
	}
}
