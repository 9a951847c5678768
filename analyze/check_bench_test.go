package analyze

import (
	"os"
	"testing"
)

// BenchmarkCheck runs every rule over the dataset named by
// STORMAUDIT_BENCH_DATASET (bench/check.sh builds one with simulate):
//
//	STORMAUDIT_BENCH_DATASET=/tmp/ds go test ./analyze -run '^$' -bench Check -benchtime 1x -count 3
func BenchmarkCheck(b *testing.B) {
	dir := os.Getenv("STORMAUDIT_BENCH_DATASET")
	if dir == "" {
		b.Skip("STORMAUDIT_BENCH_DATASET is not set")
	}
	var res *Result
	for b.Loop() {
		var err error
		if res, err = Check(dir, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(res.Summary.Records)/sec, "records/s")
}
