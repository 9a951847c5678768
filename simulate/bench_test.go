package simulate

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/policy"
)

// BenchmarkRun simulates a 60 s outage of fleets up to the issue's
// 1,000,000 devices under the full-jitter and fixed presets, writing the
// NDJSON to io.Discard (bench/simulate.sh measures it into a file, with
// peak RSS):
//
//	go test ./simulate -run '^$' -bench Run -benchtime 1x -count 3
func BenchmarkRun(b *testing.B) {
	for _, name := range []string{"full-jitter", "fixed"} {
		p, err := policy.Preset(name)
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range []int{100_000, 1_000_000} {
			b.Run(fmt.Sprintf("%s/devices=%d", name, n), func(b *testing.B) {
				cfg := Config{Devices: n, Outage: time.Minute, Policy: p, Seed: 1}
				var st Stats
				for b.Loop() {
					st, err = Run(context.Background(), cfg, io.Discard)
					if err != nil {
						b.Fatal(err)
					}
				}
				sec := b.Elapsed().Seconds() / float64(b.N)
				b.ReportMetric(sec, "s/outage")
				b.ReportMetric(float64(st.Records)/sec, "records/s")
				b.ReportMetric(float64(st.Records)/float64(n), "records/device")
			})
		}
	}
}

func presetForBench(name string) (policy.Policy, error) { return policy.Preset(name) }
