package simulate

import (
	"fmt"
	"math"
	"time"

	"github.com/stormaudit/stormaudit/policy"
)

// DefaultStart is the instant the broker goes down when Config.Start is
// zero: a fixed instant, so that runs are reproducible.
var DefaultStart = time.Date(2026, 11, 30, 14, 17, 30, 0, time.UTC)

// Defaults of the Config fields left zero.
const (
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
	if c.CapacityWindow == 0 {
		c.CapacityWindow = defaultCapWindow
	}
	if c.Horizon == 0 {
		c.Horizon = c.brokerUp() + DefaultAfterUp
	}
	return c, c.check()
}

func (c *Config) check() error {
	bad := func(field, expected string, found any) error {
		return &ConfigError{Field: field, Expected: expected, Found: fmt.Sprint(found)}
	}
	switch {
	case c.Devices < 1 || c.Devices > math.MaxInt32:
		return bad("Devices", "between 1 and 2147483647", c.Devices)
	case c.Outage < 0:
		return bad("Outage", "a duration >= 0", c.Outage)
	case c.Flaps < 0:
		return bad("Flaps", "a count >= 0", c.Flaps)
	case c.Flaps > 0 && (c.FlapUp <= 0 || c.FlapDown <= 0):
		return bad("FlapUp and FlapDown", "durations > 0 when Flaps is set", fmt.Sprintf("%v and %v", c.FlapUp, c.FlapDown))
	case !(c.BadAuth >= 0 && c.BadAuth <= 1):
		return bad("BadAuth", "a fraction in [0, 1]", c.BadAuth)
	case c.DevicesPerHost < 1:
		return bad("DevicesPerHost", "a count >= 1", c.DevicesPerHost)
	case c.Capacity < 0:
		return bad("Capacity", "a count >= 0", c.Capacity)
	case c.CapacityWindow < time.Microsecond:
		return bad("CapacityWindow", "a duration of at least 1µs", c.CapacityWindow)
	case c.Tick < 0:
		return bad("Tick", "a duration >= 0", c.Tick)
	case c.Horizon <= 0 || c.Horizon > maxSimulatedRange:
		return bad("Horizon", "a duration > 0 and at most 720h", c.Horizon)
	}
	return c.Policy.Validate()
}

// hosts returns the number of hosts the devices are spread over.
func (c *Config) hosts() int { return (c.Devices + c.DevicesPerHost - 1) / c.DevicesPerHost }

// brokerUp returns when the broker is up for good, from Start.
func (c *Config) brokerUp() time.Duration {
	return c.Outage + time.Duration(c.Flaps)*(c.FlapUp+c.FlapDown)
}
