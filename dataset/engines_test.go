package dataset

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/hashchain"
	"github.com/stormaudit/stormaudit/internal/testonly/testkit"
)

// The engines measured against each other for issue 27: FileWriter
// ("chunks"), the row writer it replaced (legacyWriter), arrow-go's typed
// column writers (agoWriter), pqarrow from Arrow builders
// (pqarrowWriter) and parquet-go's ColumnWriters (pgColumnWriter). Run
// one at a time and alternate them, as in
//
//	for v in parquet-go-rows chunks; do ./dataset.test -test.bench "WriteEngines/^$v\$" ...; done

// engineWriter is what the benchmark asks of an engine.
type engineWriter interface {
	WriteChained([]auditfmt.Record, []hashchain.Pos) error
	Close() error
}

// BenchmarkWriteEngines writes the chained records of BenchmarkWriteFile
// with each engine (-count N runs each N times in a row: alternate the
// engines by running them one at a time, as above).
func BenchmarkWriteEngines(b *testing.B) {
	recs := typicalRecords(1 << 20)
	pos := make([]hashchain.Pos, len(recs))
	for i := range recs {
		pos[i] = chainOf(&recs[i])
	}
	engines := []struct {
		name string
		open func(path string) (engineWriter, error)
	}{
		{"parquet-go-rows", func(p string) (engineWriter, error) {
			return newLegacyWriter(p, testkit.Sources, DefaultRowGroupRows, false)
		}},
		{"parquet-go-rows-tuned", func(p string) (engineWriter, error) {
			return newLegacyWriter(p, testkit.Sources, DefaultRowGroupRows, true)
		}},
		{"parquet-go-columns", func(p string) (engineWriter, error) { return newPgColumnWriter(p, testkit.Sources) }},
		{"arrow-go-typed", func(p string) (engineWriter, error) {
			return newAgoWriter(p, testkit.Sources, agoOptions{batch: 8192})
		}},
		{"pqarrow", func(p string) (engineWriter, error) { return newPqarrowWriter(p, testkit.Sources) }},
		{"chunks", func(p string) (engineWriter, error) { return CreateFile(p, testkit.Sources) }},
	}
	for _, e := range engines {
		b.Run(e.name, func(b *testing.B) { benchEngine(b, e.open, recs, pos) })
	}
}

func benchEngine(b *testing.B, open func(string) (engineWriter, error), recs []auditfmt.Record, pos []hashchain.Pos) {
	path := filepath.Join(b.TempDir(), "bench.parquet")
	var size int64
	cpu := testkit.CPUTime()
	for b.Loop() {
		w, err := open(path)
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < len(recs); i += 8192 {
			j := min(i+8192, len(recs))
			if err := w.WriteChained(recs[i:j], pos[i:j]); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		st, _ := os.Stat(path)
		size = st.Size()
	}
	reportRows(b, len(recs), cpu)
	b.ReportMetric(float64(size)/float64(len(recs)), "B/row")
}
