package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/report"
)

// view draws the fleet view in h lines.
func (v *fleetView) view(h int) string {
	sh := v.sh
	if v.empty {
		return lines([]string{"", "  the log shows no socket-open and no connect"}, sh.w, h)
	}
	fixed := 16 // verdict (3), header, axis, connects (2), marks, times, cursor, active, incidents (3), findings (2)
	histH := max(h-fixed-1, 3)
	cols := int64(v.cols())
	hist := v.sh.ov.Activity.Histogram(v.origin()+v.left*v.width(), widths[v.zoom], int(cols))
	for i := range hist {
		if v.left+int64(i) >= v.buckets() {
			hist = hist[:i]
			break
		}
	}
	out := v.verdictLines()
	out = append(out, v.legend())
	out = append(out, v.bars(hist, histH)...)
	out = append(out, v.axis(len(hist)))
	out = append(out, v.connects(hist)...)
	out = append(out, v.marks(len(hist)), v.times(len(hist)), v.cursorLine(), v.activeLine())
	out = append(out, v.incidents()...)
	out = append(out, v.rulesLines()...)
	return lines(out, sh.w, h)
}

// budgetPerBucket is the declared budget in socket-opens per bucket, 0 if
// none.
func (v *fleetView) budgetPerBucket() float64 {
	p := v.sh.opts.Check.Policy // declared; while loading, the only one known
	if v.sh.ov != nil {
		p = v.sh.ov.Result.Summary.Policy.Policy
	}
	if p == nil || p.ConnectBudgetPerS <= 0 {
		return 0
	}
	return p.ConnectBudgetPerS * time.Duration(v.width()).Seconds()
}

func (v *fleetView) legend() string {
	st := v.sh.st
	var b strings.Builder
	fmt.Fprintf(&b, "socket-opens per %s: ", widths[v.zoom])
	for k := range analyze.NumOpenKinds {
		b.WriteString(st.kind[k].Render(kindGlyph[k]) + k.String() + " ")
	}
	if bud := v.budgetPerBucket(); bud > 0 {
		b.WriteString(st.budget.Render("╌") + fmt.Sprintf("budget %.3g", bud))
	}
	return st.head.Render(b.String())
}

// bars draws the stacked histogram of socket-opens, h rows high, with the
// budget line.
func (v *fleetView) bars(hist []analyze.Bucket, h int) []string {
	top := 1.0
	for i := range hist {
		top = max(top, float64(hist[i].Total()))
	}
	bud := v.budgetPerBucket()
	top = max(top, bud*1.05)
	budRow := -1
	if bud > 0 {
		budRow = min(int(bud/top*float64(h)), h-1)
	}
	out := make([]string, h)
	for r := h - 1; r >= 0; r-- { // r counts from the bottom
		var b strings.Builder
		label := ""
		switch r {
		case h - 1:
			label = axisLabel(top)
		case budRow:
			label = axisLabel(bud)
		}
		b.WriteString(fitRight(label, axisW-2) + " ┤")
		level := (float64(r) + 0.5) * top / float64(h)
		for i := range hist {
			b.WriteString(v.cell(&hist[i], level, r, r == budRow))
		}
		out[h-1-r] = b.String()
	}
	return out
}

// cell is one cell of a bar: the kind whose share of the stack covers
// level, the budget line where the bar does not reach it, else blank.
func (v *fleetView) cell(b *analyze.Bucket, level float64, row int, budget bool) string {
	st := v.sh.st
	total := b.Total()
	if total > 0 && row == 0 {
		level = min(level, float64(total)-0.5) // a bucket with any open shows
	}
	var cum float64
	for k := range analyze.NumOpenKinds {
		cum += float64(b.Opens[k])
		if level < cum {
			return st.kind[k].Render(kindGlyph[k])
		}
	}
	if budget {
		return st.budget.Render("╌")
	}
	return " "
}

// axisLabel writes x in at most five characters for the y axis: 2150 as
// 2.15k, 3.4e6 as 3.4M.
func axisLabel(x float64) string {
	for _, u := range []struct {
		div  float64
		unit string
	}{{1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if x >= u.div {
			return strings.Replace(fmt.Sprintf("%.3g", x/u.div), "e+", "e", 1) + u.unit
		}
	}
	return fmt.Sprintf("%.3g", x)
}

// axis is the zero line, with the cursor's bucket marked ┼.
func (v *fleetView) axis(n int) string {
	var b strings.Builder
	b.WriteString(fitRight("0", axisW-2) + " ┴")
	for i := range n {
		if v.left+int64(i) == v.cur {
			b.WriteString(v.sh.st.mark.Render("┼"))
		} else {
			b.WriteString("─")
		}
	}
	return b.String()
}

// connects draws the connects per bucket, two rows high.
func (v *fleetView) connects(hist []analyze.Bucket) []string {
	top := 1
	for i := range hist {
		top = max(top, hist[i].Connects)
	}
	rows := []strings.Builder{{}, {}}
	rows[0].WriteString(fitRight(fmt.Sprint(top), axisW-2) + " ┤")
	rows[1].WriteString(fitRight("conn", axisW-2) + " ┤")
	glyphs := []string{" ", "▂", "▄", "▆", "█"}
	for i := range hist {
		eighths := 0
		if c := hist[i].Connects; c > 0 {
			eighths = max(1, c*8/top)
		}
		upper, lower := max(0, eighths-4), min(eighths, 4)
		rows[0].WriteString(v.sh.st.kind[analyze.OpenConnected].Render(glyphs[upper]))
		rows[1].WriteString(v.sh.st.kind[analyze.OpenConnected].Render(glyphs[lower]))
	}
	return []string{rows[0].String(), rows[1].String()}
}

// marks marks each incident's loss ✕ and the broker's return ^.
func (v *fleetView) marks(n int) string {
	cells := make([]string, n)
	for i := range cells {
		cells[i] = " "
	}
	put := func(t int64, glyph string) {
		if t == analyze.NoTime {
			return
		}
		if c := floorDiv(t-v.origin(), v.width()) - v.left; c >= 0 && c < int64(n) {
			cells[c] = v.sh.st.mark.Render(glyph)
		}
	}
	for _, inc := range v.sh.ov.Result.Summary.Fleet.Incidents {
		put(inc.FirstConnectAt, "^")
		put(inc.LostAt, "✕")
	}
	return strings.Repeat(" ", axisW) + strings.Join(cells, "")
}

// times labels the time axis every dozen columns or so.
func (v *fleetView) times(n int) string {
	row := []rune(strings.Repeat(" ", axisW+n))
	layout := "15:04:05"
	if widths[v.zoom] < time.Second {
		layout = "15:04:05.000"
	} else if widths[v.zoom] >= time.Hour {
		layout = "01-02 15:04"
	}
	for c := 0; c < n; {
		t := time.Unix(0, v.origin()+(v.left+int64(c))*v.width()).UTC().Format(layout)
		if axisW+c+len(t) > len(row) {
			break
		}
		copy(row[axisW+c:], []rune("|"+t))
		c += len(t) + 4
	}
	return string(row)
}

func (v *fleetView) cursorLine() string {
	from := v.origin() + v.cur*v.width()
	b := v.sh.ov.Activity.Histogram(from, widths[v.zoom], 1)[0]
	s := fmt.Sprintf("cursor %s +%s: %s socket-opens", clock(from), widths[v.zoom], count(b.Total()))
	var parts []string
	for k := range analyze.NumOpenKinds {
		if b.Opens[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", count(b.Opens[k]), k))
		}
	}
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	s += fmt.Sprintf(" · %s connects stamped in it", count(b.Connects))
	if b.Flushed > 0 {
		s += fmt.Sprintf(", %d outbox messages flushed", b.Flushed)
	}
	return s
}

func (v *fleetView) activeLine() string {
	act := v.activeNow()
	if len(act) == 0 {
		return "active: none"
	}
	s := fmt.Sprintf("active (%s, enter lists them):", count(len(act)))
	room := v.sh.w - len(s) - 10
	for i, d := range act {
		id := dev(v.sh.ov.Devices[d].ID)
		if len(id)+1 > room {
			return s + fmt.Sprintf(" … +%s", count(len(act)-i))
		}
		s, room = s+" "+id, room-len(id)-1
	}
	return s
}

// verdictLines are the verdict (report.Verdict) on the incident at or
// before the cursor, the answer a reviewer opens the browser for: three
// lines.
func (v *fleetView) verdictLines() []string {
	if v.verdict == nil {
		v.verdict = report.Verdict(v.sh.ov.Result)
	}
	k := max(v.incidentAt(), 0)
	out := wrap("verdict: "+v.verdict[min(k, len(v.verdict)-1)], v.sh.w, 3)
	for i := range out {
		out[i] = strings.TrimPrefix(out[i], "  ")
	}
	for len(out) < 3 {
		out = append(out, "")
	}
	return out
}

// incidents describes the incident at or before the cursor (else the
// first): three lines, the third why and who never came back.
func (v *fleetView) incidents() []string {
	incs := v.sh.ov.Result.Summary.Fleet.Incidents
	k := v.incidentAt()
	if k < 0 {
		return []string{"incidents: none (no loss took many devices down together)", "", ""}
	}
	inc := &incs[k]
	first := fmt.Sprintf("incident %d of %d: ✕ %s lost at %s", k+1, len(incs), plural(inc.DevicesLost, "device"), clock(inc.LostAt))
	if inc.FirstConnectAt != analyze.NoTime {
		first += fmt.Sprintf("; ^ the first back %s later", dur(time.Duration(inc.FirstConnectAt-inc.LostAt)))
	}
	second := fmt.Sprintf("  %s recovered: time to recover p50 %s, p99 %s, max %s%s", count(inc.Recovered), dur(inc.TTR50), dur(inc.TTR99), dur(inc.TTRMax),
		estimated(&inc.TTR))
	if st := inc.Storm; st != nil {
		// the busiest 1 s from any instant, as the verdict counts it: the
		// chart's buckets start on whole widths and may split it
		second += fmt.Sprintf(" · peak %d in the 1s from %s (policy ≤%.1f)", st.Recoveries, clock(st.At), st.Expected)
	}
	if inc.Silent {
		first += fmt.Sprintf(" (silent: noticed %s to %s)", clock(inc.FirstLoss), clock(inc.LastLoss))
	}
	if b := inc.Broker; b != nil {
		if b.LostAt != analyze.NoTime {
			second += fmt.Sprintf(" · broker: lost %s", clock(b.LostAt))
		}
		if b.FirstAcceptAt != analyze.NoTime {
			second += fmt.Sprintf(", first accept %s, accepts peak %d/s", clock(b.FirstAcceptAt), b.AcceptsPeak)
		}
	}
	if inc.ServiceDevices > 0 {
		second += fmt.Sprintf(" · served p50 %s%s, %s connected not served", dur(inc.TTS50), estimated(&inc.TTS), count(len(inc.Unserved)))
	}
	if c := report.CostShort(inc); c != "" {
		second += " · cost: " + c
	}
	if p := report.PresenceShort(inc); p != "" {
		second += " · " + p
	}
	third := "  why: " + report.DiagnosisText(inc)
	if n := len(inc.Unrecovered); n > 0 {
		third = fmt.Sprintf("  %s never came back (u lists them) · why: %s", count(n), report.DiagnosisText(inc))
	}
	return []string{first, second, third}
}

// rules counts the findings by rule, most first.
func (v *fleetView) rules() string {
	by := v.sh.ov.Result.Summary.ByRule
	if len(by) == 0 {
		return "findings: none"
	}
	ids := make([]string, 0, len(by))
	for id := range by {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int { return cmp.Or(cmp.Compare(by[b], by[a]), cmp.Compare(a, b)) })
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf("%s %s", id, count(by[id]))
	}
	return "findings: " + strings.Join(parts, " · ")
}

// rulesLines is rules wrapped to two lines.
func (v *fleetView) rulesLines() []string {
	w := wrap(v.rules(), v.sh.w+2, 2) // wrap indents by two: undo it on the first line
	w[0] = strings.TrimPrefix(w[0], "  ")
	for len(w) < 2 {
		w = append(w, "")
	}
	return w
}

// estimated marks percentiles that are estimates (beyond
// analyze.ExactDurations values) with how far they can be off.
func estimated(d *analyze.Durations) string {
	if d.Exact() {
		return ""
	}
	return fmt.Sprintf(" (estimates, ±%g%%)", 100*analyze.DurationsAccuracy)
}
