package tui

import (
	"slices"

	"github.com/charmbracelet/bubbles/key"
)

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
	Unrecovered, Presence                 key.Binding
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
		Presence:    b("p", "shown online while down", "p"),
		Help:        b("?", "help", "?"),
		Quit:        b("q", "quit", "q", "ctrl+c"),
	}
}

// hint is a key of the one-line help: the keys as shown, what they do.
func hint(keys, desc string) key.Binding {
	return key.NewBinding(key.WithKeys(keys), key.WithHelp(keys, desc))
}

// short is a pane's one-line help: tab, the pane's own keys, help and
// quit. It must fit in 80 columns.
func short(own ...key.Binding) []key.Binding {
	return slices.Concat([]key.Binding{hint("tab", "view")}, own, []key.Binding{hint("?", "help"), hint("q", "quit")})
}

// moves are the keys that move a list's cursor.
func (k keyMap) moves() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Home, k.End}
}

// full is a pane's full help, in columns: the keys that move, the pane's
// own, and those that change view, help and quit.
func (k keyMap) full(move, own []key.Binding) [][]key.Binding {
	views := []key.Binding{k.NextView, k.PrevView, k.Fleet, k.Devices, k.Timeline, k.Findings, k.Help, k.Quit}
	return [][]key.Binding{move, own, views}
}
