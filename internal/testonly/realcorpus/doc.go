// Package realcorpus records and reads stormaudit's corpus of real MQTT
// client logs: fleets of real clients (Python paho-mqtt 1.6, Go
// paho.mqtt.golang) run against a real Mosquitto that is killed with
// SIGKILL and restarted (once or more), or cut off from the fleet by a
// link that goes silent (a [Proxy] that stops forwarding), with the
// broker's own log kept beside each fleet's audit log as the ground truth
// the analyses are judged by. A scenario's outages are data: a list of
// [Outage], each a [Kill] or a [Freeze].
//
// # Layout
//
// Each scenario is a directory under testdata/realclients:
//
//	clients.ndjson  the fleet's audit records, as its managers wrote them
//	broker.log      Mosquitto's log lines, each stamped with the UTC time
//	                the recorder read it (microseconds), and the recorder's
//	                own marks: when it killed the broker and restarted it,
//	                froze the link and restored it, and stopped the fleet
//	policy.toml     the reconnect policy the managers ran
//	meta.json       the scenario, its clients and the versions recorded
//
// Mosquitto stamps its lines to the second; the recorder reads its
// standard output through a pipe as the lines are written and stamps each
// to the microsecond on arrival. [ParseBrokerLog] reads a broker.log into
// a [Truth]: each outage, when it began and ended, the clients it cut off
// and when each came back, the sessions the broker timed out, and every
// client connect it accepted.
//
// # Recording
//
//	go run ./internal/testonly/realcorpus/gen -out testdata/realclients
//
// records every scenario of [Scenarios] (one to three minutes each); it
// needs Debian's mosquitto and python3-paho-mqtt. docs/corpus.md
// describes the scenarios and the tolerances the tests hold check to.
package realcorpus
