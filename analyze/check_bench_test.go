package analyze

import (
	"math"
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

// BenchmarkSplit is BenchmarkCheck as a split check, in its steps, as
// stormaudit-beam runs it: the parts (each bucket, one after the other,
// as one worker would run them) with their encoding and resync's fires
// taken out in shards; KeepFires over every shard; every partial pruned
// by the least of the parts' median times to recover (Prune, decoded and
// encoded again); and the decoding, merging and finishing of every
// partial with the fires kept, the step that runs in one place. It
// reports the bytes per record of the partials and of the fires (what a
// distributed run shuffles), of the fires kept and of the partials
// pruned, and the heap the decoded pruned partials hold (what the
// finishing worker needs).
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
	var parts, keep, prune, finish time.Duration
	var size, fireSize, keptSize, prunedSize int
	var held uint64 // heap bytes in use once every partial is decoded
	var res *Result
	for b.Loop() {
		t0 := time.Now()
		var encoded [][]byte
		shards := map[int][][]byte{}
		size, fireSize, keptSize, prunedSize = 0, 0, 0, 0
		least, any := time.Duration(math.MaxInt64), false
		for i := range s.Parts() {
			p, err := s.Part(i)
			if err != nil {
				b.Fatal(err)
			}
			if m, ok := p.MedianTTR(); ok {
				least, any = min(least, m), true
			}
			for k, f := range p.TakeFires(1024) {
				shards[k] = append(shards[k], f)
				fireSize += len(f)
			}
			data, err := p.MarshalBinary()
			if err != nil {
				b.Fatal(err)
			}
			size += len(data)
			encoded = append(encoded, data)
		}
		t1 := time.Now()
		var kept [][]byte
		for _, shard := range shards {
			k, err := s.KeepFires(shard)
			if err != nil {
				b.Fatal(err)
			}
			keptSize += len(k)
			kept = append(kept, k)
		}
		t2 := time.Now()
		for i, data := range encoded {
			p, err := s.Decode(data)
			if err != nil {
				b.Fatal(err)
			}
			if any {
				p.Prune(least)
			}
			if encoded[i], err = p.MarshalBinary(); err != nil {
				b.Fatal(err)
			}
			prunedSize += len(encoded[i])
		}
		t3 := time.Now()
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
		if res, err = s.Finish(ps, kept...); err != nil {
			b.Fatal(err)
		}
		parts, keep, prune, finish = parts+t1.Sub(t0), keep+t2.Sub(t1), prune+t3.Sub(t2), finish+time.Since(t3)
	}
	n := float64(b.N)
	recs := float64(res.Summary.Records)
	b.ReportMetric(recs/(parts.Seconds()/n), "part-records/s")
	b.ReportMetric(keep.Seconds()/n, "keep-s")
	b.ReportMetric(prune.Seconds()/n, "prune-s")
	b.ReportMetric(float64(prunedSize)/recs, "pruned-B/record")
	b.ReportMetric(finish.Seconds()/n, "finish-s")
	b.ReportMetric(float64(size)/recs, "partial-B/record")
	b.ReportMetric(float64(fireSize)/recs, "fires-B/record")
	b.ReportMetric(float64(keptSize)/recs, "kept-B/record")
	b.ReportMetric(float64(held)/recs, "decoded-heap-B/record")
}
