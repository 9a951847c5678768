// Package tui is stormaudit's terminal browser: the fleet over time, its
// devices, one device's timeline and the findings, moved between without
// leaving the keyboard. It is a Bubble Tea (v1) model over the
// front-end APIs of package analyze: Survey (the check, the fleet's
// activity and each device's figures in one pass) and ReadDevice (one
// device read from the row groups and pages that hold it).
//
// # Views
//
//   - Fleet: socket-opens per bucket as a histogram stacked by outcome
//     (█ connected, ▓ refused, ▒ failed, ░ no outcome), connects per
//     bucket beneath it, the declared connect budget as a ╌ line, each
//     incident's loss (✕) and the broker's return (^), and a cursor in
//     time (┼) whose bucket's figures (with the outbox messages flushed,
//     when the records carry them) and active devices (those with a
//     socket-open in it) are listed; + and - zoom from 1 ms to 30 days a
//     bucket, keeping the cursor's moment. Enter lists the active devices
//     in Devices.
//   - Devices: every device with its socket-opens, failures, losses,
//     longest time to recover ("down" when its records end in an outage)
//     and findings; s cycles the order (client id, time to recover,
//     attempts, findings: the worst first), r reverses it, f filters by
//     client id, and the status bar counts what the filter hides.
//   - Timeline: one device's records in its own order. The gutter marks
//     a lost connection ╳, an outage ┊, the connect that ended it ┌ and a
//     session │; each backoff_wait shows its delay against its ceiling
//     (the record's ceiling_s, else the policy's), with ! past it; the
//     last column names the rules whose findings rest on the record.
//     Enter shows every field of the record, its input and line, its
//     dataset file and row and its chain position, and those findings'
//     explanations.
//   - Findings: severity, rule, device, time and message, worst first;
//     enter opens the device's timeline at the finding's records with its
//     explanation (a fleet finding moves the fleet's cursor to it).
//
// # Keys
//
// Arrows or j/k move, tab and shift+tab (or 1-4) change view, / searches
// the current view (from Fleet, its devices), n/N go to the next and
// previous match, e/E to the next and previous finding, ? shows the full
// help generated from the key map, q quits. The status bar shows the
// position, the sort and the filters; the last line is a one-line help.
//
// # Text
//
// Every device-provided string is shown through internal/safe: control
// characters, bidirectional overrides and invalid UTF-8 are escaped, so a
// client id cannot drive the reviewer's terminal. Nothing is told by
// colour alone, so the browser reads the same with NO_COLOR.
package tui
