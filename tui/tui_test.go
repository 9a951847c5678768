package tui

import (
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/ingest"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/policy"
)

// updating reports whether -update was given: the flag is teatest's (its
// golden package defines it), which rewrites our golden files too.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// fleetDataset ingests testdata/fleet.ndjson (13 devices of a simulated
// outage on a fixed 5 s timer, one with bad credentials, one with a client
// id and host full of terminal controls) once per test.
func fleetDataset(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ds")
	in := ingest.Source{Name: filepath.Join("testdata", "fleet.ndjson")}
	if _, err := ingest.Run(context.Background(), dir, []ingest.Source{in}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// asciiRenderer renders every style as plain text, as NO_COLOR does.
func asciiRenderer() *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	return r
}

// newModel returns the browser over dir at w×h with a stopped clock,
// checked against testdata/policy.toml, before its check has run.
func newModel(t testing.TB, dir string, w, h int) *Model {
	t.Helper()
	p, err := policy.Resolve(filepath.Join("testdata", "policy.toml"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Options{Dir: dir, Name: "fleet.ndjson", Check: analyze.Options{Policy: &p, PolicyName: "policy.toml"},
		Renderer: asciiRenderer()})
	if err != nil {
		t.Fatal(err)
	}
	stopped := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	m.sh.now = func() time.Time { return stopped }
	m.sh.started = stopped
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

// loadedModel is newModel with its check done.
func loadedModel(t testing.TB, dir string, w, h int) *Model {
	t.Helper()
	m := newModel(t, dir, w, h)
	run(t, m, m.Init())
	if m.sh.ov == nil {
		t.Fatalf("not loaded: %v", m.sh.err)
	}
	return m
}

// run runs cmd as the program would and feeds back what it returns,
// except ticks and cursor blinks (they only redraw).
func run(t testing.TB, m *Model, cmd tea.Cmd) {
	t.Helper()
	if cmd == nil {
		return
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-done:
	case <-time.After(10 * time.Second):
		return // a timer (tick, blink): nothing to feed back
	}
	switch msg := msg.(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			run(t, m, c)
		}
	case loadedMsg, deviceMsg, glimpseMsg:
		_, next := m.Update(msg)
		run(t, m, next)
	}
}

// keyMsg returns the key press named: "enter", "tab", "shift+tab", "esc",
// "up", "down", "left", "right", "backspace", or runes.
func keyMsg(name string) tea.KeyMsg {
	types := map[string]tea.KeyType{"enter": tea.KeyEnter, "tab": tea.KeyTab, "shift+tab": tea.KeyShiftTab,
		"esc": tea.KeyEsc, "up": tea.KeyUp, "down": tea.KeyDown, "left": tea.KeyLeft, "right": tea.KeyRight,
		"backspace": tea.KeyBackspace, "pgdown": tea.KeyPgDown, "home": tea.KeyHome, "end": tea.KeyEnd}
	if k, ok := types[name]; ok {
		return tea.KeyMsg{Type: k}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(name)}
}

// press sends the keys one by one, running what each asks for.
func press(t testing.TB, m *Model, keys ...string) {
	t.Helper()
	for _, k := range keys {
		_, cmd := m.Update(keyMsg(k))
		if k != "/" && k != "f" { // those start the input's cursor blink
			run(t, m, cmd)
		}
	}
}

// typeText types s into the input line.
func typeText(m *Model, s string) {
	for _, r := range s {
		m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
}

// golden compares got with testdata/NAME.golden, or rewrites it with
// -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if updating() {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./tui -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (go test ./tui -update rewrites it):\n%s", name, path, got)
	}
}

// TestViewsGolden drives the browser through each view at 80×24 and
// compares each screen with its golden file.
func TestViewsGolden(t *testing.T) {
	dir := fleetDataset(t)
	for _, tc := range []struct {
		name string
		keys []string
	}{
		{"fleet", nil},
		{"fleet-zoomed-cursor", []string{"+", "+", "end", "left", "left"}},
		{"devices", []string{"tab"}},
		{"devices-by-findings", []string{"2", "s", "s", "s"}},
		{"devices-active", []string{"right", "right", "right", "right", "right", "enter"}},
		{"devices-unrecovered", []string{"u"}},
		{"timeline", []string{"2", "enter"}},
		{"timeline-record", []string{"2", "enter", "j", "enter"}},
		{"findings", []string{"4"}},
		{"findings-fleet", []string{"4", "j", "enter"}},
		{"findings-timeline", []string{"4", "end", "k", "enter"}},
		{"help", []string{"3", "?"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := loadedModel(t, dir, 80, 24)
			press(t, m, tc.keys...)
			golden(t, tc.name, m.View())
		})
	}
}

// TestFilterAndSearch types a filter and a search and checks the status
// bar counts what the filter hides.
func TestFilterAndSearch(t *testing.T) {
	m := loadedModel(t, fleetDataset(t), 80, 24)
	press(t, m, "2", "f")
	typeText(m, "dev-001")
	press(t, m, "enter")
	golden(t, "devices-filtered", m.View())
	if got := m.status(); !strings.Contains(got, `filter "dev-001" hides 10`) {
		t.Errorf("status %q does not count the 10 hidden devices", got)
	}
	press(t, m, "esc", "/")
	typeText(m, "0007")
	press(t, m, "enter")
	if got := m.devices.rows[m.devices.list.cur]; m.sh.ov.Devices[got].ID != "dev-0007" {
		t.Errorf("search for 0007 stopped at %s", m.sh.ov.Devices[got].ID)
	}
	press(t, m, "/")
	typeText(m, "no-such")
	press(t, m, "enter")
	if !strings.Contains(m.status(), `no match for "no-such"`) {
		t.Errorf("status %q does not say the search failed", m.status())
	}
}

// TestNextFinding walks e and E through the records with findings of the
// device with bad credentials.
func TestNextFinding(t *testing.T) {
	m := loadedModel(t, fleetDataset(t), 80, 24)
	press(t, m, "2", "/")
	typeText(m, "dev-0012")
	press(t, m, "enter", "enter")
	var stops []int
	for range 4 {
		press(t, m, "e")
		stops = append(stops, m.timeline.list.cur)
	}
	for _, i := range stops {
		if len(m.timeline.finds[i]) == 0 {
			t.Fatalf("e stopped at record %d, which no finding rests on", i+1)
		}
	}
	if stops[0] >= stops[1] {
		t.Errorf("e went from record %d to %d", stops[0]+1, stops[1]+1)
	}
	press(t, m, "E")
	if m.timeline.list.cur != stops[2] {
		t.Errorf("E went back to record %d, want %d", m.timeline.list.cur+1, stops[2]+1)
	}
}

// TestLoading checks the first screen, drawn before the check is done,
// and a check that fails.
func TestLoading(t *testing.T) {
	dir := fleetDataset(t)
	m := newModel(t, dir, 80, 24)
	golden(t, "loading", m.View())
	press(t, m, "tab", "j", "enter", "/") // nothing to act on yet: no panic, no move
	if m.view != viewDevices || m.inputFor != inputNone {
		t.Errorf("while loading: view %d, input %d; want devices and no input", m.view, m.inputFor)
	}
	m.sh.opts.Survey = func(string, analyze.Options, func(*analyze.Glimpse)) (*analyze.Overview, error) {
		return nil, os.ErrPermission
	}
	run(t, m, m.Init())
	if v := m.View(); !strings.Contains(v, "cannot check the dataset: permission denied") {
		t.Errorf("a failed check shows:\n%s", v)
	}
}

// TestRecordOverTimeline: a record shown over its timeline stays up while
// other tabs are visited, esc or enter closes it, and opening a device
// shows that device's records, not a record.
func TestRecordOverTimeline(t *testing.T) {
	m := loadedModel(t, fleetDataset(t), 80, 24)
	record := func() bool { return strings.Contains(m.status(), "esc closes") }
	for _, step := range []struct {
		keys []string
		want bool
	}{
		{[]string{"2", "enter", "j", "enter"}, true},
		{[]string{"1", "3"}, true},
		{[]string{"esc"}, false},
		{[]string{"enter"}, true},
		{[]string{"enter"}, false},
		{[]string{"enter", "2", "j", "enter"}, false},
	} {
		press(t, m, step.keys...)
		if got := record(); got != step.want {
			t.Fatalf("after %v: record shown %v, want %v; status %q", step.keys, got, step.want, m.status())
		}
	}
	if m.timeline.list.cur != 0 {
		t.Errorf("a device opened at record %d, want 1", m.timeline.list.cur+1)
	}
}

// TestResize checks that every view fills the terminal exactly, line by
// line, at sizes from tiny to wide, and after a resize.
func TestResize(t *testing.T) {
	m := loadedModel(t, fleetDataset(t), 80, 24)
	press(t, m, "2", "enter", "1")
	for _, size := range [][2]int{{80, 24}, {20, 8}, {132, 43}, {60, 15}, {200, 60}} {
		m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		for v := range numViews {
			m.view = v
			name := m.current().title()
			screen := m.View()
			ls := strings.Split(screen, "\n")
			if len(ls) != size[1] {
				t.Errorf("%dx%d %s: %d lines", size[0], size[1], name, len(ls))
			}
			for i, l := range ls {
				if w := lipgloss.Width(l); w > size[0] {
					t.Errorf("%dx%d %s: line %d is %d wide: %q", size[0], size[1], name, i+1, w, l)
				}
			}
		}
	}
}

// TestHostileIDs checks that no view lets a device's terminal controls
// through: the client id and host of one device hold ESC [2J, an OSC
// title, a BEL and a right-to-left override.
func TestHostileIDs(t *testing.T) {
	m := loadedModel(t, fleetDataset(t), 100, 30)
	screens := map[string]string{}
	screens["devices"] = func() string { press(t, m, "2", "end"); return m.View() }()
	screens["timeline"] = func() string { press(t, m, "enter"); return m.View() }()
	screens["record"] = func() string { press(t, m, "enter"); return m.View() }()
	screens["findings"] = func() string { press(t, m, "esc", "4"); return m.View() }()
	screens["fleet"] = func() string {
		press(t, m, "1", "home")
		for range 30 {
			press(t, m, "right")
			if strings.Contains(m.View(), "evil") {
				break
			}
		}
		return m.View()
	}()
	for name, s := range screens {
		for _, bad := range []string{"\x1b", "\x07", "\u202e"} {
			if strings.Contains(s, bad) {
				t.Errorf("%s: the screen holds %q:\n%s", name, bad, s)
			}
		}
		if !strings.Contains(s, `evil\x1b[2J\x1b]0;pwned`) { // cut short in the findings' column
			t.Errorf("%s: the escaped client id is not shown:\n%s", name, s)
		}
	}
}

// TestBatchedKeys: letters that arrive in one read (a held key, a slow
// link, tmux send-keys jjj) move as far as the same letters pressed one
// by one; a paste does not move at all.
func TestBatchedKeys(t *testing.T) {
	dir := fleetDataset(t)
	one := loadedModel(t, dir, 80, 24)
	press(t, one, "4", "j", "j", "j")
	batched := loadedModel(t, dir, 80, 24)
	press(t, batched, "4", "jjj")
	if one.findings.list.cur != 3 || batched.findings.list.cur != one.findings.list.cur {
		t.Errorf("jjj moved to finding %d; j, j, j to %d (want 4)", batched.findings.list.cur+1, one.findings.list.cur+1)
	}
	pasted := loadedModel(t, dir, 80, 24)
	press(t, pasted, "4")
	pasted.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("jjj"), Paste: true})
	if pasted.findings.list.cur != 0 {
		t.Errorf("a pasted jjj moved to finding %d", pasted.findings.list.cur+1)
	}
}

// TestStillDownSortsWorst: sorted by time to recover, worst first, the
// devices that never recovered come before any that did (issue 36: they
// were last).
func TestStillDownSortsWorst(t *testing.T) {
	v := &devicesView{sort: byTTR}
	down := analyze.DeviceFigures{ID: "a", TTR: -1, Down: true, Losses: 1}
	slow := analyze.DeviceFigures{ID: "b", TTR: time.Hour, Losses: 1}
	quiet := analyze.DeviceFigures{ID: "c", TTR: -1}
	if v.compare(&down, &slow) <= 0 || v.compare(&slow, &quiet) <= 0 {
		t.Errorf("down %d slow, slow %d quiet: want the device still down worst", v.compare(&down, &slow), v.compare(&slow, &quiet))
	}
}

// TestTimelineSaysClock: a device whose clock a check found off says so in
// its timeline's header, and that its times are as recorded (issue 36).
func TestTimelineSaysClock(t *testing.T) {
	res := &analyze.Result{Summary: analyze.Summary{Fleet: &analyze.FleetStats{ClockOffsets: []analyze.ClockOffset{
		{Device: "dev-9", Offset: -4006 * time.Millisecond}}}}}
	v := &timelineView{sh: &shared{ov: &analyze.Overview{Result: res}}}
	if got, want := v.clockText("dev-9"), " · clock 4.006s behind (times as recorded)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := v.clockText("dev-1"); got != "" {
		t.Errorf("a device with no offset: %q", got)
	}
}

// TestGlimpse checks the screen drawn while the check reads: the first
// glimpse (one device), and the last (every record read, the check
// finishing) against its golden file; the last glimpse's bars are the
// loaded fleet view's at the same width, where both start on the same
// second.
func TestGlimpse(t *testing.T) {
	dir := fleetDataset(t)
	var gs []*analyze.Glimpse
	if _, err := analyze.SurveyWatched(dir, analyze.Options{}, time.Hour, func(g *analyze.Glimpse) { gs = append(gs, g) }); err != nil {
		t.Fatal(err)
	}
	m := newModel(t, dir, 80, 24)
	m.Update(glimpseMsg{gs[0]})
	if v := m.View(); !strings.Contains(v, "reading: ") || !strings.Contains(v, "of the records read") {
		t.Errorf("the first glimpse shows:\n%s", v)
	}
	m.Update(glimpseMsg{gs[len(gs)-1]})
	golden(t, "glimpse", m.View())
	if !strings.Contains(m.View(), "finishing the check") {
		t.Errorf("the last glimpse does not say the check is finishing:\n%s", m.View())
	}
	press(t, m, "j", "enter", "/") // nothing to act on yet: no panic, no move
	if m.inputFor != inputNone {
		t.Errorf("while loading: input %d; want none", m.inputFor)
	}
}

// The y axis's labels fit its five characters.
func TestAxisLabel(t *testing.T) {
	for x, want := range map[float64]string{3: "3", 12.5: "12.5", 999: "999", 2150: "2.15k", 86400: "86.4k", 3.4e6: "3.4M", 1.2e9: "1.2G", 7e12: "7e03G"} {
		if got := axisLabel(x); got != want {
			t.Errorf("axisLabel(%v) = %q, want %q", x, got, want)
		}
	}
}

// With a window the records kept say nothing of how far the check has
// read: the glimpse counts them as the window's, with no share read.
func TestGlimpseWindowed(t *testing.T) {
	dir := fleetDataset(t)
	m := newModel(t, dir, 80, 24)
	m.sh.opts.Check.Since = time.Date(2026, 11, 30, 14, 17, 40, 0, time.UTC)
	var gs []*analyze.Glimpse
	if _, err := analyze.SurveyWatched(dir, m.sh.opts.Check, time.Hour, func(g *analyze.Glimpse) { gs = append(gs, g) }); err != nil {
		t.Fatal(err)
	}
	if len(gs) != 1 {
		t.Errorf("%d glimpses an hour apart with a window, want 1: the first device's alone", len(gs))
	}
	m.Update(glimpseMsg{gs[len(gs)-1]})
	v := m.View()
	if !strings.Contains(v, "records in the window") || strings.Contains(v, "of the records read") || strings.Contains(v, "finishing") {
		t.Errorf("a windowed glimpse shows:\n%s", v)
	}
}

// TestIncidentSaysEstimates: an incident whose times to recover and to
// first service are estimates (beyond analyze.ExactDurations) says so in
// the fleet view's incident lines.
func TestIncidentSaysEstimates(t *testing.T) {
	xs := make([]time.Duration, analyze.ExactDurations+1)
	for i := range xs {
		xs[i] = time.Duration(i) * time.Millisecond
	}
	inc := analyze.Incident{DevicesLost: len(xs), Recovered: len(xs), FirstConnectAt: analyze.NoTime, ServiceDevices: len(xs), Served: len(xs),
		TTR: analyze.DurationsOf(xs...), TTS: analyze.DurationsOf(xs...)}
	res := &analyze.Result{Summary: analyze.Summary{Fleet: &analyze.FleetStats{Incidents: []analyze.Incident{inc}}}}
	v := &fleetView{sh: &shared{ov: &analyze.Overview{Result: res}}, cur: -1}
	lines := strings.Join(v.incidents(), "\n")
	if n := strings.Count(lines, "(estimates, ±0.1%)"); n != 2 {
		t.Errorf("estimates said %d times, want 2 (times to recover and to service):\n%s", n, lines)
	}
}

// TestIncidentSaysCost: the fleet view's incident lines say what the
// outage cost, for the fields its devices count, and nothing of a field
// none counts.
func TestIncidentSaysCost(t *testing.T) {
	inc := analyze.Incident{DevicesLost: 40, FirstConnectAt: analyze.NoTime}
	inc.Cost[analyze.CostDropped] = analyze.Cost{Messages: 1234, Devices: 12, Reporting: 40}
	inc.Cost[analyze.CostExpired] = analyze.Cost{Messages: 0, Devices: 0, Reporting: 3}
	res := &analyze.Result{Summary: analyze.Summary{Fleet: &analyze.FleetStats{Incidents: []analyze.Incident{inc}}}}
	v := &fleetView{sh: &shared{ov: &analyze.Overview{Result: res}}, cur: -1}
	lines := strings.Join(v.incidents(), "\n")
	if !strings.Contains(lines, "cost: dropped 1234 by 12, expired 0 by 0") || strings.Contains(lines, "twice") {
		t.Errorf("incident lines:\n%s", lines)
	}
}

// TestIncidentSaysPresence: the fleet view's incident lines say how long
// the devices were shown online while down, when the broker's log shows
// their wills.
func TestIncidentSaysPresence(t *testing.T) {
	inc := analyze.Incident{DevicesLost: 40, FirstConnectAt: analyze.NoTime,
		Broker: &analyze.IncidentBroker{Presence: &analyze.Presence{Devices: 40, Online50: 27 * time.Second, OnlineMax: 47 * time.Second}}}
	res := &analyze.Result{Summary: analyze.Summary{Fleet: &analyze.FleetStats{Incidents: []analyze.Incident{inc}}}}
	v := &fleetView{sh: &shared{ov: &analyze.Overview{Result: res}}, cur: -1}
	if lines := strings.Join(v.incidents(), "\n"); !strings.Contains(lines, "shown online while down p50 27s, max 47s (40 with a will)") {
		t.Errorf("incident lines:\n%s", lines)
	}
}

// TestPresenceKeyOpensDevices: p on an incident whose broker log shows
// its devices' wills opens those shown online while down past the limit;
// without a broker log it says why it cannot.
func TestPresenceKeyOpensDevices(t *testing.T) {
	from := int64(1e12)
	inc := analyze.Incident{LostAt: from, DevicesLost: 3, FirstConnectAt: analyze.NoTime, Broker: &analyze.IncidentBroker{
		Presence: &analyze.Presence{From: from, Limit: 40 * time.Second, Windows: []analyze.PresenceWindow{
			{Device: "a", Until: from + int64(10*time.Second), How: analyze.PresenceWill},
			{Device: "b", Until: from + int64(41*time.Second), How: analyze.PresenceBack},
			{Device: "c", Until: from + int64(90*time.Second), How: analyze.PresenceStill}}}}}
	res := &analyze.Result{Summary: analyze.Summary{Fleet: &analyze.FleetStats{Incidents: []analyze.Incident{inc}}}}
	v := &fleetView{sh: &shared{ov: &analyze.Overview{Result: res, Devices: []analyze.DeviceFigures{{ID: "a"}, {ID: "b"}, {ID: "c"}}}}, cur: -1}
	a := v.presence()
	if !slices.Equal(a.active, []int{1, 2}) || !strings.Contains(a.label, "shown online while down past 40s after incident 1") {
		t.Errorf("p opens %v (%q), want devices b and c", a.active, a.label)
	}
	res.Summary.Fleet.Incidents[0].Broker = nil
	if a := v.presence(); a.active != nil || !strings.Contains(v.sh.notice, "--broker-log") {
		t.Errorf("p without a broker log: %v, notice %q", a.active, v.sh.notice)
	}
}
