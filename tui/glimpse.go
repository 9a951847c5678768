package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/stormaudit/stormaudit/analyze"
)

// glimpseEvery is how often the survey shows the fleet as it reads.
const glimpseEvery = 150 * time.Millisecond

// glimpseMsg carries the fleet as far as the survey has read it; nil
// when the survey is done.
type glimpseMsg struct{ g *analyze.Glimpse }

// glimpses passes the survey's glimpses to the program, the latest only:
// a glimpse the program has not taken yet is replaced by a newer one.
type glimpses chan *analyze.Glimpse

// put hands g over in place of any glimpse not yet taken. The survey's
// goroutine is the only sender.
func (c glimpses) put(g *analyze.Glimpse) {
	select {
	case c <- g:
		return
	default:
	}
	select {
	case <-c:
	default:
	}
	c <- g
}

// next waits for the next glimpse; the message's glimpse is nil once the
// survey is done (the channel closed).
func (c glimpses) next() tea.Cmd {
	return func() tea.Msg { return glimpseMsg{<-c} }
}

// glimpseView draws the fleet as read so far in h lines: the progress,
// and the socket-opens and connects per bucket as the fleet view draws
// them, at the narrowest whole-second width that fits. Nothing moves yet:
// the incidents, the verdict, the findings and the clock offsets come
// with the check's end.
func (m *Model) glimpseView(h int) string {
	sh, g := m.sh, m.sh.glimpse
	first, last, ok := g.Span()
	head := fmt.Sprintf("reading: %s of %s records, %s so far.", count(int(g.Records)), count(int(sh.man.Rows)), plural(g.Devices, "device"))
	if sh.windowed() { // the records the window leaves out are not counted
		head = fmt.Sprintf("reading: %s records in the window, %s so far.", count(int(g.Records)), plural(g.Devices, "device"))
	} else if g.Records >= sh.man.Rows {
		head = fmt.Sprintf("read: %s records of %s; finishing the check.", count(int(g.Records)), plural(g.Devices, "device"))
	}
	head += " The verdict, the incidents and the findings come when the check is done; until then each device is on its own clock."
	if !ok {
		return lines(append(wrap(head, sh.w, 3), "", "  no socket-open and no connect yet"), sh.w, h)
	}
	v := &fleetView{sh: sh, first: first, last: last, cur: -1}
	v.fit(time.Second)
	hist := g.Histogram(v.origin(), widths[v.zoom], int(min(v.buckets(), int64(v.cols()))))
	out := wrap(head, sh.w+2, 3) // wrap indents by two: undone below
	for i := range out {
		out[i] = strings.TrimPrefix(out[i], "  ")
	}
	for len(out) < 3 {
		out = append(out, "")
	}
	out = append(out, v.legend())
	out = append(out, v.bars(hist, max(h-8, 3))...)
	out = append(out, v.axis(len(hist)))
	out = append(out, v.connects(hist)...)
	out = append(out, v.times(len(hist)))
	return lines(out, sh.w, h)
}

// fit sets the zoom to the narrowest width, at least least, at which the
// activity's span fits the columns.
func (v *fleetView) fit(least time.Duration) {
	v.zoom = slices.Index(widths, least)
	for v.zoom < len(widths)-1 && v.buckets() > int64(v.cols()) {
		v.zoom++
	}
}
