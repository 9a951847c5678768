package tui

import (
	"bytes"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/stormaudit/stormaudit/analyze"
)

// TestFlow runs the browser as a program at 80×24 and walks a reviewer's
// path: open the fleet, jump to the findings, open the first finding about
// a device in its timeline, search a device, open it, quit.
func TestFlow(t *testing.T) {
	m := newModel(t, fleetDataset(t), 80, 24)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
	// waitFor waits for a frame that shows all of what: each wait reads
	// the output on, so what one frame shows is asked for at once
	waitFor := func(what ...string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
			for _, w := range what {
				if !bytes.Contains(b, []byte(w)) {
					return false
				}
			}
			return true
		},
			teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	}
	keys := func(ks ...string) {
		for _, k := range ks {
			tm.Send(keyMsg(k))
		}
	}
	waitFor("incident 1 of 1")
	keys("4")
	waitFor("finding 1 of 10")
	keys("/")
	tm.Type("delay-bounds")
	keys("enter")
	waitFor("finding 7 of 10")
	keys("enter")
	waitFor("finding: error delay-bounds", `evil\x1b[2J`)
	keys("2", "/")
	tm.Type("dev-0012")
	keys("enter", "enter")
	waitFor("dev-0012 · 24 records")
	keys("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	final := tm.FinalModel(t).(*Model)
	if final.view != viewTimeline || final.timeline.id != "dev-0012" {
		t.Errorf("ended in view %d on %q, want the timeline of dev-0012", final.view, final.timeline.id)
	}
}

// TestFlowQuitWhileLoading quits before the check is done.
func TestFlowQuitWhileLoading(t *testing.T) {
	m := newModel(t, fleetDataset(t), 80, 24)
	release := make(chan struct{})
	survey := m.sh.opts.Survey
	m.sh.opts.Survey = func(dir string, opts analyze.Options, watch func(*analyze.Glimpse)) (*analyze.Overview, error) {
		<-release
		return survey(dir, opts, watch)
	}
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("checking 146 records")) })
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	close(release)
}

// TestFlowGlimpse runs the browser as a program while the check is held
// after its first glimpse: the fleet read so far is drawn, then the
// loaded fleet view replaces it.
func TestFlowGlimpse(t *testing.T) {
	m := newModel(t, fleetDataset(t), 80, 24)
	release := make(chan struct{})
	survey := m.sh.opts.Survey
	m.sh.opts.Survey = func(dir string, opts analyze.Options, watch func(*analyze.Glimpse)) (*analyze.Overview, error) {
		first := true
		return survey(dir, opts, func(g *analyze.Glimpse) {
			watch(g)
			if first {
				first = false
				<-release
			}
		})
	}
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
	wait := func(what string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(what)) },
			teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	}
	wait("so far.")
	close(release)
	wait("incident 1 of 1")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}
