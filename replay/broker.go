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
	// MaxQueued bounds the messages a session holds beyond those in
	// flight (Mosquitto's max_queued_messages, EMQX's max_mqueue_len):
	// mochi keeps both in one store per session, which is made to hold
	// MaxQueued plus MaxInflight; beyond, new messages are dropped. 0:
	// mochi's own bound, 8,192.
	MaxQueued int
	// MaxInflight bounds the QoS 1 and 2 messages sent to a client and
	// not yet acknowledged (Mosquitto's max_inflight_messages, EMQX's
	// max_inflight); the next waits for an acknowledgement. 0: no bound,
	// mochi's own way, which sends a returning session's whole store at
	// once.
	MaxInflight int
	// Persistent keeps the sessions, their subscriptions and the messages
	// they hold across Stop and Start, as Mosquitto's persistence does;
	// without it a restarted broker has forgotten them.
	Persistent bool
}

// maxStore is the most messages mochi's store of a session holds.
const maxStore = 65535

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
	setup    atomic.Bool   // connects are the replay's set-up: not counted, not limited
	store    *sessionStore // with Persistent; it outlives each mochi server
	accepted atomic.Int64  // connects accepted, refused by the capacity
	refused  atomic.Int64
	wills    atomic.Int64 // wills sent
	// acceptErrs counts the connections the listener could not accept
	// for a reason of this machine
	acceptErrs acceptErrors
}

// StartEmbedded starts an embedded broker on a free 127.0.0.1 port.
func StartEmbedded(opts BrokerOptions) (*Embedded, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	b := &Embedded{addr: addr, opts: opts, window: -1}
	if opts.Persistent {
		b.store = newSessionStore()
	}
	return b, b.Start()
}

// Validate says what is wrong with o, naming the flag a user sets.
func (o *BrokerOptions) Validate() error {
	if o.MaxQueued < 0 || o.MaxInflight < 0 || o.MaxQueued+o.MaxInflight > maxStore {
		return fmt.Errorf("--max-queued %d and --max-inflight %d: expected counts >= 0 that add up to at most %d (a mochi session's store)",
			o.MaxQueued, o.MaxInflight, maxStore)
	}
	return nil
}

// Setup makes the broker neither count nor limit connects while on: the
// replay's set-up of the devices' sessions (Options.Setup).
func (b *Embedded) Setup(on bool) { b.setup.Store(on) }

// Addr returns the broker's host:port.
func (b *Embedded) Addr() string { return b.addr }

// Accepted and Refused count the connects the broker accepted, and those
// its capacity refused; the replay's observer is not counted, nor held to
// the capacity.
func (b *Embedded) Accepted() int64 { return b.accepted.Load() }
func (b *Embedded) Refused() int64  { return b.refused.Load() }

// AcceptErrors counts, by error, the connections the broker's listener
// could not accept for a reason of this machine (no descriptor, no
// buffer): a replay in the same process that asked more of it than it
// has (Options.AcceptErrors).
func (b *Embedded) AcceptErrors() map[string]int64 { return b.acceptErrs.counts() }

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
	if b.opts.MaxQueued > 0 {
		caps.MaximumInflight = uint16(b.opts.MaxQueued + b.opts.MaxInflight)
		// what a session holds can be sent to it at once while it is
		// connected: mochi drops what its outbound queue has no room for
		caps.MaximumClientWritesPending = int32(max(64, int(caps.MaximumInflight)))
	}
	srv := mqtt.New(&mqtt.Options{Capabilities: caps, InlineClient: false,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := srv.AddHook(new(auth.AllowHook), nil); err != nil {
		return err
	}
	if err := srv.AddHook(&capacityHook{b: b, srv: srv}, nil); err != nil {
		return err
	}
	if b.store != nil {
		if err := srv.AddHook(b.store, nil); err != nil {
			return err
		}
	}
	l, err := b.listener()
	if err == nil {
		err = srv.AddListener(l)
	}
	if err != nil {
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
	if b.opts.Capacity <= 0 || isObserver(cl.ID) || b.setup.Load() {
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
	if !isObserver(cl.ID) && !h.b.setup.Load() {
		h.b.accepted.Add(1)
	}
}

func (h *capacityHook) OnWillSent(*mqtt.Client, packets.Packet) { h.b.wills.Add(1) }
