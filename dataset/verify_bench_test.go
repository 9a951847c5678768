package dataset

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkVerify measures Verify over a 200,000-row dataset of 5,000
// devices; the figure that matters is MB/s of canonical record bytes.
func BenchmarkVerify(b *testing.B) {
	in := filepath.Join(b.TempDir(), "fleet.ndjson")
	if err := os.WriteFile(in, []byte(strings.Join(genLines(200_000, 5000, 11), "\n")+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(b.TempDir(), "ds")
	if _, err := Ingest(context.Background(), dir, []Source{{Name: in}}, IngestOptions{}); err != nil {
		b.Fatal(err)
	}
	var rep *VerifyReport
	for b.Loop() {
		var err error
		if rep, err = Verify(dir, VerifyOptions{}); err != nil || rep.Problem != nil {
			b.Fatal(err, rep.Problem)
		}
	}
	b.SetBytes(rep.Bytes)
	b.ReportMetric(float64(rep.Records*int64(b.N))/b.Elapsed().Seconds(), "records/s")
}
