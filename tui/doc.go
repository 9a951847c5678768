// Package tui is stormaudit's terminal browser: the fleet over time, its
// devices, one device's timeline and the findings, moved between without
// leaving the keyboard. It is a Bubble Tea (v1) model over the
// front-end APIs of package analyze: SurveyWatched (the check, the fleet's
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
//     Enter shows the record over the timeline: every field, its input
//     and line, its dataset file and row and its chain position, and
//     those findings' explanations. Esc or enter closes it; it stays up
//     while other views are visited, and opening a device closes it.
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
// # Structure
//
// The Model holds four tabs, in order Fleet, Devices, Timeline and
// Findings. Each tab holds a stack of panes: its own first, each later
// one shown over the one before (today only a record, over its
// timeline); the pane on screen is the current tab's last. A pane
// (pane.go) is one view as one type, with its own key handling
// (update), body (view), status bar text, help (bubbles' help.KeyMap)
// and title. The Model draws the tab bar, the status bar and the help
// line around the current pane and never asks which pane that is.
//
// A key goes, in order: to the input line while it is open; to the
// Model for quit, help and changing tab; once the check is done, to the
// Model for / n N when the pane is a searcher (/ from a pane that is not
// searches Devices) and for f when it is a filterer; else to the current
// pane. A pane's update returns an action, the only way a pane changes
// another pane or the tabs: push a pane over itself or pop itself, change
// tab, open a device's timeline at a finding (which first closes what is
// shown over the timeline), restrict Devices to a set of devices, or
// move the fleet's cursor. The Model carries it out (Model.do). Besides,
// a pane may set the shared notice, a one-off line for the status bar.
// Messages other than keys are the Model's: the survey's glimpses of
// the fleet as it reads (glimpseMsg, the latest only, drawn in place of
// the Fleet pane until the check is done), the survey (loadedMsg) fills
// the panes, and a device read (deviceMsg) goes to the timeline, which
// drops a read another has overtaken.
//
// The files: pane.go (the interfaces, actions), fleet.go and
// fleetdraw.go (fleetView), devices.go, timeline.go, record.go
// (recordView, and the policy's ceilings), findings.go; list.go (the
// cursor the list panes share), shared.go (what every pane sees: the
// survey and its indexes, the styles, the keys, the terminal's size),
// keys.go (the key map and the help built from it), input.go (the keys
// the Model takes, the input line), screen.go (what is drawn around the
// pane) and tui.go (the Model, its messages and sizes).
//
// A new view is a type that implements pane, and searcher or filterer
// when / or f apply to it, with a golden screen in TestViewsGolden. A new
// tab adds its constant before numViews and its pane to New's tabs; a
// pane shown over another is returned as an action's push:
//
//	func (v *timelineView) update(msg tea.KeyMsg) action {
//		...
//		case key.Matches(msg, k.Open):
//			a := none
//			a.push = &recordView{tl: v}
//			return a
//	}
//
// # Text
//
// Every device-provided string is shown through internal/safe: control
// characters, bidirectional overrides and invalid UTF-8 are escaped, so a
// client id cannot drive the reviewer's terminal. Nothing is told by
// colour alone, so the browser reads the same with NO_COLOR.
package tui
