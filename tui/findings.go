package tui

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/stormaudit/stormaudit/analyze"
)

// findingsView lists the findings, worst first (the check's order), with
// a filter over rule, device and message.
type findingsView struct {
	sh     *shared
	list   list
	rows   []int // indices in Result.Findings, filtered
	filter string
}

func (v *findingsView) title() string { return "Findings" }

func (v *findingsView) resize(h int) { v.list.h = h - 1 }

func (v *findingsView) ShortHelp() []key.Binding {
	return short(hint("enter", "open"), hint("f", "filter"), hint("/", "search"))
}

func (v *findingsView) FullHelp() [][]key.Binding {
	k := v.sh.keys
	return k.full(k.moves(), []key.Binding{k.Open, k.Filter, k.Back, k.Search, k.NextMatch, k.PrevMatch, k.NextFinding, k.PrevFinding})
}

func (v *findingsView) init() { v.refresh() }

func (v *findingsView) filterText() string { return v.filter }

func (v *findingsView) setFilter(f string) {
	v.filter = f
	v.refresh()
}

func (v *findingsView) refresh() {
	v.rows = v.rows[:0]
	for i := range v.sh.ov.Result.Findings {
		if v.filter == "" || v.matches(i, v.filter) {
			v.rows = append(v.rows, i)
		}
	}
	v.list.set(len(v.rows))
}

func (v *findingsView) matches(i int, q string) bool {
	f := &v.sh.ov.Result.Findings[i]
	return contains(f.Rule, q) || contains(f.Device, q) || contains(f.Message, q) || contains(f.Severity.String(), q)
}

func (v *findingsView) update(msg tea.KeyMsg) action {
	k := v.sh.keys
	switch {
	case v.list.move(k, msg):
	case key.Matches(msg, k.NextFinding):
		v.list.to(v.list.cur + 1)
	case key.Matches(msg, k.PrevFinding):
		v.list.to(v.list.cur - 1)
	case key.Matches(msg, k.Back):
		if v.filter != "" {
			v.setFilter("")
		}
	case key.Matches(msg, k.Open):
		if len(v.rows) == 0 {
			return none
		}
		i := v.rows[v.list.cur]
		f := &v.sh.ov.Result.Findings[i]
		a := none
		if f.Device == analyze.Fleet {
			a.at, a.atSet = f.Start, true
			v.sh.notice = fmt.Sprintf("%s: %s", f.Rule, dev(f.Message))
			return a
		}
		a.device, a.finding = f.Device, i
		return a
	}
	return none
}

func (v *findingsView) search(q string, dir int, self bool) bool {
	i := v.list.find(dir, self, func(i int) bool { return v.matches(v.rows[i], q) })
	if i >= 0 {
		v.list.to(i)
	}
	return i >= 0
}

func (v *findingsView) view(h int) string {
	sh := v.sh
	fs := sh.ov.Result.Findings
	rw := 4
	for _, i := range v.rows {
		rw = max(rw, len(fs[i].Rule))
	}
	rw = min(rw, 26)
	dw := min(max(sh.w/4, 10), 24)
	out := []string{sh.st.head.Render(fit(fmt.Sprintf("  %-7s %s %s %-12s %s", "sev", fit("rule", rw), fit("device", dw), "time", "message"), sh.w))}
	if len(fs) == 0 {
		out = append(out, "  no findings: every rule passed (see the fleet view for the notes)")
	}
	from, to := v.list.visible()
	for r := from; r < to; r++ {
		f := &fs[v.rows[r]]
		sev := sh.st.sev[f.Severity].Render(fmt.Sprintf("%-7s", f.Severity))
		text := fmt.Sprintf("%s %s %s %-12s %s", sev, fit(f.Rule, rw), fit(dev(f.Device), dw), clock(f.Start), dev(f.Message))
		out = append(out, sh.st.row(text, sh.w, r == v.list.cur))
	}
	if len(fs) > 0 && len(v.rows) == 0 {
		out = append(out, "  no finding matches: esc clears the filter")
	}
	return lines(out, sh.w, h)
}

func (v *findingsView) status() string {
	n := len(v.sh.ov.Result.Findings)
	s := fmt.Sprintf("finding %s of %s", count(min(v.list.cur+1, len(v.rows))), count(len(v.rows)))
	if v.filter != "" {
		s += fmt.Sprintf(" · filter %q hides %s (esc shows all)", dev(v.filter), count(n-len(v.rows)))
	}
	return s
}

// sortByStart orders finding indices by the findings' start times.
func sortByStart(idx []int, fs []analyze.Finding) {
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(fs[a].Start, fs[b].Start) })
}
