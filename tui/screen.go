package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
)

// View draws the screen: the tabs, the current pane, the status bar and
// a help line (or the full help).
func (m *Model) View() string {
	sh := m.sh
	body := m.bodyHeight()
	var main string
	switch {
	case m.full:
		main = lines(strings.Split(m.help.FullHelpView(m.current().FullHelp()), "\n"), sh.w, body)
	case sh.err != nil:
		main = lines([]string{"", "  " + sh.st.warn.Render("cannot check the dataset: ") + dev(sh.err.Error())}, sh.w, body)
	case sh.ov == nil && sh.glimpse != nil:
		main = m.glimpseView(body)
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

// status is the status bar: the current pane's (its position and
// filters), or a notice.
func (m *Model) status() string {
	sh := m.sh
	text := ""
	switch {
	case sh.notice != "":
		text = sh.notice
	case sh.ov == nil && sh.err == nil:
		text = fmt.Sprintf("checking… %s", sh.now().Sub(sh.started).Round(100*time.Millisecond))
		if g := sh.glimpse; g != nil && sh.man.Rows > 0 && !sh.windowed() {
			text += fmt.Sprintf(" · %d%% of the records read", min(g.Records*100/sh.man.Rows, 100))
		}
	case sh.ov != nil:
		text = m.current().status()
		if m.query != "" {
			text += fmt.Sprintf(" · search %q (n/N)", dev(m.query))
		}
	}
	return sh.st.bar.Render(fit(" "+text, sh.w))
}
