package tui

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/dataset"
	"github.com/stormaudit/stormaudit/internal/testonly/simdata"
	"github.com/stormaudit/stormaudit/policy"
	"github.com/stormaudit/stormaudit/simulate"
)

// benchDataset returns a dataset of 20,000 devices losing the broker
// under full jitter, made once and kept in the temporary directory for
// later runs: for 18 minutes (about 1,000,000 records) or 43 (about
// 2,000,000).
func benchDataset(b *testing.B, outage time.Duration) string {
	p, err := policy.Preset("full-jitter")
	if err != nil {
		b.Fatal(err)
	}
	key := fmt.Sprintf("stormaudit-bench-browse-20k-%s-v1", outage)
	if outage == 18*time.Minute {
		key = "stormaudit-bench-browse-20k-v1" // as it was first named
	}
	return simdata.Dataset(b, key, simulate.Config{Devices: 20000, Outage: outage, Policy: p, Seed: 1})
}

// benchKeys are the key presses timed, view by view: moving and zooming
// in time, moving, sorting and filtering 20,000 devices, the findings,
// and moving in a timeline.
var benchKeys = []string{
	"right", "right", "+", "-", "-", "end", "e", "home",
	"2", "j", "j", "pgdown", "s", "s", "s", "r", "G", "f", "d", "e", "v", "-", "0", "1", "enter", "esc",
	"4", "j", "j", "pgdown", "G", "home",
	"2", "k", "enter", "j", "j", "j", "pgdown", "e", "E", "enter", "esc", "G",
	"1", "tab", "tab", "tab", "?", "x",
}

// BenchmarkBrowse measures the browser on benchDataset's 1M and 2M
// records at 160×50: the time to the first screen with the fleet on it
// (the first glimpse of the survey, drawn), to the last glimpse (every
// record read) and to the loaded views (the check done, drawn); then each
// key press (Update and View), the opening of a device's timeline (its
// rows read and drawn), and the peak resident memory of it all (VmHWM,
// reset before each run).
func BenchmarkBrowse(b *testing.B) {
	for _, size := range []struct {
		name   string
		outage time.Duration
	}{{"1M", 18 * time.Minute}, {"2M", 43 * time.Minute}} {
		b.Run(size.name, func(b *testing.B) { benchBrowse(b, benchDataset(b, size.outage)) })
	}
}

func benchBrowse(b *testing.B, dir string) {
	man, err := dataset.ReadManifest(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d records", man.Rows)
	var first, read, check, drawn, keyP50, keyMax, open, rss []float64
	for b.Loop() {
		runtime.GC()
		debug.FreeOSMemory()
		os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // resets VmHWM (Linux)
		t0 := time.Now()
		m, err := New(Options{Dir: dir, Name: "bench", Renderer: asciiRenderer()})
		if err != nil {
			b.Fatal(err)
		}
		m.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
		seen, draw := false, time.Duration(0)
		ov, err := analyze.SurveyWatched(dir, analyze.Options{}, glimpseEvery, func(g *analyze.Glimpse) {
			// drawn on the survey's goroutine: a program draws it on
			// another, beside the survey (draw-ms says what it costs)
			t := time.Now()
			defer func() { draw += time.Since(t) }()
			m.Update(glimpseMsg{g})
			v := m.View()
			if !seen {
				if !strings.Contains(v, "so far") {
					b.Fatalf("first glimpse:\n%s", v)
				}
				first, seen = append(first, ms(time.Since(t0))), true
			}
			if g.Records == man.Rows {
				read = append(read, time.Since(t0).Seconds())
			}
		})
		drawn = append(drawn, ms(draw))
		m.Update(loadedMsg{ov: ov, err: err})
		if v := m.View(); !strings.Contains(v, "verdict") {
			b.Fatalf("loaded:\n%s", v)
		}
		check = append(check, time.Since(t0).Seconds())
		var keys []float64
		for _, k := range benchKeys {
			t := time.Now()
			_, cmd := m.Update(keyMsg(k))
			m.View()
			d := time.Since(t)
			if k == "enter" && m.view == viewTimeline && cmd != nil {
				msg := cmd() // the device's read
				m.Update(msg)
				m.View()
				open = append(open, ms(time.Since(t)))
				continue
			}
			keys = append(keys, ms(d))
		}
		slices.Sort(keys)
		keyP50, keyMax = append(keyP50, keys[len(keys)/2]), append(keyMax, keys[len(keys)-1])
		rss = append(rss, peakRSS())
		if m.timeline.recs == nil {
			b.Fatal("no timeline was opened")
		}
	}
	b.ReportMetric(median(first), "first-screen-ms")
	b.ReportMetric(median(read), "read-s")
	b.ReportMetric(median(check), "check-s")
	b.ReportMetric(median(drawn), "glimpses-drawn-ms")
	b.ReportMetric(median(keyP50), "key-p50-ms")
	b.ReportMetric(median(keyMax), "key-max-ms")
	b.ReportMetric(median(open), "open-timeline-ms")
	b.ReportMetric(median(rss), "peak-rss-MB")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// peakRSS returns the process's peak resident memory in MB (VmHWM).
func peakRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}
