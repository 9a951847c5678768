package afteraction

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/internal/testonly/simdata"
	"github.com/stormaudit/stormaudit/policy"
	"github.com/stormaudit/stormaudit/simulate"
	"github.com/stormaudit/stormaudit/verify"
)

// fleet50k returns a dataset of 50,000 devices behind a broker that
// accepts 500 connects a second, losing it for 5 minutes and flapping
// twice on the way back, 2% of them with bad credentials: many findings
// of many rules, the worst case for a report's size. It is made once and
// kept in the temporary directory for later runs.
func fleet50k(b *testing.B) string {
	p, err := policy.Preset("full-jitter")
	if err != nil {
		b.Fatal(err)
	}
	return simdata.Dataset(b, "stormaudit-bench-report-50k-v1", simulate.Config{Devices: 50000, Outage: 5 * time.Minute, Policy: p, Seed: 1,
		Capacity: 500, Flaps: 2, FlapUp: 3 * time.Second, FlapDown: 20 * time.Second, BadAuth: 0.02})
}

// BenchmarkReport50k writes the report of a 50,000-device fleet (check,
// verify, timelines, charts, page) and loads it in headless Chromium:
// MB is the page's size, render-ms the browser's time from navigation to
// the end of the load event. The targets: under 5 MB, rendered in under 2 s.
//
//	go test -run '^$' -bench Report50k -benchtime 3x ./afteraction
func BenchmarkReport50k(b *testing.B) {
	dir := fleet50k(b)
	out := filepath.Join(b.TempDir(), "report.html")
	pol, err := policy.Preset("full-jitter")
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	var render float64
	b.ResetTimer()
	for b.Loop() {
		rep, err := Gather(dir, analyze.Options{Policy: &pol, PolicyName: "full-jitter"}, DefaultOptions)
		if err != nil {
			b.Fatal(err)
		}
		if rep.Verify, err = verify.Dataset(dir, verify.Options{}); err != nil {
			b.Fatal(err)
		}
		f, err := os.Create(out)
		if err != nil {
			b.Fatal(err)
		}
		if err := Write(f, rep, DefaultOptions); err != nil {
			b.Fatal(err)
		}
		f.Close()
		st, _ := os.Stat(out)
		size = st.Size()
		b.StopTimer()
		got := load(b, out, false, false)
		render += got.LoadMs
		if len(got.Errors) > 0 || got.Charts < 4 {
			b.Fatalf("the page did not load cleanly: errors %q, %d charts", got.Errors, got.Charts)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(size)/1e6, "MB")
	b.ReportMetric(render/float64(b.N), "render-ms")
	if size > 5e6 || render/float64(b.N) > 2000 {
		b.Errorf("targets missed: %.1f MB (at most 5), rendered in %.0f ms (at most 2000)", float64(size)/1e6, render/float64(b.N))
	}
}
