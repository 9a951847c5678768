package tui

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/auditfmt"
)

// timelineView is one device's records in its own order, read on demand
// (analyze.ReadDevice), with its sessions and outages in the gutter, each
// backoff delay against its ceiling and the findings on each record.
type timelineView struct {
	sh      *shared
	list    list
	id      string // the device shown or being read
	recs    *analyze.DeviceRecords
	err     error
	loading bool
	took    time.Duration
	finding int // the finding it was opened at, -1 if none
	gutter  []rune
	finds   [][]int // the findings on each record
	text    []string
}

// deviceMsg carries a device read for the timeline.
type deviceMsg struct {
	id      string
	recs    *analyze.DeviceRecords
	err     error
	finding int
	took    time.Duration
}

func (v *timelineView) title() string { return "Timeline" }

func (v *timelineView) resize(h int) { v.list.h = h - 2 - v.findingLines() }

func (v *timelineView) ShortHelp() []key.Binding {
	return short(hint("enter", "record"), hint("e/E", "finding"), hint("/", "search"), hint("esc", "back"))
}

func (v *timelineView) FullHelp() [][]key.Binding {
	k := v.sh.keys
	return k.full(k.moves(), []key.Binding{k.Open, k.Back, k.Search, k.NextMatch, k.PrevMatch, k.NextFinding, k.PrevFinding})
}

// open shows device id, at finding (or -1); it returns the read to run.
func (v *timelineView) open(id string, finding int) tea.Cmd {
	if v.recs != nil && v.id == id && v.err == nil {
		v.finding = finding
		v.at(finding)
		return nil
	}
	v.id, v.loading, v.finding, v.recs, v.err = id, true, finding, nil, nil
	dir, now := v.sh.opts.Dir, v.sh.now
	return func() tea.Msg {
		t := now()
		recs, err := analyze.ReadDevice(dir, id)
		return deviceMsg{id: id, recs: recs, err: err, finding: finding, took: now().Sub(t)}
	}
}

// got takes a device read; a read overtaken by another is dropped.
func (v *timelineView) got(msg deviceMsg) {
	if msg.id != v.id {
		return
	}
	v.loading, v.recs, v.err, v.took = false, msg.recs, msg.err, msg.took
	if v.err != nil {
		return
	}
	d := v.recs.Device
	n := len(d.Events)
	v.finds, v.text = make([][]int, n), make([]string, n)
	for i, e := range d.Events {
		v.finds[i] = v.sh.byRef[recRef{e.Ref.File, e.Ref.Row}]
	}
	v.gutter = gutter(d)
	for i := range d.Events {
		v.text[i] = v.line(i)
	}
	v.list = list{h: v.list.h}
	v.resize(v.sh.h - 3)
	v.list.set(n)
	v.at(msg.finding)
}

// at puts the cursor on the first record of finding i.
func (v *timelineView) at(i int) {
	v.resize(v.sh.h - 3)
	if i < 0 || v.recs == nil {
		return
	}
	for k := range v.finds {
		if slices.Contains(v.finds[k], i) {
			v.list.to(k)
			return
		}
	}
}

// findingLines is how many lines the finding it was opened at takes.
func (v *timelineView) findingLines() int {
	if v.finding < 0 || v.sh.ov == nil {
		return 0
	}
	return 3
}

// gutter marks each record: ╳ a lost connection, ┊ in an outage (or
// starting), ┌ the connect that ended one, │ in a session.
func gutter(d *analyze.Device) []rune {
	g := make([]rune, len(d.Events))
	for i := range g {
		g[i] = ' '
	}
	for _, ep := range d.Episodes {
		last := ep.Last
		if last < 0 {
			last = len(g) - 1
		}
		for i := ep.First; i <= last && i < len(g); i++ {
			g[i] = '┊'
		}
		if ep.Loss() && ep.First < len(g) {
			g[ep.First] = '╳'
		}
		if ep.Last >= 0 {
			g[ep.Last] = '┌'
		}
	}
	for _, s := range d.Sessions {
		for i := s.UpIndex + 1; i < len(g) && g[i] == ' '; i++ {
			g[i] = '│'
		}
	}
	return g
}

var outcomeGlyph = map[auditfmt.Outcome]string{
	auditfmt.Connected: "✓", auditfmt.BackoffWait: "…", auditfmt.RateLimitedWait: "⧖",
	auditfmt.AttemptFailed: "✗", auditfmt.Refused: "⊘", auditfmt.Disconnected: "↯",
	auditfmt.GaveUp: "■", auditfmt.Stopped: "□",
}

// line is record i's row, without styles.
func (v *timelineView) line(i int) string {
	e := &v.recs.Device.Events[i]
	out := e.Outcome.String()
	if e.Stage != 0 && e.Stage != auditfmt.StageSession {
		out = e.Stage.String() + ":" + out
	}
	if e.Fail != 0 {
		out += " " + e.Fail.String()
	}
	delay, ceil, bar := "", "", ""
	if e.Outcome == auditfmt.BackoffWait || e.Outcome == auditfmt.RateLimitedWait {
		delay = secs(e.Delay)
	}
	if e.Outcome == auditfmt.BackoffWait {
		c, ok := e.Ceiling, !math.IsNaN(e.Ceiling)
		if !ok {
			c, ok = v.sh.policy.at(e.Attempt)
		}
		if ok {
			ceil, bar = secs(c), ratioBar(e.Delay, c, 6)
		}
	}
	var rules []string
	for _, f := range v.finds[i] {
		if r := v.sh.ov.Result.Findings[f].Rule; !slices.Contains(rules, r) {
			rules = append(rules, r)
		}
	}
	mark := ' '
	if len(rules) > 0 {
		mark = '◆'
	}
	return fmt.Sprintf("%c%c%5d %s %s %s %3d %7s %-7s %-6s %s", v.gutter[i], mark, i+1, clock(e.At), outcomeGlyph[e.Outcome],
		fit(out, 18), e.Attempt, delay, bar, ceil, strings.Join(rules, ","))
}

// ratioBar draws x against the ceiling c in w cells, "!" past it.
func ratioBar(x, c float64, w int) string {
	if c <= 0 {
		if x > 0 {
			return strings.Repeat("▮", w) + "!"
		}
		return strings.Repeat("▯", w)
	}
	n := int(math.Round(x / c * float64(w)))
	over := x > c*(1+1e-9)
	n = min(max(n, 0), w)
	s := strings.Repeat("▮", n) + strings.Repeat("▯", w-n)
	if over {
		s += "!"
	}
	return s
}

func (v *timelineView) update(msg tea.KeyMsg) action {
	k := v.sh.keys
	if v.recs == nil {
		if key.Matches(msg, k.Back) {
			return action{view: viewDevices, finding: -1}
		}
		return none
	}
	switch {
	case v.list.move(k, msg):
	case key.Matches(msg, k.NextFinding), key.Matches(msg, k.PrevFinding):
		dir := 1
		if key.Matches(msg, k.PrevFinding) {
			dir = -1
		}
		if i := v.list.find(dir, false, func(i int) bool { return len(v.finds[i]) > 0 }); i >= 0 {
			v.list.to(i)
		} else {
			v.sh.notice = "no findings on this device's records"
		}
	case key.Matches(msg, k.Open):
		if len(v.finds) > 0 {
			a := none
			a.push = &recordView{tl: v}
			return a
		}
	case key.Matches(msg, k.Back):
		if v.finding >= 0 {
			return action{view: viewFindings, finding: -1}
		}
		return action{view: viewDevices, finding: -1}
	}
	return none
}

func (v *timelineView) search(q string, dir int, self bool) bool {
	if v.recs == nil {
		return false
	}
	i := v.list.find(dir, self, func(i int) bool { return contains(v.text[i], q) })
	if i >= 0 {
		v.list.to(i)
	}
	return i >= 0
}

func (v *timelineView) view(h int) string {
	sh := v.sh
	switch {
	case v.id == "":
		return lines([]string{"", "  no device open: pick one in Devices or Findings and press enter"}, sh.w, h)
	case v.loading:
		return lines([]string{"", "  reading " + dev(v.id) + "…"}, sh.w, h)
	case v.err != nil:
		return lines([]string{"", "  " + sh.st.warn.Render("cannot read the device: ") + dev(v.err.Error())}, sh.w, h)
	}
	out := []string{v.header()}
	if v.finding >= 0 {
		f := &sh.ov.Result.Findings[v.finding]
		out = append(out, fit(fmt.Sprintf("finding: %s %s: %s", f.Severity, f.Rule, dev(f.Message)), sh.w))
		out = append(out, wrap(dev(f.Explained()), sh.w, 2)...)
		for len(out) < 4 {
			out = append(out, "")
		}
	}
	out = append(out, sh.st.head.Render(fit(fmt.Sprintf("  %2s%5s %-12s   %-18s %3s %7s %-7s %-6s %s", "", "#", "time", "outcome", "att",
		"delay", "of", "ceil", "findings"), sh.w)))
	from, to := v.list.visible()
	for i := from; i < to; i++ {
		out = append(out, sh.st.row(v.styled(i), sh.w, i == v.list.cur))
	}
	return lines(out, sh.w, h)
}

// styled is record i's row with its outcome in colour.
func (v *timelineView) styled(i int) string {
	t := v.text[i]
	e := &v.recs.Device.Events[i]
	var st = v.sh.st.dim
	switch e.Outcome {
	case auditfmt.Connected:
		st = v.sh.st.kind[analyze.OpenConnected]
	case auditfmt.AttemptFailed, auditfmt.Disconnected, auditfmt.GaveUp:
		st = v.sh.st.kind[analyze.OpenFailed]
	case auditfmt.Refused:
		st = v.sh.st.kind[analyze.OpenRefused]
	}
	g := outcomeGlyph[e.Outcome]
	if k := strings.Index(t, g); k >= 0 {
		return t[:k] + st.Render(g) + t[k+len(g):]
	}
	return t
}

func (v *timelineView) header() string {
	d := v.recs.Device
	losses, longest := 0, time.Duration(-1)
	for _, ep := range d.Episodes {
		if ep.Loss() {
			losses++
			if ep.End != analyze.NoTime {
				longest = max(longest, time.Duration(max(0, ep.End-ep.Start)))
			}
		}
	}
	s := fmt.Sprintf("%s · %s · %s · %s", dev(d.ID), plural(len(d.Events), "record"), plural(len(d.Sessions), "session"), plural(losses, "loss"))
	if longest >= 0 {
		s += " (longest " + dur(longest) + ")"
	}
	if d.Host != "" {
		s += " · host " + dev(d.Host)
	}
	s += v.clockText(d.ID)
	// its own findings, as the Devices view counts them; then the fleet's
	// findings that name its records
	own := map[int]bool{}
	for _, f := range v.sh.byDev[d.ID] {
		own[f] = true
	}
	fleet := map[int]bool{}
	for _, fs := range v.finds {
		for _, f := range fs {
			if !own[f] {
				fleet[f] = true
			}
		}
	}
	if len(fleet) == 0 {
		s += " · " + plural(len(own), "finding")
	} else {
		s += fmt.Sprintf(" · findings: %d own, %d fleet", len(own), len(fleet))
	}
	return v.sh.st.head.Render(fit(s, v.sh.w))
}

// clockText says the device's clock offset a check found, if any: its
// times below are as it recorded them.
func (v *timelineView) clockText(id string) string {
	st := v.sh.ov.Result.Summary.Fleet
	if st == nil {
		return ""
	}
	for _, o := range st.ClockOffsets {
		if o.Device == id {
			dir := "ahead"
			if o.Offset < 0 {
				dir = "behind"
			}
			return fmt.Sprintf(" · clock %s %s (times as recorded)", dur(o.Offset.Abs()), dir)
		}
	}
	return ""
}

func (v *timelineView) status() string {
	if v.recs == nil {
		return "timeline"
	}
	n := 0
	for _, f := range v.finds {
		if len(f) > 0 {
			n++
		}
	}
	return fmt.Sprintf("%s · record %s of %s · %d with findings · read in %s", dev(v.id), count(v.list.cur+1), count(v.list.n), n,
		v.took.Round(time.Millisecond))
}

// wrap fills at most n lines of width w with the words of s, indented
// by two; a last line that cannot hold the rest ends in "…".
func wrap(s string, w, n int) []string {
	width := max(w-2, 10)
	var out []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && ansi.StringWidth(line)+1+ansi.StringWidth(word) > width {
			if len(out) == n-1 {
				return append(out, "  "+ansi.Truncate(line, width-1, "")+"…")
			}
			out, line = append(out, "  "+line), ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		out = append(out, "  "+line)
	}
	return out
}

// secs formats seconds in at most 7 characters.
func secs(s float64) string {
	if s < 100 {
		return fmt.Sprintf("%.3fs", s)
	}
	return fmt.Sprintf("%.4gs", s)
}
