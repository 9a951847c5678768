// Package realcorpus records and reads stormaudit's corpus of real MQTT
// client logs: fleets of real clients (Python paho-mqtt 1.6, Go
// paho.mqtt.golang) run against a real Mosquitto that is killed with
// SIGKILL and restarted, with the broker's own log kept beside each
// fleet's audit log as the ground truth the analyses are judged by.
//
// # Layout
//
// Each scenario is a directory under testdata/realclients:
//
//	clients.ndjson  the fleet's audit records, as its managers wrote them
//	broker.log      Mosquitto's log lines, each stamped with the UTC time
//	                the recorder read it (microseconds), and the recorder's
//	                own marks: when it killed the broker, restarted it and
//	                stopped the fleet
//	policy.toml     the reconnect policy the managers ran
//	meta.json       the scenario, its clients and the versions recorded
//
// Mosquitto stamps its lines to the second; the recorder reads its
// standard output through a pipe as the lines are written and stamps each
// to the microsecond on arrival. [ParseBrokerLog] reads a broker.log into
// a [Truth]: when the broker died, when it was back, and every client
// connect it accepted.
//
// # Recording
//
//	go run ./internal/realcorpus/gen -out testdata/realclients
//
// records every scenario of [Scenarios] (about two minutes each); it
// needs Debian's mosquitto and python3-paho-mqtt. docs/corpus.md
// describes the scenarios and the tolerances the tests hold check to.
package realcorpus
