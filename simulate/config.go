package simulate

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/stormaudit/stormaudit/policy"
)

// DefaultStart is the instant the broker goes down when Config.Start is
// zero: a fixed instant, so that runs are reproducible.
var DefaultStart = time.Date(2026, 11, 30, 14, 17, 30, 0, time.UTC)

// Defaults of the Config fields left zero.
// The range of instants a run may cover: records carry nanosecond Unix
// timestamps, which ingest reads for the years 1678 to 2261.
var (
	earliestStart = time.Date(1678, 1, 1, 0, 0, 0, 0, time.UTC)
	latestEnd     = time.Date(2261, 12, 31, 0, 0, 0, 0, time.UTC)
)

const (
	ServiceTimeout    = 5 * time.Second       // how long a device waits for its service to answer
	DefaultLatency    = 50 * time.Millisecond // socket-open to CONNACK or failure
	DefaultAfterUp    = 15 * time.Minute      // horizon after the broker is up for good
	DefaultDevicePfx  = "dev-"
	DefaultHostPfx    = "gw-"
	defaultCapWindow  = time.Second
	maxSimulatedRange = 30 * 24 * time.Hour // the longest horizon accepted
)

// Config describes one simulated outage. The zero values of the optional
// fields select the defaults above.
type Config struct {
	Devices int           // fleet size, at least 1
	Outage  time.Duration // how long the broker is down from Start
	Policy  policy.Policy // the fleet's reconnect policy
	Seed    uint64        // seed of every device's random source

	Start   time.Time     // the instant of the drop (default DefaultStart)
	Horizon time.Duration // the end of the run, from Start (default: broker up for good + DefaultAfterUp)
	Latency time.Duration // socket-open to CONNACK or failure (default DefaultLatency; at least 1µs: negative asks for that minimum)

	// Pathologies.
	SameSeed       bool          // every device draws from the same seed (a copied image)
	Tick           time.Duration // timer quantisation: delays rounded up to a multiple (0: none)
	Flaps          int           // times the broker comes back briefly and drops again
	FlapUp         time.Duration // how long each flap keeps the broker up
	FlapDown       time.Duration // how long the broker is down after each flap
	BadAuth        float64       // fraction of devices with bad credentials, in [0, 1]
	DevicesPerHost int           // devices sharing one host_id and its connect spacing (default 1)
	Capacity       int           // connects the broker accepts per window (0: unlimited)
	CapacityWindow time.Duration // the capacity's window (default 1 s)
	// ColdBoot powers the fleet up at Start instead of dropping it: no
	// device was connected before, none records a disconnect, and each
	// waits a uniform random startup delay in [0, the policy's
	// startup_spread_s) before its first attempt. The broker is down for
	// Outage from Start as usual (0: up from the start).
	ColdBoot bool
	// OutboxPerS gives every device a local outbox that queues this many
	// QoS 1 messages per second while the device is not connected (0: no
	// outbox, and no outbox fields in the records). It holds at most the
	// policy's outbox_limit messages (0: no limit), dropping the oldest.
	OutboxPerS float64
	// AttemptIDs writes an attempt_id on each record of an attempt (its
	// backoff_wait, rate_limited_waits and outcome): the client id and
	// the attempt's number, "dev-0001-a3".
	AttemptIDs bool
	// FlushBatch is how many outbox messages a connected device sends per
	// second (0: the whole outbox at once, on the connect).
	FlushBatch int
	// Service records the service stage (docs/format.md): after each
	// connect once the broker is up for good, the device's first useful
	// exchange, a connected record of stage service ServiceLatency later.
	// ServiceDown keeps the application behind the broker down that long
	// after the broker is up for good (it implies Service): a device
	// connected before then waits ServiceTimeout for an answer, records a
	// service attempt_failed (class transient), and asks again, until the
	// service is back.
	Service     bool
	ServiceDown time.Duration
	// CommandsPerS is how many QoS 1 commands a second the broker queues
	// for each device's persistent session while it is away (0: none; a
	// policy with clean_session queues none). They come after its connect
	// once the broker is up for good, and its first useful exchange (the
	// service record; it implies Service) counts them: inbound_redelivered,
	// and inbound_expired for those queued more than CommandTTL before the
	// connect (0: commands never expire, and inbound_expired is not
	// written).
	CommandsPerS float64
	CommandTTL   time.Duration
	// BrokerLog, when set, receives the broker's log of the run, as
	// Mosquitto writes it with log_type all: every accept of a device,
	// with its Last Will and its own retained "online" status, and the
	// broker's returns (see brokerlog.go). Not with AddressDown (the broker
	// does not die there).
	BrokerLog io.Writer
	// AddressDown makes the outage a failed address service (DHCP)
	// rather than a dead broker: the link stays up and the broker too,
	// but while it is down a device's attempts fail at the address stage
	// (stage address backoff_wait and attempt_failed records); once it is
	// back, the device records its address (connected, stage address) and
	// its session attempt follows at once. Flaps are the address service's.
	AddressDown bool
	// Library, when set, gives every device the MQTT library's own
	// automatic reconnect loop beside its manager, under this policy (a
	// second reconnect owner; see the package documentation).
	Library *policy.Policy

	// OnOpen, when set, hears every socket-open of the run whose outcome
	// comes before the horizon: the manager's, which the records show,
	// and the library loop's, which they do not. It is called from the
	// model's goroutine, in no promised order.
	OnOpen func(Open)
}

// Open is one socket-open of a run.
type Open struct {
	Device  int           // the device's index: its client id is DefaultDevicePfx and Device+1
	At      time.Duration // from the drop
	Delay   float64       // the delay drawn before it, s (the manager's; 0 for the library's)
	Attempt int32         // the manager's attempt counter
	Library bool          // a socket-open of the library's own reconnect loop
}

// ConfigError is a Config field with a value it cannot have.
type ConfigError struct {
	Field    string // the Config field
	Expected string
	Found    string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("%s: expected %s, found %s", e.Field, e.Expected, e.Found)
}

// withDefaults returns c with its defaults filled in, or the first field
// that is out of range.
func (c Config) withDefaults() (Config, error) {
	if c.Start.IsZero() {
		c.Start = DefaultStart
	}
	if c.Latency == 0 {
		c.Latency = DefaultLatency
	} else if c.Latency < time.Microsecond {
		c.Latency = time.Microsecond // every attempt takes time, or a hot loop would stop the clock
	}
	if c.DevicesPerHost == 0 {
		c.DevicesPerHost = 1
	}
	if c.DevicesPerHost > c.Devices && c.Devices > 0 {
		c.DevicesPerHost = c.Devices // one host for all: more changes nothing
	}
	if c.CapacityWindow == 0 {
		c.CapacityWindow = defaultCapWindow
	}
	if err := c.checkSchedule(); err != nil {
		return c, err
	}
	if c.Horizon == 0 {
		c.Horizon = c.brokerUp() + DefaultAfterUp
		if c.ColdBoot && c.Policy.StartupSpreadS > 0 && c.Policy.StartupSpreadS <= maxSimulatedRange.Seconds() {
			c.Horizon = max(c.Horizon, time.Duration(c.Policy.StartupSpreadS*float64(time.Second))+DefaultAfterUp) // the last device boots, then has as long
		}
	}
	return c, c.check()
}

// Validate reports the first field of c that is out of range, as Run
// would, without running anything: a caller checks before it creates
// its outputs.
func (c Config) Validate() error {
	_, err := c.withDefaults()
	return err
}

// checkSchedule checks the broker's schedule before the default horizon
// is derived from it: its length must not overflow.
func (c *Config) checkSchedule() error {
	bad := func(field, expected string, found any) error {
		return &ConfigError{Field: field, Expected: expected, Found: fmt.Sprint(found)}
	}
	switch {
	case c.Outage < 0 || c.Outage > maxSimulatedRange:
		return bad("Outage", "a duration between 0 and 720h", c.Outage)
	case c.Flaps < 0:
		return bad("Flaps", "a count >= 0", c.Flaps)
	case c.Flaps > 0 && (c.FlapUp <= 0 || c.FlapDown <= 0):
		return bad("FlapUp and FlapDown", "durations > 0 when Flaps is set", fmt.Sprintf("%v and %v", c.FlapUp, c.FlapDown))
	case c.Flaps > 0 && (c.FlapUp > maxSimulatedRange || c.FlapDown > maxSimulatedRange ||
		c.FlapUp+c.FlapDown > (maxSimulatedRange-c.Outage)/time.Duration(c.Flaps)):
		return bad("Flaps", "flaps that end within 720h of the drop", fmt.Sprintf("%d of %v up and %v down", c.Flaps, c.FlapUp, c.FlapDown))
	}
	return nil
}

func (c *Config) check() error {
	bad := func(field, expected string, found any) error {
		return &ConfigError{Field: field, Expected: expected, Found: fmt.Sprint(found)}
	}
	switch {
	case c.Devices < 1 || c.Devices > math.MaxInt32:
		return bad("Devices", "between 1 and 2147483647", c.Devices)
	case c.Start.Before(earliestStart) || c.Start.Add(c.Horizon).After(latestEnd):
		return bad("Start", "an instant from 1678 on, with the run ending before 2262 (the range of nanosecond timestamps)", c.Start.Format(time.RFC3339))
	case !(c.BadAuth >= 0 && c.BadAuth <= 1):
		return bad("BadAuth", "a fraction in [0, 1]", c.BadAuth)
	case c.DevicesPerHost < 1:
		return bad("DevicesPerHost", "a count >= 1", c.DevicesPerHost)
	case c.Capacity < 0:
		return bad("Capacity", "a count >= 0", c.Capacity)
	case c.CapacityWindow < time.Microsecond:
		return bad("CapacityWindow", "a duration of at least 1µs", c.CapacityWindow)
	case !(c.OutboxPerS >= 0 && c.OutboxPerS <= 1e6):
		return bad("OutboxPerS", "a rate in [0, 1000000] messages per second", c.OutboxPerS)
	case c.FlushBatch < 0:
		return bad("FlushBatch", "a count >= 0", c.FlushBatch)
	case c.AddressDown && c.Library != nil:
		return bad("AddressDown", "no library reconnect loop (--library-reconnect) with a failed address service", "both")
	case c.ColdBoot && c.Library != nil:
		return bad("ColdBoot", "no library reconnect loop (--library-reconnect) with a cold boot", "both")
	case c.Tick < 0:
		return bad("Tick", "a duration >= 0", c.Tick)
	case c.BrokerLog != nil && c.AddressDown:
		return bad("BrokerLog", "no broker log with AddressDown: the broker stays up, and its keepalive timeouts are not modelled", "both")
	case !(c.CommandsPerS >= 0 && c.CommandsPerS <= 1e6):
		return bad("CommandsPerS", "a rate in [0, 1000000] commands per second", c.CommandsPerS)
	case c.CommandTTL < 0 || c.CommandTTL > maxSimulatedRange:
		return bad("CommandTTL", "a duration between 0 and 720h", c.CommandTTL)
	case c.ServiceDown < 0 || c.ServiceDown > maxSimulatedRange:
		return bad("ServiceDown", "a duration between 0 and 720h", c.ServiceDown)
	case c.Horizon <= 0 || c.Horizon > maxSimulatedRange:
		return bad("Horizon", "a duration > 0 and at most 720h", c.Horizon)
	}
	if c.Library != nil {
		if err := c.Library.Validate(); err != nil {
			return &ConfigError{Field: "Library", Expected: "a valid policy", Found: err.Error()}
		}
	}
	return c.Policy.Validate()
}

// hosts returns the number of hosts the devices are spread over.
func (c *Config) hosts() int { return (c.Devices + c.DevicesPerHost - 1) / c.DevicesPerHost }

// brokerUp returns when the broker is up for good, from Start.
func (c *Config) brokerUp() time.Duration {
	return c.Outage + time.Duration(c.Flaps)*(c.FlapUp+c.FlapDown)
}

// lostAfter returns when a session that came up at up (µs from the drop;
// <= 0: before it) was lost: at the drop, or at the end of the flap it
// came up in.
func (c *Config) lostAfter(up int64) int64 {
	if up <= 0 {
		return 0
	}
	period := (c.FlapUp + c.FlapDown).Microseconds()
	for k := range int64(c.Flaps) {
		if down := c.Outage.Microseconds() + k*period + c.FlapUp.Microseconds(); down >= up {
			return down
		}
	}
	return 0 // a session of the broker up for good is not lost
}

// MemoryEstimate returns about how many bytes Run needs for cfg: the
// devices' state and the events queued for them, measured on 1 and 4
// million devices (290 and 910 MB; 880 MB for 1 million with a library
// loop, whose state lives in a table beside the queue), rounded up.
func MemoryEstimate(cfg Config) int64 {
	per := int64(250)
	if cfg.Library != nil {
		per = 900
	}
	return 100<<20 + int64(cfg.Devices)*per
}
