package tui

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/stormaudit/stormaudit/analyze"
)

// The orders of the device table.
const (
	byID = iota
	byTTR
	byAttempts
	byFindings
	numSorts
)

var sortNames = [numSorts]string{"client id", "time to recover", "attempts", "findings"}

// devicesView is the device table: sortable, filtered by client id or by
// the devices active at a moment of the fleet view.
type devicesView struct {
	sh     *shared
	list   list
	rows   []int // indices in Overview.Devices, in table order, filtered
	sort   int
	desc   bool
	filter string // a client id substring
	only   []int  // when set, the devices to show (sorted indices)
	label  string // what only is
}

func (v *devicesView) title() string { return "Devices" }

func (v *devicesView) resize(h int) { v.list.h = h - 1 }

func (v *devicesView) ShortHelp() []key.Binding {
	return short(hint("enter", "timeline"), hint("s/r", "sort"), hint("f", "filter"), hint("/", "search"))
}

func (v *devicesView) FullHelp() [][]key.Binding {
	k := v.sh.keys
	return k.full(k.moves(), []key.Binding{k.Open, k.Sort, k.Reverse, k.Filter, k.Back, k.Search, k.NextMatch, k.PrevMatch,
		k.NextFinding, k.PrevFinding})
}

func (v *devicesView) init() {
	v.sort, v.desc = byID, false
	v.refresh()
}

// restrict restricts the table to the devices ds (from the fleet view).
func (v *devicesView) restrict(ds []int, label string) {
	v.only, v.label = ds, label
	v.refresh()
	v.list.to(0)
}

func (v *devicesView) filterText() string { return v.filter }

func (v *devicesView) setFilter(f string) {
	v.filter = f
	v.refresh()
}

// refresh rebuilds the rows from the sort and the filters, keeping the
// cursor on its device where it can.
func (v *devicesView) refresh() {
	ds := v.sh.ov.Devices
	cur := -1
	if v.list.cur < len(v.rows) {
		cur = v.rows[v.list.cur]
	}
	v.rows = v.rows[:0]
	add := func(i int) {
		if v.filter == "" || contains(ds[i].ID, v.filter) {
			v.rows = append(v.rows, i)
		}
	}
	if v.only != nil {
		for _, i := range v.only {
			add(i)
		}
	} else {
		for i := range ds {
			add(i)
		}
	}
	if v.sort != byID || v.desc {
		slices.SortStableFunc(v.rows, func(a, b int) int {
			c := v.compare(&ds[a], &ds[b])
			if v.desc {
				c = -c
			}
			return cmp.Or(c, cmp.Compare(a, b))
		})
	}
	v.list.set(len(v.rows))
	if k := slices.Index(v.rows, cur); k >= 0 {
		v.list.to(k)
	}
}

func (v *devicesView) compare(a, b *analyze.DeviceFigures) int {
	switch v.sort {
	case byTTR:
		// a device still down has not recovered at all: worse than any
		// time to recover, so first when the worst come first
		return cmp.Or(cmp.Compare(stillDown(a), stillDown(b)), cmp.Compare(a.TTR, b.TTR))
	case byAttempts:
		return cmp.Compare(a.Attempts, b.Attempts)
	case byFindings:
		return cmp.Or(cmp.Compare(a.Findings, b.Findings), cmp.Compare(a.Worst, b.Worst))
	}
	return cmp.Compare(a.ID, b.ID)
}

// stillDown is 1 for a device whose records end in an outage it never
// recovered from, 0 otherwise.
func stillDown(d *analyze.DeviceFigures) int {
	if d.Down && d.Losses > 0 {
		return 1
	}
	return 0
}

func (v *devicesView) update(msg tea.KeyMsg) action {
	k := v.sh.keys
	switch {
	case v.list.move(k, msg):
	case key.Matches(msg, k.Sort):
		v.sort = (v.sort + 1) % numSorts
		v.desc = v.sort != byID // the worst first
		v.refresh()
		v.list.to(0)
	case key.Matches(msg, k.Reverse):
		v.desc = !v.desc
		v.refresh()
		v.list.to(0)
	case key.Matches(msg, k.Back):
		if v.only != nil || v.filter != "" {
			v.only, v.label, v.filter = nil, "", ""
			v.refresh()
		}
	case key.Matches(msg, k.NextFinding), key.Matches(msg, k.PrevFinding):
		dir := 1
		if key.Matches(msg, k.PrevFinding) {
			dir = -1
		}
		if i := v.list.find(dir, false, func(i int) bool { return v.sh.ov.Devices[v.rows[i]].Findings > 0 }); i >= 0 {
			v.list.to(i)
		}
	case key.Matches(msg, k.Open):
		if len(v.rows) > 0 {
			a := none
			a.device = v.sh.ov.Devices[v.rows[v.list.cur]].ID
			return a
		}
	}
	return none
}

func (v *devicesView) search(q string, dir int, self bool) bool {
	i := v.list.find(dir, self, func(i int) bool { return contains(v.sh.ov.Devices[v.rows[i]].ID, q) })
	if i >= 0 {
		v.list.to(i)
	}
	return i >= 0
}

// columns of the table after the client id.
const devCols = "attempts failed losses   recover findings      "

func (v *devicesView) view(h int) string {
	sh := v.sh
	idw := max(sh.w-len(devCols)-3, 12)
	out := []string{sh.st.head.Render(fit("  "+fit("client id", idw)+" "+devCols, sh.w))}
	from, to := v.list.visible()
	for i := from; i < to; i++ {
		d := &sh.ov.Devices[v.rows[i]]
		ttr := dur(d.TTR)
		if d.Down {
			ttr = "down"
		}
		finds := ""
		if d.Findings > 0 {
			finds = fmt.Sprintf("%d (%s)", d.Findings, d.Worst) // how many, the worst
		}
		text := fmt.Sprintf("%s %8s %6s %6s %9s %-14s", fit(dev(d.ID), idw), count(d.Attempts), count(d.Failed), count(d.Losses), ttr, finds)
		out = append(out, sh.st.row(text, sh.w, i == v.list.cur))
	}
	if len(v.rows) == 0 {
		out = append(out, "  no device matches: esc clears the filter")
	}
	return lines(out, sh.w, h)
}

func (v *devicesView) status() string {
	n := len(v.sh.ov.Devices)
	s := fmt.Sprintf("device %s of %s", count(min(v.list.cur+1, len(v.rows))), count(len(v.rows)))
	dir := "↑"
	if v.desc {
		dir = "↓"
	}
	s += fmt.Sprintf(" · by %s %s", sortNames[v.sort], dir)
	if v.label != "" {
		s += " · " + v.label
	}
	if v.filter != "" {
		s += fmt.Sprintf(" · filter %q", dev(v.filter))
	}
	if hidden := n - len(v.rows); hidden > 0 {
		s += fmt.Sprintf(" hides %s (esc shows all)", count(hidden))
	}
	return s
}
