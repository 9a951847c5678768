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

// Scenario is one recording: a fleet, its clients, and the outage.
type Scenario struct {
	Name        string
	Description string
	Client      string // PythonPaho or GoPaho
	Mode        string // for PythonPaho: "library" or "manual" (fleet.py)
	Prefix      string // client ids are Prefix-0001 ...
	Devices     int
	Churn       float64 // fraction of devices that restart healthy connections (manual mode)
	Keepalive   int     // seconds
	Seed        int64
	Policy      policy.Policy // the managers' policy
	// Boot is the time the devices boot over, Settle the time the fleet
	// runs connected before the broker is killed, Down how long it stays
	// dead, After how long the recorder waits once it is back.
	Boot, Settle, Down, After time.Duration
}

// managerPolicy is the reference manager's policy every scenario runs:
// full jitter from 1 s, doubling, capped at 30 s.
var managerPolicy = policy.Policy{Name: "corpus manager", Delay: policy.FullJitter, BaseDelayS: 1, MaxDelayS: 30,
	Multiplier: 2, KeepaliveS: 30, CleanSession: false}

// Scenarios are the recordings of the corpus.
var Scenarios = []Scenario{
	{
		Name: "paho-py-library",
		Description: "Python paho-mqtt 1.6 with loop_start(): the library's own automatic reconnect (1, 2, 4 ... s, no jitter) " +
			"runs beside the reference manager, which does not record disconnects. Both own the connection.",
		Client: PythonPaho, Mode: "library", Prefix: "pylib", Devices: 150, Keepalive: 30, Seed: 11, Policy: managerPolicy,
		Boot: 4 * time.Second, Settle: 6 * time.Second, Down: 14 * time.Second, After: 60 * time.Second,
	},
	{
		Name: "paho-py-manual",
		Description: "Python paho-mqtt 1.6 driven by the reference manager alone (client.loop() in the manager's thread), " +
			"which records disconnects; 5% of the devices restart a healthy connection every 8-16 s without recording why.",
		Client: PythonPaho, Mode: "manual", Prefix: "pyman", Devices: 100, Churn: 0.05, Keepalive: 30, Seed: 12, Policy: managerPolicy,
		Boot: 4 * time.Second, Settle: 6 * time.Second, Down: 20 * time.Second, After: 70 * time.Second,
	},
	{
		Name: "paho-go",
		Description: "Go paho.mqtt.golang with AutoReconnect off, driven by the reference manager alone, " +
			"which does not record disconnects: the loss is in the log only as the new attempts.",
		Client: GoPaho, Prefix: "gopaho", Devices: 200, Keepalive: 30, Seed: 13, Policy: managerPolicy,
		Boot: 4 * time.Second, Settle: 6 * time.Second, Down: 25 * time.Second, After: 80 * time.Second,
	},
}

// Meta is a scenario's meta.json.
type Meta struct {
	Scenario    string            `json:"scenario"`
	Description string            `json:"description"`
	Devices     int               `json:"devices"`
	Client      string            `json:"client"`
	Mode        string            `json:"mode,omitempty"`
	Churn       float64           `json:"churn,omitempty"`
	DownS       float64           `json:"down_s"`
	Recorded    string            `json:"recorded"`
	Versions    map[string]string `json:"versions"`
}

// Short returns sc shrunk to a 40-device fleet through a 6 s outage, about
// 35 s in all: the live test's variant.
func (sc Scenario) Short() Scenario {
	sc.Devices, sc.Boot, sc.Settle, sc.Down, sc.After = 40, 2*time.Second, 2*time.Second, 6*time.Second, 25*time.Second
	return sc
}
