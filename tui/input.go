package tui

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// What the input line is for.
const (
	inputNone = iota
	inputSearch
	inputFilter
)

// keys handles the keys of one read from the terminal. Letters that
// arrive together (a held key, a slow ssh link, tmux send-keys jjj) come
// as one message of several runes; each is its own key press unless the
// terminal marked them as pasted.
func (m *Model) keys(msg tea.KeyMsg) tea.Cmd {
	if msg.Type != tea.KeyRunes || len(msg.Runes) < 2 || msg.Paste {
		return m.key(msg)
	}
	var cmds []tea.Cmd
	for _, r := range msg.Runes {
		one := msg
		one.Runes = []rune{r}
		cmds = append(cmds, m.key(one))
	}
	return tea.Sequence(cmds...)
}

// key handles a key press. The input line, when open, takes every key;
// the full help closes on any. Then the browser's own keys come first
// (quit, help, change tab), and once the check is done search and filter;
// every other key goes to the current pane.
func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	sh, k := m.sh, m.sh.keys
	sh.notice = ""
	if m.inputFor != inputNone {
		return m.inputKey(msg)
	}
	if m.full {
		m.full = false
		if key.Matches(msg, k.Quit) {
			return tea.Quit
		}
		return nil
	}
	switch {
	case key.Matches(msg, k.Quit):
		return tea.Quit
	case key.Matches(msg, k.Help):
		m.full = true
		return nil
	case key.Matches(msg, k.NextView):
		m.view = (m.view + 1) % numViews
		return nil
	case key.Matches(msg, k.PrevView):
		m.view = (m.view + numViews - 1) % numViews
		return nil
	case key.Matches(msg, k.Fleet), key.Matches(msg, k.Devices), key.Matches(msg, k.Timeline), key.Matches(msg, k.Findings):
		m.view = int(msg.String()[0] - '1')
		return nil
	}
	if sh.ov == nil {
		return nil // loading: panes have nothing to act on yet
	}
	f, canFilter := m.current().(filterer)
	switch {
	case key.Matches(msg, k.Search):
		if _, ok := m.current().(searcher); !ok {
			m.view = viewDevices // the fleet's things to search are its devices
		}
		return m.openInput(inputSearch, "/", "")
	case key.Matches(msg, k.NextMatch), key.Matches(msg, k.PrevMatch):
		dir := 1
		if key.Matches(msg, k.PrevMatch) {
			dir = -1
		}
		m.search(dir, false)
		return nil
	case canFilter && key.Matches(msg, k.Filter):
		return m.openInput(inputFilter, "filter: ", f.filterText())
	}
	return m.do(m.current().update(msg))
}

func (m *Model) openInput(what int, prompt, value string) tea.Cmd {
	m.inputFor = what
	m.input.Prompt = prompt
	m.input.SetValue(value)
	m.input.CursorEnd()
	return m.input.Focus()
}

// inputKey handles a key while the input line is open: a search moves on
// enter, a filter applies as it is typed.
func (m *Model) inputKey(msg tea.KeyMsg) tea.Cmd {
	switch msg.Type {
	case tea.KeyEnter, tea.KeyEsc:
		what := m.inputFor
		m.inputFor = inputNone
		m.input.Blur()
		if msg.Type == tea.KeyEsc {
			if what == inputFilter {
				m.setFilter("")
			}
			return nil
		}
		if what == inputSearch {
			m.query = m.input.Value()
			m.search(1, true)
		}
		return nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	if m.inputFor == inputFilter {
		m.setFilter(m.input.Value())
	}
	return cmd
}

// setFilter sets the current pane's filter (the input line opens for a
// filter only over a filterer, and the pane cannot change while it is open).
func (m *Model) setFilter(text string) {
	if f, ok := m.current().(filterer); ok {
		f.setFilter(text)
	}
}

// search moves the current view to the next match of the query in
// direction dir, the cursor's own row included if self.
func (m *Model) search(dir int, self bool) {
	if m.query == "" {
		m.sh.notice = "no search yet: / to search"
		return
	}
	s, ok := m.current().(searcher)
	if !ok {
		return
	}
	if !s.search(m.query, dir, self) {
		m.sh.notice = fmt.Sprintf("no match for %q", m.query)
	}
}
