package replay

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/stormaudit/stormaudit/hashchain"
	"github.com/stormaudit/stormaudit/internal/testonly/realcorpus"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// spread returns a plan of n devices connecting once each, evenly over
// span.
func spread(n int, span time.Duration) *Plan {
	p := &Plan{Name: "test"}
	for i := range n {
		p.Devices = append(p.Devices, Device{ID: fmt.Sprintf("dev-%05d", i), Keepalive: 30})
		p.Connects = append(p.Connects, Connect{At: span * time.Duration(i) / time.Duration(n), Wait: time.Second, Device: int32(i)})
	}
	return p
}

func embedded(t *testing.T, opts BrokerOptions) *Embedded {
	b, err := StartEmbedded(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// TestEmbeddedReplay: every connect of the plan reaches the embedded
// broker, in both protocols, and the broker's own count agrees.
func TestEmbeddedReplay(t *testing.T) {
	b := embedded(t, BrokerOptions{})
	for _, proto := range []byte{MQTT311, MQTT5} {
		rep, err := Run(context.Background(), spread(200, 500*time.Millisecond), Options{Broker: b.Addr(), Protocol: proto, Hold: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if rep.ConnectsAccepted != 200 || rep.ConnectsAttempted != 200 || rep.Recovered != 200 {
			t.Errorf("protocol %d: %+v", proto, rep)
		}
	}
	if got := b.Accepted(); got != 400 {
		t.Errorf("the broker accepted %d connects, want 400", got)
	}
}

// TestCapacity: over --capacity N/s the embedded broker refuses with
// CONNACK 0x9F (MQTT 5) or return code 3 (3.1.1), and accepts N in each
// second.
func TestCapacity(t *testing.T) {
	for _, tc := range []struct {
		proto byte
		code  string
	}{{MQTT311, "0x03"}, {MQTT5, "0x9f"}} {
		b := embedded(t, BrokerOptions{Capacity: 50})
		rep, err := Run(context.Background(), spread(150, 800*time.Millisecond), Options{Broker: b.Addr(), Protocol: tc.proto, Hold: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		rep.Judge(DefaultConnackSLO, time.Minute) // these judge the broker, not the replay's lateness on a loaded machine
		// the broker's seconds begin at its start, a moment before the replay's
		if rep.ConnectsAccepted != 50 || rep.RefusedByCode[tc.code] != rep.ConnectsRefused ||
			rep.ConnectsAccepted+rep.ConnectsRefused != 150 || rep.Held || int64(rep.ConnectsRefused) != b.Refused() {
			t.Errorf("protocol %d: accepted %d, refused %v; broker refused %d; held %v", tc.proto, rep.ConnectsAccepted, rep.RefusedByCode, b.Refused(), rep.Held)
		}
	}
}

// TestBrokerGoesAway: a broker stopped mid-replay, and one that accepts
// sockets and never answers: the replay ends within its deadline with a
// report that says what happened, and leaves no goroutine or socket (the
// package's TestMain checks).
func TestBrokerGoesAway(t *testing.T) {
	b := embedded(t, BrokerOptions{})
	go func() {
		time.Sleep(250 * time.Millisecond)
		b.Stop()
	}()
	start := time.Now()
	rep, err := Run(context.Background(), spread(100, 500*time.Millisecond), Options{Broker: b.Addr(), ConnectTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if rep.ConnectsAccepted < 30 || rep.ConnectsAccepted > 70 || rep.ConnectsFailed+rep.ConnectsTimedOut != 100-rep.ConnectsAccepted || time.Since(start) > 3*time.Second {
		t.Errorf("broker stopped: %+v in %v", rep, time.Since(start))
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var held []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, c) // accepted, never answered
		}
	}()
	rep, err = Run(context.Background(), spread(20, 100*time.Millisecond), Options{Broker: l.Addr().String(), ConnectTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rep.Judge(DefaultConnackSLO, time.Minute) // these judge the broker, not the replay's lateness on a loaded machine
	if rep.ConnectsTimedOut != 20 || rep.Held {
		t.Errorf("silent broker: %+v", rep)
	}
	l.Close()
	for _, c := range held {
		c.Close()
	}
}

// TestInterrupted: a cancelled replay stops scheduling, disconnects what
// it connected, and still reports, partially.
func TestInterrupted(t *testing.T) {
	b := embedded(t, BrokerOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	rep, err := Run(ctx, spread(100, time.Second), Options{Broker: b.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Interrupted || rep.ConnectsAttempted == 0 || rep.ConnectsAttempted >= 100 || rep.ConnectsAccepted != rep.ConnectsAttempted {
		t.Errorf("%+v", rep)
	}
}

// TestAuditLog: the replay's own audit log is a collector log that
// verifies, with a record for each step of each device.
func TestAuditLog(t *testing.T) {
	b := embedded(t, BrokerOptions{Capacity: 10})
	path := filepath.Join(t.TempDir(), "replay.ndjson")
	w, _, err := hashchain.OpenWriter(path, hashchain.WriterOptions{Log: "stormaudit.test/replay"})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), spread(30, 200*time.Millisecond), Options{Broker: b.Addr(), Audit: w, LostAtStart: true, Hold: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	info, err := hashchain.ReadLog(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	// per device: disconnected, backoff_wait, then connected and stopped, or refused
	want := 30*2 + rep.ConnectsAccepted*2 + rep.ConnectsRefused
	if info.Records != int64(want) || rep.ConnectsRefused == 0 {
		t.Errorf("%d records, want %d (%d accepted, %d refused)", info.Records, want, rep.ConnectsAccepted, rep.ConnectsRefused)
	}
}

// TestServiceRecords: with Options.Service every accepted connect
// subscribes to its command topic and its audit records the SUBACK as a
// connected record of stage service, in both protocols; a refused
// connect asks for no service.
func TestServiceRecords(t *testing.T) {
	b := embedded(t, BrokerOptions{Capacity: 10})
	for _, proto := range []byte{MQTT311, MQTT5} {
		path := filepath.Join(t.TempDir(), "replay.ndjson")
		w, _, err := hashchain.OpenWriter(path, hashchain.WriterOptions{Log: "stormaudit.test/replay"})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Run(context.Background(), spread(30, 200*time.Millisecond), Options{Broker: b.Addr(), Protocol: proto, Audit: w,
			Service: true, Hold: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		served := strings.Count(string(raw), `"outcome":"connected","clean_session":false,"recorded_at"`) // both stages
		service := strings.Count(string(raw), `"stage":"service"`)
		if service != rep.ConnectsAccepted || served != 2*rep.ConnectsAccepted || rep.ConnectsRefused == 0 {
			t.Errorf("protocol %d: %d service records, %d connected records; want one service connected for each of %d accepted (%d refused)",
				proto, service, served, rep.ConnectsAccepted, rep.ConnectsRefused)
		}
	}
}

// TestMosquitto replays against a real Mosquitto the test starts on a free
// loopback port, and holds the replay's counts to the broker's own log. It
// is skipped when Mosquitto is not installed, except under CI.
func TestMosquitto(t *testing.T) {
	var logBuf bytes.Buffer
	m := startMosquitto(t, "", &logBuf)
	plan := spread(100, 500*time.Millisecond)
	// every tenth device connects a second time: the first connection is
	// dropped without DISCONNECT, and the broker sends its will
	for i := 0; i < 100; i += 10 {
		plan.Connects = append(plan.Connects, Connect{At: 600*time.Millisecond + time.Duration(i)*time.Millisecond, Device: int32(i)})
	}
	for _, proto := range []byte{MQTT311, MQTT5} {
		rep, err := Run(context.Background(), plan, Options{Broker: m.Addr(), Protocol: proto, Hold: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if rep.ConnectsAccepted != 110 || rep.WillsDelivered != 10 {
			t.Errorf("protocol %d: accepted %d (want 110), wills %d (want 10)", proto, rep.ConnectsAccepted, rep.WillsDelivered)
		}
	}
	time.Sleep(200 * time.Millisecond)
	m.Stop()
	connects, wills := 0, 0
	sc := bufio.NewScanner(strings.NewReader(logBuf.String()))
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "New client connected from") && strings.Contains(line, " as dev-") {
			connects++
		}
	}
	if connects != 220 {
		t.Errorf("the broker's log shows %d device connects, the replays made 220 (wills %d)", connects, wills)
	}
}

// mosquittoBroker is a Mosquitto a test started on a free loopback port.
type mosquittoBroker struct {
	port   int
	conf   string
	log    *realcorpus.StampedLog
	broker *realcorpus.Broker
}

// mosquitto is Debian's Mosquitto.
const mosquitto = "/usr/sbin/mosquitto"

// startMosquitto starts Mosquitto with realcorpus.MosquittoConf and the
// lines of extra after it (a later line wins), its log to logBuf; it
// skips the test when Mosquitto is not installed, except under CI.
func startMosquitto(t testing.TB, extra string, logBuf *bytes.Buffer) *mosquittoBroker {
	t.Helper()
	if _, err := exec.LookPath(mosquitto); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI needs Debian's mosquitto")
		}
		t.Skip("needs", mosquitto)
	}
	port, err := realcorpus.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	m := &mosquittoBroker{port: port, conf: filepath.Join(t.TempDir(), "mosquitto.conf"), log: realcorpus.NewStampedLog(&syncWriter{b: logBuf})}
	if err := os.WriteFile(m.conf, []byte(realcorpus.MosquittoConf(port)+extra), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop() })
	return m
}

// Addr returns the broker's host:port.
func (m *mosquittoBroker) Addr() string { return fmt.Sprintf("127.0.0.1:%d", m.port) }

// Start starts the broker, if it is stopped.
func (m *mosquittoBroker) Start() error {
	if m.broker != nil {
		return nil
	}
	b, err := realcorpus.StartBroker(mosquitto, m.conf, m.log)
	m.broker = b
	return err
}

// Stop stops it with SIGTERM: with persistence it saves its sessions.
func (m *mosquittoBroker) Stop() error {
	if m.broker != nil {
		m.broker.Stop()
		m.broker = nil
	}
	return nil
}

// syncWriter is a bytes.Buffer safe for one writer and a final reader.
type syncWriter struct{ b *bytes.Buffer }

func (w *syncWriter) Write(p []byte) (int, error) { return w.b.Write(p) }

// fakeBroker answers every connection with answer (after reading what the
// client sends first) and closes it; it returns its address.
func fakeBroker(t *testing.T, answer []byte) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 512)
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				if _, err := c.Read(buf); err != nil {
					return
				}
				c.Write(answer)
				time.Sleep(50 * time.Millisecond)
			}()
		}
	}()
	return ln.Addr().String()
}

// TestHostileBrokerPackets: a broker that declares a 256 MiB CONNACK, or
// sends a valid CONNACK and then a packet over MaxPacketSize and drops
// the connection, breaks the protocol: the replay reads neither, counts
// them, and does not say the broker held.
func TestHostileBrokerPackets(t *testing.T) {
	huge := []byte{0x20, 0xff, 0xff, 0xff, 0x7f}
	garbage := append([]byte{0x20, 0x02, 0x00, 0x00}, 0x30, 0xff, 0xff, 0xff, 0x7f)
	for _, tc := range []struct {
		name   string
		answer []byte
	}{{"huge CONNACK", huge}, {"CONNACK then garbage", garbage}} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Run(context.Background(), spread(5, 50*time.Millisecond), Options{Broker: fakeBroker(t, tc.answer),
				Hold: 300 * time.Millisecond, ConnectTimeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			rep.Judge(DefaultConnackSLO, time.Minute) // these judge the broker, not the replay's lateness on a loaded machine
			if rep.Held || rep.ProtocolErrors != 5 {
				t.Errorf("%d protocol errors, %d dropped, held %v (%s); want 5 and not held", rep.ProtocolErrors, rep.Dropped, rep.Held, rep.Verdict)
			}
		})
	}
}
