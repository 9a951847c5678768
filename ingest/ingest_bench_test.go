package ingest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/internal/testonly/testkit"
)

// BenchmarkIngest measures NDJSON to sorted zstd Parquet end to end, on all
// cores, over 200,000 generated seed-format lines of 5,000 devices.
// bench/ingest.sh measures the same through the binary at full scale.
func BenchmarkIngest(b *testing.B) {
	const n = 200_000
	in := filepath.Join(b.TempDir(), "fleet.ndjson")
	data := []byte(strings.Join(testkit.GenLines(n, 5000, 9), "\n") + "\n")
	if err := os.WriteFile(in, data, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	i := 0
	for b.Loop() {
		dir := filepath.Join(b.TempDir(), "ds", string(rune('a'+i%26)))
		i++
		if _, err := Run(context.Background(), dir, []Source{{Name: in}}, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkDecodeRun decodes records from their run encoding, as the
// merge does for every record of an ingest that spilled.
func BenchmarkDecodeRun(b *testing.B) {
	lines := testkit.GenLines(1<<14, 500, 9)
	var enc encoded
	var d auditfmt.Decoder
	for i, l := range lines {
		var e hashed
		if err := d.Decode([]byte(l), &e.rec); err != nil {
			b.Fatal(err)
		}
		e.rec.Line = int64(i + 1)
		enc.add(&e)
	}
	var e hashed
	for b.Loop() {
		prev := ""
		for i := range enc.len() {
			if err := decodeRun(enc.record(i), &e, prev); err != nil {
				b.Fatal(err)
			}
			prev = e.rec.ClientID
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*enc.len()), "ns/record")
}
