package tui

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/stormaudit/stormaudit/analyze"
)

// widths are the bucket widths the fleet view zooms through.
var widths = analyze.BucketWidths

// fleetView is the fleet over time: socket-opens per bucket by outcome and
// connects, the budget, incidents, a cursor in time with the devices
// active there, and the findings by rule.
type fleetView struct {
	sh          *shared
	first, last int64 // the activity's span
	empty       bool
	zoom        int   // index in widths
	cur, left   int64 // the cursor's bucket and the first bucket shown, from origin
	activeAt    int64 // the bucket (and zoom) active was found for
	activeZoom  int
	active      []int
	verdict     []string // report.Verdict, a line per incident, once loaded
}

// axisW is the width of the histogram's y axis labels.
const axisW = 7

func (v *fleetView) cols() int { return max(v.sh.w-axisW, 10) }

func (v *fleetView) width() int64 { return int64(widths[v.zoom]) }

// origin is the start of bucket 0 at the current zoom.
func (v *fleetView) origin() int64 { return floorDiv(v.first, v.width()) * v.width() }

// buckets is how many buckets the activity spans at the current zoom.
func (v *fleetView) buckets() int64 { return (v.last-v.origin())/v.width() + 1 }

func (v *fleetView) init() {
	v.first, v.last, v.empty = 0, 0, true
	if f, l, ok := v.sh.ov.Activity.Span(); ok {
		v.first, v.last, v.empty = f, l, false
	}
	for _, inc := range v.sh.ov.Result.Summary.Fleet.Incidents {
		if !v.empty { // the loss comes before the first socket-open it causes
			v.first = min(v.first, inc.LostAt)
		}
	}
	v.fit(time.Second)
	v.cur, v.left, v.activeAt = 0, 0, -1
}

// seek moves the cursor to the bucket holding t.
func (v *fleetView) seek(t int64) {
	if v.empty {
		return
	}
	v.cur = max(0, min(floorDiv(t-v.origin(), v.width()), v.buckets()-1))
	v.left = max(0, v.cur-int64(v.cols())/2)
}

// moveTo moves the cursor to bucket b (clamped), scrolling to keep it in
// view.
func (v *fleetView) moveTo(b int64) {
	v.cur = max(0, min(b, v.buckets()-1))
	cols := int64(v.cols())
	if v.cur < v.left {
		v.left = v.cur
	}
	if v.cur >= v.left+cols {
		v.left = v.cur - cols + 1
	}
}

// zoomBy changes the bucket width, keeping the cursor's moment.
func (v *fleetView) zoomBy(d int) {
	z := max(0, min(v.zoom+d, len(widths)-1))
	if z == v.zoom {
		return
	}
	at := v.origin() + v.cur*v.width()
	off := v.cur - v.left
	v.zoom = z
	v.cur = max(0, min(floorDiv(at-v.origin(), v.width()), v.buckets()-1))
	v.left = max(0, v.cur-min(off, int64(v.cols())-1))
}

func (v *fleetView) title() string { return "Fleet" }

// resize does nothing: the fleet view sizes itself as it draws.
func (v *fleetView) resize(int) {}

func (v *fleetView) ShortHelp() []key.Binding {
	return short(hint("←→", "time"), hint("+-", "zoom"), hint("enter", "devices"), hint("e/E", "finding"))
}

func (v *fleetView) FullHelp() [][]key.Binding {
	k := v.sh.keys
	move := []key.Binding{k.Left, k.Right, k.PageUp, k.PageDown, k.Home, k.End, k.ZoomIn, k.ZoomOut}
	return k.full(move, []key.Binding{k.Open, k.Unrecovered, k.Presence, k.NextFinding, k.PrevFinding, k.Search})
}

func (v *fleetView) update(msg tea.KeyMsg) action {
	k := v.sh.keys
	if v.empty {
		return none
	}
	page := int64(v.cols()) - 1
	switch {
	case key.Matches(msg, k.Left):
		v.moveTo(v.cur - 1)
	case key.Matches(msg, k.Right):
		v.moveTo(v.cur + 1)
	case key.Matches(msg, k.PageUp):
		v.moveTo(v.cur - page)
	case key.Matches(msg, k.PageDown):
		v.moveTo(v.cur + page)
	case key.Matches(msg, k.Home):
		v.moveTo(0)
	case key.Matches(msg, k.End):
		v.moveTo(v.buckets() - 1)
	case key.Matches(msg, k.ZoomIn):
		v.zoomBy(-1)
	case key.Matches(msg, k.ZoomOut):
		v.zoomBy(1)
	case key.Matches(msg, k.NextFinding), key.Matches(msg, k.PrevFinding):
		v.nextFinding(key.Matches(msg, k.NextFinding))
	case key.Matches(msg, k.Open):
		from := v.origin() + v.cur*v.width()
		a := none
		a.active = v.activeNow()
		a.label = fmt.Sprintf("active %s +%s", clock(from), widths[v.zoom])
		if len(a.active) == 0 {
			v.sh.notice = "no device opened a socket in this bucket"
			return none
		}
		return a
	case key.Matches(msg, k.Unrecovered):
		return v.unrecovered()
	case key.Matches(msg, k.Presence):
		return v.presence()
	}
	return none
}

// unrecovered opens the devices of the incident at or before the cursor
// that never came back.
func (v *fleetView) unrecovered() action {
	k := v.incidentAt()
	if k < 0 {
		v.sh.notice = "no incident at or before the cursor"
		return none
	}
	us := v.sh.ov.Result.Summary.Fleet.Incidents[k].Unrecovered
	if len(us) == 0 {
		v.sh.notice = fmt.Sprintf("every device of incident %d came back", k+1)
		return none
	}
	ids := make([]string, len(us))
	for i, u := range us {
		ids[i] = u.Device
	}
	return v.opened(ids, fmt.Sprintf("never came back from incident %d", k+1))
}

// presence opens the devices of the incident at or before the cursor that
// the broker's log shows online while down past the limit (docs/rules.md,
// "presence").
func (v *fleetView) presence() action {
	k := v.incidentAt()
	if k < 0 {
		v.sh.notice = "no incident at or before the cursor"
		return none
	}
	in := &v.sh.ov.Result.Summary.Fleet.Incidents[k]
	if in.Broker == nil || in.Broker.Presence == nil {
		v.sh.notice = fmt.Sprintf("no will of incident %d's devices in a broker log (--broker-log; Mosquitto's log_type all)", k+1)
		return none
	}
	p := in.Broker.Presence
	var ids []string
	for _, w := range p.Windows {
		if time.Duration(w.Until-p.From) > p.Limit {
			ids = append(ids, w.Device)
		}
	}
	if len(ids) == 0 {
		v.sh.notice = fmt.Sprintf("no device of incident %d was shown online while down past %v", k+1, p.Limit)
		return none
	}
	return v.opened(ids, fmt.Sprintf("shown online while down past %v after incident %d", p.Limit, k+1))
}

// opened is the action that opens the devices ids in the devices view,
// under label.
func (v *fleetView) opened(ids []string, label string) action {
	at := map[string]int{}
	for i := range v.sh.ov.Devices {
		at[v.sh.ov.Devices[i].ID] = i
	}
	a := none
	for _, id := range ids {
		if i, ok := at[id]; ok {
			a.active = append(a.active, i)
		}
	}
	slices.Sort(a.active)
	a.label = label
	return a
}

// incidentAt is the index of the incident at or before the cursor (else
// the first), or -1 when there is none.
func (v *fleetView) incidentAt() int {
	incs := v.sh.ov.Result.Summary.Fleet.Incidents
	if len(incs) == 0 {
		return -1
	}
	at := v.origin() + v.cur*v.width()
	return max(0, sort.Search(len(incs), func(i int) bool { return incs[i].LostAt > at })-1)
}

// nextFinding moves the cursor to the next (or previous) bucket holding
// the start of a finding.
func (v *fleetView) nextFinding(next bool) {
	fs, idx := v.sh.ov.Result.Findings, v.sh.byStart
	w, o := v.width(), v.origin()
	if next {
		end := o + (v.cur+1)*w
		k, _ := slices.BinarySearchFunc(idx, end, func(i int, t int64) int { return cmp.Compare(fs[i].Start, t) })
		if k < len(idx) {
			v.moveTo(floorDiv(fs[idx[k]].Start-o, w))
			v.sh.notice = finding(&fs[idx[k]])
			return
		}
	} else {
		start := o + v.cur*w
		k, _ := slices.BinarySearchFunc(idx, start, func(i int, t int64) int { return cmp.Compare(fs[i].Start, t) })
		if k > 0 {
			v.moveTo(floorDiv(fs[idx[k-1]].Start-o, w))
			v.sh.notice = finding(&fs[idx[k-1]])
			return
		}
	}
	v.sh.notice = "no more findings that way"
}

func finding(f *analyze.Finding) string {
	return fmt.Sprintf("%s %s %s: %s", f.Severity, f.Rule, dev(f.Device), dev(f.Message))
}

// activeNow returns the devices with a socket-open in the cursor's bucket.
func (v *fleetView) activeNow() []int {
	if v.activeAt != v.cur || v.activeZoom != v.zoom {
		from := v.origin() + v.cur*v.width()
		v.active, v.activeAt, v.activeZoom = v.sh.ov.Active(from, from+v.width()), v.cur, v.zoom
	}
	return v.active
}

func (v *fleetView) status() string {
	st := v.sh.ov.Result.Summary
	s := fmt.Sprintf("fleet · %s devices · %s records", count(st.Devices), count(int(st.Records)))
	if !v.empty {
		s += fmt.Sprintf(" · bucket %s · cursor %s", widths[v.zoom], clock(v.origin()+v.cur*v.width()))
	}
	return s + fmt.Sprintf(" · checked in %s", v.sh.loaded.Round(10*time.Millisecond))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
