package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// list is a cursor over n rows shown h at a time: the part every list
// view (devices, timeline, findings) shares.
type list struct {
	n, cur, top, h int
}

// set changes the number of rows, keeping the cursor in range.
func (l *list) set(n int) {
	l.n = n
	l.to(l.cur)
}

// to moves the cursor to row i (clamped) and scrolls it into view.
func (l *list) to(i int) {
	l.cur = max(0, min(i, l.n-1))
	h := max(l.h, 1)
	if l.cur < l.top {
		l.top = l.cur
	}
	if l.cur >= l.top+h {
		l.top = l.cur - h + 1
	}
	l.top = max(0, min(l.top, l.n-h))
}

// move handles the movement keys; it reports whether msg was one.
func (l *list) move(k keyMap, msg tea.KeyMsg) bool {
	page := max(l.h-1, 1)
	switch {
	case key.Matches(msg, k.Up):
		l.to(l.cur - 1)
	case key.Matches(msg, k.Down):
		l.to(l.cur + 1)
	case key.Matches(msg, k.PageUp):
		l.to(l.cur - page)
	case key.Matches(msg, k.PageDown):
		l.to(l.cur + page)
	case key.Matches(msg, k.Home):
		l.to(0)
	case key.Matches(msg, k.End):
		l.to(l.n - 1)
	default:
		return false
	}
	return true
}

// visible returns the rows [from, to) on screen.
func (l *list) visible() (from, to int) {
	return l.top, min(l.n, l.top+max(l.h, 0))
}

// find returns the first row from the cursor in direction dir (1 or -1),
// not the cursor's own unless self, for which match is true, wrapping
// round; -1 if none.
func (l *list) find(dir int, self bool, match func(i int) bool) int {
	if l.n == 0 {
		return -1
	}
	start := l.cur
	if !self {
		start += dir
	}
	for k := range l.n {
		i := ((start+dir*k)%l.n + l.n) % l.n
		if match(i) {
			return i
		}
	}
	return -1
}

// row renders one row of a list: a marker and the cursor's style on the
// cursor row, so that it shows without colour too.
func (st *styles) row(text string, w int, cursor bool) string {
	if cursor {
		return st.cursor.Render(fit("> "+ansi.Strip(text), w)) // inner styles would end the cursor's
	}
	return fit("  "+text, w)
}

// contains reports whether s holds q, ignoring case.
func contains(s, q string) bool {
	return q != "" && strings.Contains(strings.ToLower(s), strings.ToLower(q))
}
