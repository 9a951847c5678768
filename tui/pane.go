package tui

import (
	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"
)

// A pane is one screen of the browser: the first pane of a tab (Fleet,
// Devices, Timeline, Findings) or one shown over another (a record over
// its timeline). The model draws the tabs, the status bar and the help
// line around the current pane and hands it every key it does not take
// itself.
//
// An implementer must:
//   - title: return its name, which the tabs show for a tab's first pane;
//   - resize: fit its body to h lines (the terminal's width is shared.w);
//   - update: act on a key press (called only once the check is done)
//     and return what it asks of the browser, none if nothing;
//   - view: draw its body in exactly h lines, none wider than shared.w;
//   - status: return its part of the status bar;
//   - ShortHelp and FullHelp (help.KeyMap): the keys it answers to, for
//     the one-line help and the full help (?).
type pane interface {
	help.KeyMap
	title() string
	resize(h int)
	update(msg tea.KeyMsg) action
	view(h int) string
	status() string
}

// searcher is a pane whose rows can be searched (/, n, N). search must
// move the cursor to the first row from it in direction dir (1 or -1)
// that holds q, ignoring case, not the cursor's own row unless self,
// wrapping round, and report whether there was one. / over a pane that
// is not a searcher (the fleet) searches Devices.
type searcher interface {
	search(q string, dir int, self bool) bool
}

// filterer is a pane with a filter typed into the input line (f):
// filterText is the filter now; setFilter sets it as it is typed, and to
// "" when the line is closed with esc.
type filterer interface {
	filterText() string
	setFilter(text string)
}

var (
	_ searcher = (*devicesView)(nil)
	_ searcher = (*timelineView)(nil)
	_ searcher = (*findingsView)(nil)
	_ searcher = (*recordView)(nil)
	_ filterer = (*devicesView)(nil)
	_ filterer = (*findingsView)(nil)
	_ pane     = (*fleetView)(nil)
	_ pane     = (*devicesView)(nil)
	_ pane     = (*timelineView)(nil)
	_ pane     = (*findingsView)(nil)
	_ pane     = (*recordView)(nil)
)

// current is the pane on screen: the last of the current tab's.
func (m *Model) current() pane {
	tab := m.tabs[m.view]
	return tab[len(tab)-1]
}

// action is what a pane asks of the browser after a key.
type action struct {
	push    pane   // show this pane over the current one
	pop     bool   // close the current pane, back to the one under it
	view    int    // switch to this tab, if >= 0
	device  string // open this device's timeline
	finding int    // at this finding (index in the findings), -1 none
	active  []int  // filter the devices to these (indices in Overview.Devices)
	label   string // what that filter is called
	at      int64  // move the fleet's cursor here
	atSet   bool
}

// none is the action of a key that asks nothing of the browser.
var none = action{view: -1, finding: -1}

// do carries out a pane's action.
func (m *Model) do(a action) tea.Cmd {
	if a.pop && len(m.tabs[m.view]) > 1 {
		m.tabs[m.view] = m.tabs[m.view][:len(m.tabs[m.view])-1]
	}
	if a.push != nil {
		m.tabs[m.view] = append(m.tabs[m.view], a.push)
	}
	if a.active != nil {
		m.devices.restrict(a.active, a.label)
		m.view = viewDevices
	}
	if a.atSet {
		m.fleet.seek(a.at)
		m.view = viewFleet
	}
	if a.view >= 0 {
		m.view = a.view
	}
	if a.device != "" {
		m.view = viewTimeline
		m.tabs[viewTimeline] = m.tabs[viewTimeline][:1] // a device opens at its records
		return m.timeline.open(a.device, a.finding)
	}
	return nil
}
