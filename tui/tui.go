package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
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
	// Survey, when set, replaces analyze.Survey (a test's slow or failing
	// load).
	Survey func(dir string, opts analyze.Options) (*analyze.Overview, error)
}

// shared is what every view sees: the data, its indexes and the looks.
type shared struct {
	opts    Options
	man     *dataset.Manifest
	ov      *analyze.Overview // nil until loaded
	st      styles
	keys    keyMap
	byDev   map[string][]int // finding indices by device
	byRef   map[recRef][]int // finding indices by the records they rest on
	byStart []int            // finding indices by start time
	policy  policyCeiling    // the ceiling of each attempt, if a policy is known
	loaded  time.Duration    // how long the survey took
	err     error            // the survey's error
	w, h    int              // the terminal's size
	notice  string           // a one-off line for the status bar
	now     func() time.Time // the clock (tests stop it)
	started time.Time
}

// recRef names a record of the dataset: its file and row.
type recRef struct {
	file int32
	row  int64
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
}

// What the input line is for.
const (
	inputNone = iota
	inputSearch
	inputFilter
)

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
		opts.Survey = analyze.Survey
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

// Init starts the check, and a clock for the status bar while it runs.
func (m *Model) Init() tea.Cmd {
	sh := m.sh
	load := func() tea.Msg {
		t := sh.now()
		ov, err := sh.opts.Survey(sh.opts.Dir, sh.opts.Check)
		return loadedMsg{ov: ov, err: err, took: sh.now().Sub(t)}
	}
	return tea.Batch(load, tick())
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
	case loadedMsg:
		m.loaded(msg)
	case deviceMsg:
		m.timeline.got(msg)
	case tea.KeyMsg:
		return m, m.keys(msg)
	}
	return m, nil
}

// keys handles the keys of one read from the terminal. Letters that
// arrive together (a held key, a slow ssh link, tmux send-keys jjj) come
// as one message of several runes; each is its own key press unless the
// terminal marked them as pasted.
func (m *Model) keys(msg tea.KeyMsg) tea.Cmd {
	if msg.Type != tea.KeyRunes || len(msg.Runes) < 2 || msg.Paste {
		return m.key(msg)
	}
	var cmds []tea.Cmd
	for _, r := range msg.Runes {
		one := msg
		one.Runes = []rune{r}
		cmds = append(cmds, m.key(one))
	}
	return tea.Sequence(cmds...)
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

// bodyHeight is the height of a view: all but the tabs, status and help.
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

// key handles a key press.
func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	sh, k := m.sh, m.sh.keys
	sh.notice = ""
	if m.inputFor != inputNone {
		return m.inputKey(msg)
	}
	if m.full {
		m.full = false
		if key.Matches(msg, k.Quit) {
			return tea.Quit
		}
		return nil
	}
	switch {
	case key.Matches(msg, k.Quit):
		return tea.Quit
	case key.Matches(msg, k.Help):
		m.full = true
		return nil
	case key.Matches(msg, k.NextView):
		m.view = (m.view + 1) % numViews
		return nil
	case key.Matches(msg, k.PrevView):
		m.view = (m.view + numViews - 1) % numViews
		return nil
	case key.Matches(msg, k.Fleet), key.Matches(msg, k.Devices), key.Matches(msg, k.Timeline), key.Matches(msg, k.Findings):
		m.view = int(msg.String()[0] - '1')
		return nil
	}
	if sh.ov == nil {
		return nil // loading: views have nothing to act on yet
	}
	f, canFilter := m.current().(filterer)
	switch {
	case key.Matches(msg, k.Search):
		if _, ok := m.current().(searcher); !ok {
			m.view = viewDevices // the fleet's things to search are its devices
		}
		return m.openInput(inputSearch, "/", "")
	case key.Matches(msg, k.NextMatch), key.Matches(msg, k.PrevMatch):
		dir := 1
		if key.Matches(msg, k.PrevMatch) {
			dir = -1
		}
		m.search(dir, false)
		return nil
	case canFilter && key.Matches(msg, k.Filter):
		return m.openInput(inputFilter, "filter: ", f.filterText())
	}
	return m.do(m.current().update(msg))
}

func (m *Model) openInput(what int, prompt, value string) tea.Cmd {
	m.inputFor = what
	m.input.Prompt = prompt
	m.input.SetValue(value)
	m.input.CursorEnd()
	return m.input.Focus()
}

// inputKey handles a key while the input line is open: a search moves on
// enter, a filter applies as it is typed.
func (m *Model) inputKey(msg tea.KeyMsg) tea.Cmd {
	switch msg.Type {
	case tea.KeyEnter, tea.KeyEsc:
		what := m.inputFor
		m.inputFor = inputNone
		m.input.Blur()
		if msg.Type == tea.KeyEsc {
			if what == inputFilter {
				m.setFilter("")
			}
			return nil
		}
		if what == inputSearch {
			m.query = m.input.Value()
			m.search(1, true)
		}
		return nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	if m.inputFor == inputFilter {
		m.setFilter(m.input.Value())
	}
	return cmd
}

// setFilter sets the current pane's filter (the input line opens for a
// filter only over a filterer, and the pane cannot change while it is open).
func (m *Model) setFilter(text string) {
	if f, ok := m.current().(filterer); ok {
		f.setFilter(text)
	}
}

// search moves the current view to the next match of the query in
// direction dir, the cursor's own row included if self.
func (m *Model) search(dir int, self bool) {
	if m.query == "" {
		m.sh.notice = "no search yet: / to search"
		return
	}
	s, ok := m.current().(searcher)
	if !ok {
		return
	}
	if !s.search(m.query, dir, self) {
		m.sh.notice = fmt.Sprintf("no match for %q", m.query)
	}
}

// View draws the screen: the tabs, the view, the status bar and a help
// line (or the full help).
func (m *Model) View() string {
	sh := m.sh
	body := m.bodyHeight()
	var main string
	switch {
	case m.full:
		main = lines(strings.Split(m.help.FullHelpView(m.current().FullHelp()), "\n"), sh.w, body)
	case sh.err != nil:
		main = lines([]string{"", "  " + sh.st.warn.Render("cannot check the dataset: ") + dev(sh.err.Error())}, sh.w, body)
	case sh.ov == nil:
		main = lines(m.loading(), sh.w, body)
	default:
		main = m.current().view(body)
	}
	bottom := m.help.ShortHelpView(m.current().ShortHelp())
	if m.inputFor != inputNone {
		bottom = m.input.View()
	}
	return strings.Join([]string{m.tabBar(), main, m.status(), lines([]string{bottom}, sh.w, 1)}, "\n")
}

func (m *Model) loading() []string {
	t := m.sh.man.Totals
	return []string{"", fmt.Sprintf("  checking %s records of %s (%s rejected at ingest)…", count(int(t.Accepted)),
		dev(m.sh.opts.Name), count(int(t.Rejected))), "", "  q quits; the views fill in when the check is done."}
}

func (m *Model) tabBar() string {
	sh := m.sh
	var b strings.Builder
	for v, tab := range m.tabs {
		label := fmt.Sprintf("%d %s", v+1, tab[0].title())
		if v == m.view {
			b.WriteString(sh.st.tabOn.Render(label))
		} else {
			b.WriteString(sh.st.tab.Render(label))
		}
	}
	left := b.String()
	right := dev(sh.opts.Name)
	room := sh.w - lipgloss.Width(left) - 1
	if room < 1 {
		return lines([]string{left}, sh.w, 1)
	}
	return left + " " + fitRight(fit(right, room), room)
}

// status is the status bar: the view's position and filters, or a notice.
func (m *Model) status() string {
	sh := m.sh
	text := ""
	switch {
	case sh.notice != "":
		text = sh.notice
	case sh.ov == nil && sh.err == nil:
		text = fmt.Sprintf("checking… %s", sh.now().Sub(sh.started).Round(100*time.Millisecond))
	case sh.ov != nil:
		text = m.current().status()
		if m.query != "" {
			text += fmt.Sprintf(" · search %q (n/N)", dev(m.query))
		}
	}
	return sh.st.bar.Render(fit(" "+text, sh.w))
}

// index builds the lookups the views share.
func (sh *shared) index() {
	res := sh.ov.Result
	sh.byDev, sh.byRef = map[string][]int{}, map[recRef][]int{}
	for i, f := range res.Findings {
		sh.byDev[f.Device] = append(sh.byDev[f.Device], i)
		for _, r := range f.Records {
			k := recRef{r.File, r.Row}
			if refs := sh.byRef[k]; len(refs) == 0 || refs[len(refs)-1] != i {
				sh.byRef[k] = append(refs, i)
			}
		}
	}
	sh.byStart = make([]int, len(res.Findings))
	for i := range sh.byStart {
		sh.byStart[i] = i
	}
	sortByStart(sh.byStart, res.Findings)
	sh.policy = newPolicyCeiling(res.Summary.Policy.Policy)
}
