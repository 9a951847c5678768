package hashchain

import (
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkAppend is the throughput of a collector's Writer: Append in a
// loop, with one Sync at the end (no per-record fsync), over a fleet of
// reference-client records. records/s counts the time to the end of that
// Sync, so it includes the pipeline draining.
func BenchmarkAppend(b *testing.B) {
	for _, mix := range []struct {
		name  string
		extra bool
	}{{"plain", false}, {"mixed", true}} {
		b.Run(mix.name, func(b *testing.B) {
			recs := benchRecords(4096, mix.extra)
			w, _, err := OpenWriter(filepath.Join(b.TempDir(), "bench.ndjson"), WriterOptions{Log: "stormaudit.example/collector"})
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			cpu, start := cpuTime(), time.Now()
			for b.Loop() {
				if _, err := w.Append(&recs[n%len(recs)]); err != nil {
					b.Fatal(err)
				}
				n++
			}
			if err := w.Sync(); err != nil {
				b.Fatal(err)
			}
			elapsed := time.Since(start)
			b.ReportMetric(float64(n)/elapsed.Seconds(), "records/s")
			if cpu := cpuTime() - cpu; cpu > 0 {
				b.ReportMetric(float64(n)/cpu.Seconds(), "records/cpu-s")
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}
