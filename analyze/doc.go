// Package analyze rebuilds every device's timeline from an audit dataset
// and checks the reconnect invariants of the rule catalogue
// (docs/rules.md), reporting findings and the fleet's statistics.
//
// # Timelines
//
// A dataset is sorted by client_id, so each device's rows are contiguous:
// the analyzers read the dataset through arrow-go record batches, one
// device at a time, and memory grows with the number of devices, not with
// the number of records. A device's records are ordered by its own
// device_seq when every record has one, else in the order it wrote them
// (input and line): a device's clock is not trusted to order its records.
// Fleet-wide views use recorded_at.
//
// From the ordered records Device.Build derives, per stage (the MQTT
// session, and the link and address stages when a device records them),
// the attempts (a backoff_wait, the rate_limited_waits after it, and the
// record of its outcome), the derived socket-open of each (the
// backoff_wait's time plus its delay plus the waits), the sessions
// (connected intervals) and the outage episodes (from a lost connection
// to the next connected record). The rules read the session stage's
// sessions and episodes; a record without a stage is of the session.
// An episode before the device ever connected is a start, not a loss; a
// loss the log has no disconnect record of is inferred from the new
// attempt after a connected record.
//
// # Incidents
//
// A loss that takes many devices down together is an incident
// (FleetStats.Incidents): at least IncidentMinDevices losses in a window
// of IncidentWindow, found after every device is read from the losses it
// kept. Each device's time to recover runs from its own loss to its first
// successful connect after it. The fleet's times to recover are kept in a
// Durations: every one up to ExactDurations, beyond that a sketch whose
// percentiles are within DurationsAccuracy, which the outputs say.
//
// # Rules
//
// A Rule sees each device once, then the whole fleet (Finish), with the
// fleet's statistics and incidents in Context.Fleet. Rules
// that need a policy parameter take it from the declared policy, or from
// the policy inferred from the log, which the summary reports as inferred;
// when neither has it, the rule says so once in the summary's notes
// rather than guessing.
//
// Every finding a rule reports has a Kind, "rule/name", one for each
// distinct finding the rule reports (delay-bounds reports
// delay-bounds/delay-outside-bounds and delay-bounds/ceiling-mismatch):
// what a finding is, kept apart from how its message words it, so that
// fingerprints and baselines survive a reworded message. A rule that
// reports a finding without one panics in a test (Context.Report). A
// rule that reports a finding per device may leave its explanation to be
// written when read (Finding.Explained, Finding.AppendExplanation,
// Options.LazyExplanations): a text report that prints a few findings of
// each rule writes a few, and a JSON encoder appends each straight into
// its output.
//
// # Split checks
//
// A check can be cut into parts that run apart (Split): each part, a
// bucket of a dataset partitioned by device, runs every rule's Device
// work and leaves a Partial (the findings about single devices and each
// fleet rule's state, which encodes to bytes); Finish merges the partials
// in part order and runs every rule's Finish. The result is the one
// Check gives, and Check is the split of one part. resync's timer fires,
// the largest state, may travel apart and be filtered in parallel
// (Partial.TakeFires, Split.KeepFires), and so may starvation's
// recovered devices (Partial.TakeRecovered); the incidents may be found
// apart from the finishing step, each part reducing its share of their
// details and of their returns, which merge by device and by incident
// (Partial.TakeIncidents, Split.Infer, Split.Detail, Split.JudgeStorm);
// the fleet's times to recover merge apart (Partial.TakeFigures,
// MergeFigures), and the device ids travel apart, only those a finding
// names coming back (Partial.TakeNames, Split.Wanted, Split.Name). The
// finishing step takes the partials one at a time, in any order
// (Finisher), or in passes over a source read again
// (Split.FinishInPasses), holding a window of them decoded.
// cmd/stormaudit-beam runs a split check on Apache Beam; docs/scale.md
// describes it.
package analyze
