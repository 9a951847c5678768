package realcorpus

import (
	"time"

	"github.com/stormaudit/stormaudit/policy"
)

// The files of a scenario's directory.
const (
	ClientLog  = "clients.ndjson"
	BrokerLog  = "broker.log"
	PolicyFile = "policy.toml"
	MetaFile   = "meta.json"
)

// The clients a scenario runs.
const (
	PythonPaho = "python paho-mqtt"
	GoPaho     = "go paho.mqtt.golang"
)

// GoPahoVersion is the paho.mqtt.golang the Go fleet is built with (go.mod).
const GoPahoVersion = "v1.5.1"

// OutageKind is how the recorder takes the broker away from the fleet.
type OutageKind string

const (
	// Kill kills the broker with SIGKILL and restarts it after the
	// outage: every client sees its socket reset at once.
	Kill OutageKind = "kill"
	// Freeze makes the link between the fleet and the broker silent: the
	// proxy between them stops forwarding in both directions and closes
	// nothing, so the broker stays up and each side finds out only by its
	// keepalive. After the outage the proxy resets the frozen connections
	// (as a NAT that lost its state would) and forwards new ones again.
	Freeze OutageKind = "freeze"
	// Refuse makes the broker's front refuse service: the proxy between
	// the fleet and the broker closes every connection and answers every
	// CONNECT with CONNACK 3 (server unavailable) until the outage ends,
	// while the broker stays up: a healthy network whose application
	// service failed. Then it forwards again.
	Refuse OutageKind = "refuse"
)

// Outage is one fault the recorder injects.
type Outage struct {
	Kind OutageKind
	// Before is how long the recorder waits before the fault: counted from
	// the end of the fleet's Boot+Settle for the first outage, from the end
	// of the previous outage (the broker running again, or the link
	// restored) for the others.
	Before time.Duration
	// Down is how long the broker stays dead or the link frozen.
	Down time.Duration
}

// ClockSkew sets some devices' clocks off: a Fraction of them, chosen by
// the fleet's seeded random numbers, stamp their records Offset late
// (ahead of the true time when Offset is positive).
type ClockSkew struct {
	Fraction float64
	Offset   time.Duration
	// Step steps each skewed clock back to the true time right after the
	// device's first reconnect after a loss (that connected record still
	// carries the offset): an NTP fix that lands once the network is back.
	Step bool
}

// Scenario is one recording: a fleet, its clients, and the outages.
type Scenario struct {
	Name        string
	Description string
	Client      string // PythonPaho or GoPaho
	// Mode is, for PythonPaho, fleet.py's mode: "library", "manual" or
	// "churn".
	Mode      string
	Prefix    string // client ids are Prefix-0001 ...
	Devices   int
	Churn     float64 // fraction of devices that restart healthy connections (manual mode)
	Keepalive int     // seconds
	Seed      int64
	Policy    policy.Policy // the managers' policy
	Skew      ClockSkew     // devices whose clocks are off (PythonPaho only)
	// Boot is the time the devices boot over, Settle the time the fleet
	// runs connected before the first outage, After how long the recorder
	// waits once the last outage is over.
	Boot, Settle time.Duration
	Outages      []Outage
	After        time.Duration
	// Live marks the scenarios whose Short variant TestRecordLive records.
	Live bool
	// Awaited makes the recording wait for states rather than times: the
	// outage begins once every device is connected (Boot and Settle are
	// the least wait), and the fleet stops once every lost device is back
	// and has kept its connection (After is the least wait, 4 x After the
	// most), so that a busy machine's slow clients change how long it
	// takes, not what it shows. Short sets it.
	Awaited bool
	// ServiceDown, when set, has the devices ask for their first useful
	// service after each connect, from the recorder's application (App),
	// and keeps the application down that long after the broker came
	// back from each outage: the devices connect but are not served
	// (PythonPaho manual mode only; Kill outages).
	ServiceDown time.Duration
	// Cut ends the log during the recovery: After the last outage the
	// recorder kills the fleet (SIGKILL) instead of stopping it, so no
	// device writes stopped, as a collector that stopped collecting while
	// devices still waited out their backoffs (PythonPaho only).
	Cut bool
	// Presence gives each device a Last Will ("offline", retained, QoS 1,
	// on status/ID) and has it say "online" there (retained) on each
	// connect and "offline" before it stops (PythonPaho only); the broker
	// logs everything (log_type all), so that its log shows the wills and
	// the status publishes. Persistence keeps the broker's retained
	// messages and sessions across its restarts (a database in a
	// directory of the recorder's).
	Presence, Persistence bool
	// Outbox gives each device a measurement a second, kept while it is
	// offline in an outbox of at most Outbox (the oldest dropped), its
	// records carrying outbox_depth, outbox_flushed and outbox_dropped;
	// CommandTTL starts the recorder's commander, which sends every device
	// a command a second valid for CommandTTL, and has the devices run
	// them, counting inbound_redelivered, inbound_expired and
	// inbound_duplicates (PythonPaho only).
	Outbox     int
	CommandTTL time.Duration
}

// Down is how long the first outage lasts.
func (sc Scenario) Down() time.Duration {
	if len(sc.Outages) == 0 {
		return 0
	}
	return sc.Outages[0].Down
}

// proxied reports whether sc's fleet reaches the broker through the
// recorder's proxy (a Freeze or a Refuse needs it).
func (sc Scenario) proxied() bool {
	for _, o := range sc.Outages {
		if o.Kind == Freeze || o.Kind == Refuse {
			return true
		}
	}
	return false
}

// managerPolicy is the reference manager's policy every scenario runs:
// full jitter from 1 s, doubling, capped at 30 s.
var managerPolicy = policy.Policy{Name: "corpus manager", Delay: policy.FullJitter, BaseDelayS: 1, MaxDelayS: 30,
	Multiplier: 2, KeepaliveS: 30, CleanSession: false}

// withKeepalive returns p with keepalive s seconds.
func withKeepalive(p policy.Policy, s int) policy.Policy {
	p.KeepaliveS = float64(s)
	return p
}

// kill is a single SIGKILL outage of d, right after the fleet settled.
func kill(d time.Duration) []Outage { return []Outage{{Kind: Kill, Down: d}} }

// Scenarios are the recordings of the corpus.
var Scenarios = []Scenario{
	{
		Name: "paho-py-library",
		Description: "Python paho-mqtt 1.6 with loop_start(): the library's own automatic reconnect (1, 2, 4 ... s, no jitter) " +
			"runs beside the reference manager, which does not record disconnects. Both own the connection.",
		Client: PythonPaho, Mode: "library", Prefix: "pylib", Devices: 150, Keepalive: 30, Seed: 11, Policy: managerPolicy,
		Boot: 4 * time.Second, Settle: 6 * time.Second, Outages: kill(14 * time.Second), After: 60 * time.Second, Live: true,
	},
	{
		Name: "paho-py-manual",
		Description: "Python paho-mqtt 1.6 driven by the reference manager alone (client.loop() in the manager's thread), " +
			"which records disconnects; 5% of the devices restart a healthy connection every 8-16 s without recording why.",
		Client: PythonPaho, Mode: "manual", Prefix: "pyman", Devices: 100, Churn: 0.05, Keepalive: 30, Seed: 12, Policy: managerPolicy,
		Boot: 4 * time.Second, Settle: 6 * time.Second, Outages: kill(20 * time.Second), After: 70 * time.Second, Live: true,
	},
	{
		Name: "paho-go",
		Description: "Go paho.mqtt.golang with AutoReconnect off, driven by the reference manager alone, " +
			"which does not record disconnects: the loss is in the log only as the new attempts.",
		Client: GoPaho, Prefix: "gopaho", Devices: 200, Keepalive: 30, Seed: 13, Policy: managerPolicy,
		Boot: 4 * time.Second, Settle: 6 * time.Second, Outages: kill(25 * time.Second), After: 80 * time.Second, Live: true,
	},
	{
		Name: "paho-py-churn",
		Description: "Python paho-mqtt 1.6 with loop_start() (the library's own automatic reconnect runs beside the manager) " +
			"and a reference manager that churns: after a successful connect it goes straight back to drawing a delay and " +
			"connecting again instead of waiting for a loss, so every device tears down its live session every half second or so " +
			"(a delay drawn below 1 s). It does not record disconnects.",
		Client: PythonPaho, Mode: "churn", Prefix: "pychurn", Devices: 200, Keepalive: 30, Seed: 14, Policy: managerPolicy,
		Boot: 4 * time.Second, Settle: 11 * time.Second, Outages: kill(30 * time.Second), After: 25 * time.Second,
	},
	{
		Name: "paho-py-clockskew",
		Description: "Python paho-mqtt 1.6 driven by the reference manager alone (client.loop()), which records disconnects; " +
			"a quarter of the devices have clocks 4 s fast and stamp their records 4 s ahead (meta.json's clock_offsets_s).",
		Client: PythonPaho, Mode: "manual", Prefix: "pyskew", Devices: 200, Keepalive: 30, Seed: 15, Policy: managerPolicy,
		Skew: ClockSkew{Fraction: 0.25, Offset: 4 * time.Second},
		Boot: 4 * time.Second, Settle: 6 * time.Second, Outages: kill(30 * time.Second), After: 70 * time.Second,
	},
	{
		Name: "paho-py-clockstep",
		Description: "Python paho-mqtt 1.6 driven by the reference manager alone (client.loop()), which records disconnects; " +
			"a quarter of the devices have clocks 4 s fast that step back to the true time right after their first reconnect " +
			"(meta.json's clock_offsets_s before the step); the broker dies twice: down 20 s, up 20 s, down 15 s.",
		Client: PythonPaho, Mode: "manual", Prefix: "pystep", Devices: 200, Keepalive: 30, Seed: 22, Policy: managerPolicy,
		Skew: ClockSkew{Fraction: 0.25, Offset: 4 * time.Second, Step: true},
		Boot: 4 * time.Second, Settle: 6 * time.Second,
		Outages: []Outage{{Kind: Kill, Down: 20 * time.Second}, {Kind: Kill, Before: 20 * time.Second, Down: 15 * time.Second}},
		After:   60 * time.Second,
	},
	{
		Name: "paho-py-silent",
		Description: "Python paho-mqtt 1.6 driven by the reference manager alone (client.loop()), which records disconnects, " +
			"through a proxy that goes silent for 60 s: the broker stays up and times each session out after 1.5 keepalives, " +
			"each client finds out only when a ping goes unanswered (paho reason code 16, MQTT_ERR_KEEPALIVE); then the proxy resets the dead connections.",
		Client: PythonPaho, Mode: "manual", Prefix: "pysilent", Devices: 200, Keepalive: 20, Seed: 16,
		Policy: withKeepalive(managerPolicy, 20),
		Boot:   20 * time.Second, Settle: 25 * time.Second, Outages: []Outage{{Kind: Freeze, Down: 60 * time.Second}},
		After: 60 * time.Second,
	},
	{
		Name: "paho-py-silent-aligned",
		Description: "Python paho-mqtt 1.6 driven by the reference manager alone (client.loop()), which records disconnects, " +
			"keepalive 20 s, the devices all booted within 1 s (their keepalive phases aligned), " +
			"through a proxy that goes silent for 60 s: the broker stays up and times each session out, " +
			"and every client notices within the same second (paho reason code 16), one to two keepalives after the link died.",
		Client: PythonPaho, Mode: "manual", Prefix: "pyaligned", Devices: 200, Keepalive: 20, Seed: 21,
		Policy: withKeepalive(managerPolicy, 20),
		Boot:   time.Second, Settle: 25 * time.Second, Outages: []Outage{{Kind: Freeze, Down: 60 * time.Second}},
		After: 60 * time.Second,
	},
	{
		Name: "paho-go-twice",
		Description: "Go paho.mqtt.golang with AutoReconnect off, driven by the reference manager alone, which does not " +
			"record disconnects; the broker dies twice: down 15 s, up 12 s (part of the fleet not back yet), down 15 s again.",
		Client: GoPaho, Prefix: "gotwice", Devices: 200, Keepalive: 30, Seed: 17, Policy: managerPolicy,
		Boot: 4 * time.Second, Settle: 6 * time.Second,
		Outages: []Outage{{Kind: Kill, Down: 15 * time.Second}, {Kind: Kill, Before: 12 * time.Second, Down: 15 * time.Second}},
		After:   60 * time.Second,
	},
	{
		Name: "paho-py-refused",
		Description: "Python paho-mqtt 1.6 driven by the reference manager alone (client.loop()), which records disconnects " +
			"and refusals, through a proxy that closes every connection and answers every CONNECT with CONNACK 3 " +
			"(server unavailable) for 30 s while the broker stays up: a failing application service on a healthy network.",
		Client: PythonPaho, Mode: "manual", Prefix: "pyrefused", Devices: 200, Keepalive: 30, Seed: 18, Policy: managerPolicy,
		Boot: 4 * time.Second, Settle: 6 * time.Second, Outages: []Outage{{Kind: Refuse, Down: 30 * time.Second}},
		After: 60 * time.Second,
	},
	{
		Name: "paho-py-service",
		Description: "Python paho-mqtt 1.6 driven by the reference manager alone (client.loop()), which records disconnects; " +
			"after each connect a device subscribes to its command topic, publishes a hello and counts the application's answer " +
			"as its first useful service (stage service; a service attempt_failed after 5 s without one, and a new hello). " +
			"The broker is down 20 s; the application behind it comes back 30 s after the broker: the devices connect but are not served.",
		Client: PythonPaho, Mode: "manual", Prefix: "pyservice", Devices: 200, Keepalive: 30, Seed: 20, Policy: managerPolicy,
		Boot: 4 * time.Second, Settle: 6 * time.Second, Outages: kill(20 * time.Second), After: 60 * time.Second,
		ServiceDown: 30 * time.Second,
	},
	{
		Name: "paho-py-cut",
		Description: "Python paho-mqtt 1.6 driven by the reference manager alone (client.loop()), which records disconnects; " +
			"the broker is down 45 s and the log ends 5 s after its return (the fleet is killed, nobody writes stopped), " +
			"while most devices still wait out backoffs of up to 30 s.",
		Client: PythonPaho, Mode: "manual", Prefix: "pycut", Devices: 200, Keepalive: 30, Seed: 19, Policy: managerPolicy,
		Boot: 4 * time.Second, Settle: 6 * time.Second, Outages: kill(45 * time.Second), After: 5 * time.Second, Cut: true,
	},
	{
		Name: "paho-py-presence",
		Description: "Python paho-mqtt 1.6 driven by the reference manager alone (client.loop()), keepalive 20 s; each device " +
			"declares a Last Will (offline, retained, on status/ID) and says online there (retained) on each connect. The broker " +
			"logs everything (log_type all) and keeps its retained messages across restarts (persistence). First a 60 s silent " +
			"link: the broker times each session out and sends its will; then the broker is killed for 20 s: no will goes out, " +
			"and the restarted broker still holds every device's retained online until the device says it again.",
		Client: PythonPaho, Mode: "manual", Prefix: "pypres", Devices: 200, Keepalive: 20, Seed: 23,
		Policy: withKeepalive(managerPolicy, 20),
		Boot:   20 * time.Second, Settle: 25 * time.Second,
		Outages: []Outage{{Kind: Freeze, Down: 60 * time.Second}, {Kind: Kill, Before: 30 * time.Second, Down: 20 * time.Second}},
		After:   40 * time.Second, Presence: true, Persistence: true,
	},
	{
		Name: "paho-py-outbox",
		Description: "Python paho-mqtt 1.6 driven by the reference manager alone (client.loop()), keepalive 20 s, through the " +
			"recorder's proxy; each device takes a measurement a second and keeps it while offline in an outbox of at most 20 " +
			"(the oldest dropped), runs the commands the recorder's commander sends it every second (valid for 15 s, ignored " +
			"when they come later), and declares a will and says online as in paho-py-presence. The broker logs everything, " +
			"without persistence. First a 45 s silent link (the broker keeps each session and queues its commands until it " +
			"times it out), then the broker is killed for 30 s (its queues and retained messages die with it).",
		Client: PythonPaho, Mode: "manual", Prefix: "pyout", Devices: 200, Keepalive: 20, Seed: 24,
		Policy: withKeepalive(managerPolicy, 20),
		Boot:   20 * time.Second, Settle: 25 * time.Second,
		Outages: []Outage{{Kind: Freeze, Down: 45 * time.Second}, {Kind: Kill, Before: 30 * time.Second, Down: 30 * time.Second}},
		After:   40 * time.Second, Presence: true, Outbox: 20, CommandTTL: 15 * time.Second,
	},
}

// Meta is a scenario's meta.json.
type Meta struct {
	Scenario    string  `json:"scenario"`
	Description string  `json:"description"`
	Devices     int     `json:"devices"`
	Client      string  `json:"client"`
	Mode        string  `json:"mode,omitempty"`
	Churn       float64 `json:"churn,omitempty"`
	KeepaliveS  int     `json:"keepalive_s,omitempty"`
	// BootS is the time the devices booted over, s (Scenario.Boot); 0 in
	// the recordings made before the field.
	BootS float64 `json:"boot_s,omitempty"`
	Cut   bool    `json:"cut,omitempty"` // the log ends during the recovery: no device wrote stopped
	// ServiceDownS is how long the application stayed down after the
	// broker came back (ServiceDown), s; 0 when the scenario has none.
	ServiceDownS float64 `json:"service_down_s,omitempty"`
	DownS        float64 `json:"down_s"` // the first outage's
	// Outages are the faults in the order they were injected; the three
	// first scenarios were recorded before this field and have none.
	Outages []MetaOutage `json:"outages,omitempty"`
	// ClockOffsetsS holds, for each device whose clock was off, how far
	// ahead (seconds) its recorded_at stamps are of the true time.
	ClockOffsetsS map[string]float64 `json:"clock_offsets_s,omitempty"`
	// ClockStep is true when those clocks stepped back to the true time
	// right after the device's first reconnect after a loss.
	ClockStep bool `json:"clock_step,omitempty"`
	// Presence and Persistence are the scenario's (Scenario.Presence)
	Presence    bool              `json:"presence,omitempty"`
	Persistence bool              `json:"persistence,omitempty"`
	Outbox      int               `json:"outbox,omitempty"`
	CommandTTLS float64           `json:"command_ttl_s,omitempty"`
	Recorded    string            `json:"recorded"`
	Versions    map[string]string `json:"versions"`
}

// MetaOutage is one outage of a meta.json.
type MetaOutage struct {
	Kind    OutageKind `json:"kind"`
	BeforeS float64    `json:"before_s"`
	DownS   float64    `json:"down_s"`
}

// Short returns sc shrunk to a 40-device fleet through 6 s outages, about
// 35 s in all for one outage: the live test's variant. A Freeze outage
// keeps its shape with a 4 s keepalive (it must outlast the keepalive
// timeouts of both sides).
func (sc Scenario) Short() Scenario {
	sc.Devices, sc.Boot, sc.Settle, sc.After, sc.Awaited = 40, 2*time.Second, 2*time.Second, 10*time.Second, true
	out := make([]Outage, len(sc.Outages))
	for i, o := range sc.Outages {
		o.Before, o.Down = min(o.Before, 6*time.Second), 6*time.Second
		if o.Kind == Freeze {
			sc.Keepalive = min(sc.Keepalive, 4)
			sc.Policy = withKeepalive(sc.Policy, sc.Keepalive)
			sc.Boot, sc.Settle = time.Duration(sc.Keepalive)*time.Second, time.Duration(sc.Keepalive+1)*time.Second
			o.Down = time.Duration(3*sc.Keepalive) * time.Second
		}
		out[i] = o
	}
	sc.Outages = out
	return sc
}
