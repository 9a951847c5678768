package analyze

import (
	"os"
	"runtime"
	"testing"
	"time"
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

// BenchmarkSplit is BenchmarkCheck as a split check, in its steps: the
// parts (each bucket, one after the other, as one worker would run
// them), their encoding, and the decoding, merging and finishing of every
// partial, the step that runs in one place. It reports the partials'
// bytes per record (what a distributed run shuffles) and the heap the
// decoded partials hold (what the finishing worker needs).
//
//	STORMAUDIT_BENCH_DATASET=/tmp/ds64 go test ./analyze -run '^$' -bench Split -benchtime 1x -count 3
func BenchmarkSplit(b *testing.B) {
	dir := os.Getenv("STORMAUDIT_BENCH_DATASET")
	if dir == "" {
		b.Skip("STORMAUDIT_BENCH_DATASET is not set")
	}
	s, err := NewSplit(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	var parts, finish time.Duration
	var size int
	var held uint64 // heap bytes in use once every partial is decoded
	var res *Result
	for b.Loop() {
		t0 := time.Now()
		var encoded [][]byte
		size = 0
		for i := range s.Parts() {
			p, err := s.Part(i)
			if err != nil {
				b.Fatal(err)
			}
			data, err := p.MarshalBinary()
			if err != nil {
				b.Fatal(err)
			}
			size += len(data)
			encoded = append(encoded, data)
		}
		t1 := time.Now()
		var ps []*Partial
		for _, data := range encoded {
			p, err := s.Decode(data)
			if err != nil {
				b.Fatal(err)
			}
			ps = append(ps, p)
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		held = ms.HeapAlloc
		if res, err = s.Finish(ps); err != nil {
			b.Fatal(err)
		}
		parts, finish = parts+t1.Sub(t0), finish+time.Since(t1)
	}
	n := float64(b.N)
	recs := float64(res.Summary.Records)
	b.ReportMetric(recs/(parts.Seconds()/n), "part-records/s")
	b.ReportMetric(finish.Seconds()/n, "finish-s")
	b.ReportMetric(float64(size)/recs, "partial-B/record")
	b.ReportMetric(float64(held)/recs, "decoded-heap-B/record")
}
