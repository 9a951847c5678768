// Package replay plays a fleet's connect schedule against a real MQTT
// broker: the recorded socket-opens of an incident (Recorded, from
// analyze.Schedule), or the same devices under another policy (WhatIf,
// through package simulate), each a real connection at its moment.
//
// # Connects
//
// A Plan is a list of devices and of their connects in time order. Run
// makes each connect when it is due (its offset divided by
// Options.Speed): it opens a socket to the broker, sends CONNECT with the
// device's client id, clean session flag and keepalive and a Last Will
// ("offline", retained, on StatusTopic), and waits for the CONNACK at most
// Options.ConnectTimeout. An accepted connect publishes "online",
// retained, on the same topic and keeps the connection, pinging, until
// the device's next connect (which first drops it without a DISCONNECT,
// as a lost link does) or the end of the replay (a graceful DISCONNECT).
// The client is a minimal one on mochi's packets package; it never
// reconnects by itself.
//
// # What-ifs
//
// A what-if is one outage of one fleet played again under another
// reconnect policy; its logic lives here, in whatif.go, and commands
// parse their flags, call it and print. Plans chooses what a replay
// plays from a fleet's recorded schedule: the recorded plan, the what-if,
// or both, and the outage they start in. WhatIf redraws a plan's
// devices under another policy through simulate's model. SimulateWhatIf
// runs one outage of a modelled fleet under several policies, with no
// broker (stormaudit demo's what-if), and SimulatedWhatIf.Why says what
// its figures mean where they seem to contradict each other.
//
// # Measurements
//
// For every connect Run measures its lateness (its socket-open after its
// moment), its CONNACK latency and its outcome: accepted, refused (with
// the CONNACK's code), timed out, failed (the broker's side would not
// open the socket, or ended it before its CONNACK), or failed on this
// machine (no descriptor, no local port: localErrno). The Report keeps
// what the broker did (BrokerDid) apart from what the replay did as the
// load generator (ReplayDid); Report.Judge says whether the replay kept
// its schedule (its p99 lateness, overall and in the plan's busiest
// seconds, within a bound, and nothing failed here) and, only then,
// whether the broker held: otherwise the result is inconclusive.
//
// # What one machine can drive
//
// PlanBudget reckons the descriptors, local ports and memory a plan needs
// of this machine (ThisMachine) before the first connect. Run binds each
// device's socket to a port of the ephemeral range it chooses itself
// (localPorts: Linux's own choice scans the range for every connect once
// half of it holds connections to the broker). Beyond one machine, a plan
// is replayed in shards (Plan.Shard, Options.Shard and StartAt), and
// Merge makes one report of the shards' reports. Options.Audit receives the replay's own
// audit records (docs/replay.md says which), chained by a
// hashchain.Writer.
//
// # Brokers
//
// Embedded is a broker in the same process (mochi-mqtt/server/v2) on a
// free loopback port, with a capacity model (BrokerOptions) and Stop and
// Start for a restart; any other broker is named by its address.
//
// # Example
//
//	b, _ := replay.StartEmbedded(replay.BrokerOptions{Capacity: 100})
//	defer b.Close()
//	rep, _ := replay.Run(ctx, plan, replay.Options{Broker: b.Addr(), Wills: b.Wills})
//	rep.Judge(replay.DefaultConnackSLO, replay.DefaultMaxLateness)
//	replay.WriteText(os.Stdout, rep)
package replay
