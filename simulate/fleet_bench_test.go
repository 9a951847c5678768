package simulate

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkFleet measures the model alone, without encoding: the serial
// part of a run.
func BenchmarkFleet(b *testing.B) {
	p, err := presetForBench("full-jitter")
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("devices=%d", n), func(b *testing.B) {
			cfg, err := Config{Devices: n, Outage: time.Minute, Policy: p, Seed: 1}.withDefaults()
			if err != nil {
				b.Fatal(err)
			}
			var st counter
			for b.Loop() {
				st = counter{}
				f := newFleet(&cfg, func([]rec) {}, nil, &st)
				f.run(nil)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(st.records), "ns/record")
		})
	}
}
