package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/internal/safe"
)

// styles are the looks of the browser, from one renderer: with the ASCII
// profile (NO_COLOR, a dumb terminal, tests) they render plain text, so
// nothing may be told by colour alone: outcomes have their own glyphs and
// the cursor its own marker.
type styles struct {
	r                         *lipgloss.Renderer
	tab, tabOn, bar, dim      lipgloss.Style
	cursor, match, head, warn lipgloss.Style
	kind                      [analyze.NumOpenKinds]lipgloss.Style
	sev                       [analyze.Error + 1]lipgloss.Style
	budget, mark              lipgloss.Style
}

func newStyles(r *lipgloss.Renderer) styles {
	s := r.NewStyle
	st := styles{
		r:      r,
		tab:    s().Padding(0, 1),
		tabOn:  s().Padding(0, 1).Bold(true).Reverse(true),
		bar:    s().Reverse(true),
		dim:    s().Faint(true),
		cursor: s().Reverse(true),
		match:  s().Underline(true),
		head:   s().Bold(true),
		warn:   s().Foreground(lipgloss.Color("3")),
		budget: s().Foreground(lipgloss.Color("6")),
		mark:   s().Foreground(lipgloss.Color("5")).Bold(true),
	}
	st.kind[analyze.OpenConnected] = s().Foreground(lipgloss.Color("2"))
	st.kind[analyze.OpenRefused] = s().Foreground(lipgloss.Color("5"))
	st.kind[analyze.OpenFailed] = s().Foreground(lipgloss.Color("1"))
	st.kind[analyze.OpenPending] = s().Foreground(lipgloss.Color("3"))
	st.sev[analyze.Info] = s()
	st.sev[analyze.Warning] = s().Foreground(lipgloss.Color("3"))
	st.sev[analyze.Error] = s().Foreground(lipgloss.Color("1")).Bold(true)
	return st
}

// kindGlyph draws each kind of socket-open in the histogram: told apart
// without colour.
var kindGlyph = [analyze.NumOpenKinds]string{"█", "▓", "▒", "░"}

// fit returns s cut or padded to exactly w cells. s must hold no escape
// sequences: device strings go through safe.Text first (see dev).
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) > w {
		s = ansi.Truncate(s, w, "…")
	}
	if n := ansi.StringWidth(s); n < w {
		s += strings.Repeat(" ", w-n)
	}
	return s
}

// fitRight is fit aligned right.
func fitRight(s string, w int) string {
	if n := ansi.StringWidth(s); n < w {
		return strings.Repeat(" ", w-n) + s
	}
	return fit(s, w)
}

// dev returns a device-provided string as it may be shown.
func dev(s string) string { return safe.Text(s) }

// clock formats a Unix ns time of day in UTC to the millisecond.
func clock(ns int64) string {
	if ns == analyze.NoTime {
		return "-"
	}
	return time.Unix(0, ns).UTC().Format("15:04:05.000")
}

// stamp formats a Unix ns time in full, UTC, to the microsecond.
func stamp(ns int64) string {
	if ns == analyze.NoTime {
		return "-"
	}
	return time.Unix(0, ns).UTC().Format("2006-01-02T15:04:05.000000Z")
}

// dur formats a duration as check and report write it: Go's notation,
// to the millisecond ("20.2s", "1m15.747s"), to the microsecond below one.
func dur(d time.Duration) string {
	switch {
	case d < 0:
		return "-"
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// count formats n with thousands separators.
func count(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + count(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// lines pads or cuts the text to exactly h lines of width w; a line cut
// ends in "…".
func lines(ls []string, w, h int) string {
	out := make([]string, h)
	for i := range out {
		if i < len(ls) {
			out[i] = ls[i]
			if ansi.StringWidth(out[i]) > w {
				out[i] = ansi.Truncate(out[i], w, "…")
			}
		}
	}
	return strings.Join(out, "\n")
}

// plural returns "n thing" or "n things" ("n losses" for loss).
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	if strings.HasSuffix(thing, "s") {
		return count(n) + " " + thing + "es"
	}
	return count(n) + " " + thing + "s"
}
