// Package simulate models a fleet of MQTT clients that lose their broker at
// the same instant and reconnect under a policy, and writes the audit
// records the fleet would have written.
//
// # The model
//
// N devices are connected when the broker goes down at the start instant T0
// (all of them notice at once, as they do when a broker restarts). Each
// device then runs the reference client's loop, recording each step:
//
//   - disconnected (attempt 0, reason code 139, server shutting down) at T0,
//     or when a flap drops an established session;
//   - backoff_wait: a delay d drawn from the policy for the current attempt
//     counter a (see package policy), quantised up to the timer tick if
//     one is set, and, after an authentication failure, at least
//     auth_min_delay_s; the record carries d and the ceiling it was drawn
//     under;
//   - the socket-open is due at t+d. Devices on one host share its connect
//     spacing (min_connect_spacing_s): an open due before the host's next
//     free slot is deferred to that slot with a rate_limited_wait record
//     carrying the wait, and the slot after it is reserved at once;
//   - the connect resolves a fixed latency (at least 1µs) after the
//     socket-open. If the
//     broker is down then, the attempt fails (attempt_failed, failure class
//     transient); a device with bad credentials is refused (refused, reason
//     code 135, failure class auth); a connect beyond the broker's accept
//     capacity for the current window is refused (refused, reason code
//     137, failure class overload). Each failure carries the incremented
//     counter and the delay that preceded it, and the next backoff_wait
//     follows at the same instant;
//   - otherwise the device is connected (connected, session_present when the
//     policy declares persistent sessions). The counter resets to 0 on the
//     CONNACK, or, when the policy declares stable_reset_s, only once the
//     session has stayed up that long.
//
// The broker is down from T0 for the outage, then, if flaps are asked for,
// up for FlapUp and down for FlapDown, Flaps times, and then up for good.
// Intervals are half-open: a connect that resolves at the instant the broker
// goes down fails, and established sessions drop at that instant. The
// capacity windows are aligned on T0.
//
// With ColdBoot the fleet powers up at T0 instead: no device was
// connected, none records a disconnect, and each waits a startup delay
// drawn uniformly from [0, startup_spread_s) of the policy before its
// first backoff_wait.
//
// With OutboxPerS every device has an outbox that queues that many
// messages a second while it is not connected, at most the policy's
// outbox_limit (the oldest dropped beyond it), and sends them once it is,
// FlushBatch a second or all at once. Every record then carries
// outbox_depth (waiting, rounded down) and outbox_flushed (sent since the
// device's previous record).
//
// The run ends at the horizon: records are written up to it and no later;
// a device still retrying then is counted as not recovered, and its last
// record is the backoff_wait (or rate_limited_wait) of an attempt whose
// connect resolves beyond the horizon.
//
// # Randomness and determinism
//
// Each device draws its delays, one uniform number per draw, from its own
// PCG source seeded from (seed, device index) by SplitMix64; with SameSeed
// every device starts from the same state, like a fleet cloned from one
// image. Events are processed in the order of (time, device index), so a
// run is a function of its Config: the same seed gives byte-identical
// output. Times are kept in whole microseconds, the precision real clients
// log with, and delays are rounded to them.
//
// # Output
//
// Records are written as seed-format NDJSON (one record per line, see
// package auditfmt) in the order the model wrote them, which is the order
// of recorded_at, streaming: memory grows with the number of devices, not
// with the number of records.
package simulate
