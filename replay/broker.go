package replay

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/hooks/auth"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"
)

// BrokerOptions are the embedded broker's capacity model.
type BrokerOptions struct {
	// Capacity is how many connects the broker accepts in each second
	// (seconds counted from its start); the connects beyond are refused
	// with CONNACK 0x9F "connection rate exceeded" (MQTT 5) or return
	// code 3 "server unavailable" (3.1.1). 0: no limit.
	Capacity int
	// MaxClients bounds the clients connected at once; beyond, mochi
	// refuses with "server busy" (5) or "server unavailable" (3.1.1). 0:
	// no limit.
	MaxClients int
}

// Embedded is an MQTT broker in this process (mochi-mqtt/server/v2) on a
// loopback port, with the capacity model of BrokerOptions. It can be
// stopped and started again on the same port, as a broker restart.
type Embedded struct {
	addr string
	opts BrokerOptions

	mu    sync.Mutex
	srv   *mqtt.Server
	start time.Time

	capMu    sync.Mutex
	window   int64 // the capacity's current second, and the connects it let through
	used     int
	accepted atomic.Int64 // connects accepted, refused by the capacity
	refused  atomic.Int64
	wills    atomic.Int64 // wills sent
}

// StartEmbedded starts an embedded broker on a free 127.0.0.1 port.
func StartEmbedded(opts BrokerOptions) (*Embedded, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	b := &Embedded{addr: addr, opts: opts, window: -1}
	return b, b.Start()
}

// Addr returns the broker's host:port.
func (b *Embedded) Addr() string { return b.addr }

// Accepted and Refused count the connects the broker accepted, and those
// its capacity refused; the replay's observer is not counted, nor held to
// the capacity.
func (b *Embedded) Accepted() int64 { return b.accepted.Load() }
func (b *Embedded) Refused() int64  { return b.refused.Load() }

// Wills counts the wills the broker sent.
func (b *Embedded) Wills() int64 { return b.wills.Load() }

// Start starts the broker, if it is stopped.
func (b *Embedded) Start() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.srv != nil {
		return nil
	}
	caps := mqtt.NewDefaultServerCapabilities()
	// mochi gives every client an outbound queue of this many packet
	// pointers up front: 8,192 by default, 64 KB a client, three quarters
	// of what a replay allocates. Replayed devices publish and receive
	// next to nothing; wills are counted by a hook, not delivered.
	caps.MaximumClientWritesPending = 64
	if b.opts.MaxClients > 0 {
		caps.MaximumClients = int64(b.opts.MaxClients)
	}
	srv := mqtt.New(&mqtt.Options{Capabilities: caps, InlineClient: false,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := srv.AddHook(new(auth.AllowHook), nil); err != nil {
		return err
	}
	if err := srv.AddHook(&capacityHook{b: b, srv: srv}, nil); err != nil {
		return err
	}
	if err := srv.AddListener(listeners.NewTCP(listeners.Config{ID: "tcp", Address: b.addr})); err != nil {
		return fmt.Errorf("embedded broker: listen on %s: %w", b.addr, err)
	}
	if err := srv.Serve(); err != nil {
		return err
	}
	b.capMu.Lock()
	b.srv, b.start, b.window = srv, time.Now(), -1
	b.capMu.Unlock()
	return nil
}

// Stop stops the broker, dropping every client, as a broker that went
// down.
func (b *Embedded) Stop() error {
	b.mu.Lock()
	srv := b.srv
	b.srv = nil
	b.mu.Unlock()
	if srv == nil {
		return nil
	}
	return srv.Close()
}

// Close stops the broker for good.
func (b *Embedded) Close() error { return b.Stop() }

// capacityHook refuses the connects beyond BrokerOptions.Capacity in a
// second, and counts what it accepts.
type capacityHook struct {
	mqtt.HookBase
	b   *Embedded
	srv *mqtt.Server
}

func (h *capacityHook) ID() string { return "stormaudit-capacity" }

func (h *capacityHook) Provides(b byte) bool {
	return bytes.Contains([]byte{mqtt.OnConnect, mqtt.OnSessionEstablished, mqtt.OnWillSent}, []byte{b})
}

// OnConnect refuses a connect over the capacity: it sends the CONNACK
// itself and returns an error, which makes mochi drop the connection.
func (h *capacityHook) OnConnect(cl *mqtt.Client, pk packets.Packet) error {
	b := h.b
	if b.opts.Capacity <= 0 || isObserver(cl.ID) {
		return nil
	}
	b.capMu.Lock()
	if sec := int64(time.Since(b.start) / time.Second); sec != b.window {
		b.window, b.used = sec, 0
	}
	b.used++
	over := b.used > b.opts.Capacity
	b.capMu.Unlock()
	if !over {
		return nil
	}
	b.refused.Add(1)
	code := packets.ErrConnectionRateExceeded
	if cl.Properties.ProtocolVersion < 5 {
		code = packets.ErrServerUnavailable // return code 3 in 3.1.1
	}
	h.srv.SendConnack(cl, code, false, nil)
	return code
}

func (h *capacityHook) OnSessionEstablished(cl *mqtt.Client, _ packets.Packet) {
	if !isObserver(cl.ID) {
		h.b.accepted.Add(1)
	}
}

func (h *capacityHook) OnWillSent(*mqtt.Client, packets.Packet) { h.b.wills.Add(1) }
