package tui

import (
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/dataset"
)

// The tabs, in order.
const (
	viewFleet = iota
	viewDevices
	viewTimeline
	viewFindings
	numViews
)

// Options say what to browse and how.
type Options struct {
	// Dir is the dataset's directory; Name is what the title bar calls it
	// (Dir if empty).
	Dir, Name string
	// Check configures the check the browser runs (policy, window).
	Check analyze.Options
	// Renderer draws the styles; nil means lipgloss's default for stdout,
	// which honours NO_COLOR. Tests give one with the ASCII profile.
	Renderer *lipgloss.Renderer
	// Survey, when set, replaces analyze.SurveyWatched (a test's slow or
	// failing load): it checks the dataset and calls watch, unless nil, with
	// the fleet as far as it has read it.
	Survey func(dir string, opts analyze.Options, watch func(*analyze.Glimpse)) (*analyze.Overview, error)
}

// Model is the browser: a Bubble Tea model. It shows the last pane of
// the current tab; the tabs' first panes are also held by their types,
// for the actions one pane asks of another.
type Model struct {
	sh       *shared
	view     int              // the current tab
	tabs     [numViews][]pane // each tab's panes, the first its own, each shown over the one before
	fleet    *fleetView
	devices  *devicesView
	timeline *timelineView
	findings *findingsView
	help     help.Model
	full     bool // the full help is up
	input    textinput.Model
	inputFor int // what the input line is for, 0 when closed
	query    string
	glimpses glimpses // the survey's glimpses, until it is done
}

// loadedMsg carries the survey of the dataset.
type loadedMsg struct {
	ov   *analyze.Overview
	err  error
	took time.Duration
}

// New returns the browser for the dataset opts.Dir. Its manifest is read
// now; the check runs once the program starts (Init), so that the first
// screen does not wait for it.
func New(opts Options) (*Model, error) {
	man, err := dataset.ReadManifest(opts.Dir)
	if err != nil {
		return nil, err
	}
	if opts.Name == "" {
		opts.Name = opts.Dir
	}
	if opts.Survey == nil {
		opts.Survey = func(dir string, opts analyze.Options, watch func(*analyze.Glimpse)) (*analyze.Overview, error) {
			return analyze.SurveyWatched(dir, opts, glimpseEvery, watch)
		}
	}
	r := opts.Renderer
	if r == nil {
		r = lipgloss.DefaultRenderer()
	}
	sh := &shared{opts: opts, man: man, st: newStyles(r), keys: newKeyMap(), w: 80, h: 24, now: time.Now}
	sh.started = sh.now()
	m := &Model{sh: sh, help: help.New(), input: textinput.New()}
	m.help.ShortSeparator, m.help.FullSeparator = " · ", "   "
	m.fleet, m.devices = &fleetView{sh: sh}, &devicesView{sh: sh}
	m.timeline, m.findings = &timelineView{sh: sh}, &findingsView{sh: sh}
	m.tabs = [numViews][]pane{{m.fleet}, {m.devices}, {m.timeline}, {m.findings}}
	m.resize(sh.w, sh.h)
	return m, nil
}

// Init starts the check, the glimpses of the fleet as it is read, and a
// clock for the status bar while it runs.
func (m *Model) Init() tea.Cmd {
	sh := m.sh
	gs := make(glimpses, 1)
	m.glimpses = gs
	load := func() tea.Msg {
		t := sh.now()
		ov, err := sh.opts.Survey(sh.opts.Dir, sh.opts.Check, gs.put)
		close(gs)
		return loadedMsg{ov: ov, err: err, took: sh.now().Sub(t)}
	}
	return tea.Batch(load, gs.next(), tick())
}

// tickMsg redraws the status bar while the check runs.
type tickMsg struct{}

func tick() tea.Cmd {
	return tea.Tick(200*time.Millisecond, func(time.Time) tea.Msg { return tickMsg{} })
}

// Update handles a message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
	case tickMsg:
		if m.sh.ov == nil && m.sh.err == nil {
			return m, tick()
		}
	case glimpseMsg:
		if msg.g == nil {
			return m, nil
		}
		if m.sh.ov == nil {
			m.sh.glimpse = msg.g
		}
		return m, m.glimpses.next()
	case loadedMsg:
		m.loaded(msg)
	case deviceMsg:
		m.timeline.got(msg)
	case tea.KeyMsg:
		return m, m.keys(msg)
	}
	return m, nil
}

func (m *Model) resize(w, h int) {
	m.sh.w, m.sh.h = max(w, 20), max(h, 8)
	m.help.Width = m.sh.w
	body := m.bodyHeight()
	for _, tab := range m.tabs {
		for _, p := range tab {
			p.resize(body)
		}
	}
}

// bodyHeight is the height of a pane: all but the tabs, status and help.
func (m *Model) bodyHeight() int { return m.sh.h - 3 }

func (m *Model) loaded(msg loadedMsg) {
	sh := m.sh
	sh.ov, sh.err, sh.loaded = msg.ov, msg.err, msg.took
	if msg.err != nil {
		return
	}
	sh.index()
	m.fleet.init()
	m.devices.init()
	m.findings.init()
}
