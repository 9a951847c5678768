package verify

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stormaudit/stormaudit/ingest"
	"github.com/stormaudit/stormaudit/internal/testonly/testkit"
)

// BenchmarkVerify measures Verify over a 200,000-row dataset of 5,000
// devices; the figure that matters is MB/s of canonical record bytes.
func BenchmarkVerify(b *testing.B) {
	in := filepath.Join(b.TempDir(), "fleet.ndjson")
	if err := os.WriteFile(in, []byte(strings.Join(testkit.GenLines(200_000, 5000, 11), "\n")+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(b.TempDir(), "ds")
	if _, err := ingest.Run(context.Background(), dir, []ingest.Source{{Name: in}}, ingest.Options{}); err != nil {
		b.Fatal(err)
	}
	var rep *Report
	for b.Loop() {
		var err error
		if rep, err = Dataset(dir, Options{}); err != nil || rep.Problem != nil {
			b.Fatal(err, rep.Problem)
		}
	}
	b.SetBytes(rep.Bytes)
	b.ReportMetric(float64(rep.Records*int64(b.N))/b.Elapsed().Seconds(), "records/s")
}
