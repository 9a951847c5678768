package tui

import "github.com/charmbracelet/bubbles/key"

// keyMap is every key the browser answers to. The help (? and the one-line
// help) is generated from it, showing the keys the current view enables.
type keyMap struct {
	Up, Down, PageUp, PageDown, Home, End key.Binding
	Left, Right, ZoomIn, ZoomOut          key.Binding
	NextView, PrevView, Fleet, Devices    key.Binding
	Timeline, Findings                    key.Binding
	Open, Back                            key.Binding
	Search, NextMatch, PrevMatch          key.Binding
	NextFinding, PrevFinding              key.Binding
	Filter, Sort, Reverse                 key.Binding
	Unrecovered                           key.Binding
	Help, Quit                            key.Binding
}

func newKeyMap() keyMap {
	b := func(help, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return keyMap{
		Up:          b("↑/k", "up", "up", "k"),
		Down:        b("↓/j", "down", "down", "j"),
		PageUp:      b("pgup", "page up", "pgup", "ctrl+b"),
		PageDown:    b("pgdn", "page down", "pgdown", "ctrl+f", " "),
		Home:        b("home/g", "first", "home", "g"),
		End:         b("end/G", "last", "end", "G"),
		Left:        b("←/h", "earlier", "left", "h"),
		Right:       b("→/l", "later", "right", "l"),
		ZoomIn:      b("+", "zoom in", "+", "="),
		ZoomOut:     b("-", "zoom out", "-", "_"),
		NextView:    b("tab", "next view", "tab"),
		PrevView:    b("shift+tab", "previous view", "shift+tab"),
		Fleet:       b("1", "fleet", "1"),
		Devices:     b("2", "devices", "2"),
		Timeline:    b("3", "timeline", "3"),
		Findings:    b("4", "findings", "4"),
		Open:        b("enter", "open", "enter"),
		Back:        b("esc", "back", "esc"),
		Search:      b("/", "search", "/"),
		NextMatch:   b("n", "next match", "n"),
		PrevMatch:   b("N", "previous match", "N"),
		NextFinding: b("e", "next finding", "e"),
		PrevFinding: b("E", "previous finding", "E"),
		Filter:      b("f", "filter", "f"),
		Sort:        b("s", "sort", "s"),
		Reverse:     b("r", "reverse", "r"),
		Unrecovered: b("u", "never came back", "u"),
		Help:        b("?", "help", "?"),
		Quit:        b("q", "quit", "q", "ctrl+c"),
	}
}

// short is the one-line help of view v: a few keys, grouped, that fit
// in 80 columns.
func (k keyMap) short(v int) []key.Binding {
	h := func(keys, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys), key.WithHelp(keys, desc))
	}
	tab, help, quit := h("tab", "view"), h("?", "help"), h("q", "quit")
	switch v {
	case viewFleet:
		return []key.Binding{tab, h("←→", "time"), h("+-", "zoom"), h("enter", "devices"), h("e/E", "finding"), help, quit}
	case viewDevices:
		return []key.Binding{tab, h("enter", "timeline"), h("s/r", "sort"), h("f", "filter"), h("/", "search"), help, quit}
	case viewTimeline:
		return []key.Binding{tab, h("enter", "record"), h("e/E", "finding"), h("/", "search"), h("esc", "back"), help, quit}
	}
	return []key.Binding{tab, h("enter", "open"), h("f", "filter"), h("/", "search"), help, quit}
}

// full is the full help of view v, in columns.
func (k keyMap) full(v int) [][]key.Binding {
	move := []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Home, k.End}
	views := []key.Binding{k.NextView, k.PrevView, k.Fleet, k.Devices, k.Timeline, k.Findings}
	var here []key.Binding
	switch v {
	case viewFleet:
		move = []key.Binding{k.Left, k.Right, k.PageUp, k.PageDown, k.Home, k.End, k.ZoomIn, k.ZoomOut}
		here = []key.Binding{k.Open, k.Unrecovered, k.NextFinding, k.PrevFinding, k.Search}
	case viewDevices:
		here = []key.Binding{k.Open, k.Sort, k.Reverse, k.Filter, k.Back, k.Search, k.NextMatch, k.PrevMatch, k.NextFinding, k.PrevFinding}
	case viewTimeline:
		here = []key.Binding{k.Open, k.Back, k.Search, k.NextMatch, k.PrevMatch, k.NextFinding, k.PrevFinding}
	case viewFindings:
		here = []key.Binding{k.Open, k.Filter, k.Back, k.Search, k.NextMatch, k.PrevMatch, k.NextFinding, k.PrevFinding}
	}
	return [][]key.Binding{move, here, append(views, k.Help, k.Quit)}
}
