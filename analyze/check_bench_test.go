package analyze

import (
	"math"
	"os"
	"slices"
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
// as one worker would run them) with their encoding and resync's fires,
// starvation's recovered devices, what finds the incidents, the figures
// and the device ids taken out; KeepFires over every shard, and the ids
// the kept fires name (Wanted, Name); KeepRecovered over every part's
// recovered devices, given the least of the parts' median times to
// recover; Infer over every part's incidents (one worker); Detail of
// every part's tallies against them (each part's worker); JudgeStorm of
// each incident's return; the figures merged; and the finishing step,
// the one that runs in one place. It reports the bytes per record of
// what each step sends on (what a distributed run shuffles) and of what
// is kept of it, and the most heap the finishing step held, measured in
// a process of its own that reads the partials from disk, in a shuffled
// order, as FinishInPasses does (finish-worker-heap-B/record: with the
// process's own, about 1.2 MB for a binary that links Arrow).
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
	var parts, keep, prune, inferring, detail, finish time.Duration
	var size, fireSize, keptSize, recSize, recKeptSize, coreSize, tallySize, assignSize, detailSize, stormSize, figSize, namesSize, namedSize, connSize int
	var in *finishInput       // what the finishing worker was given, last time
	var lastCores [][]byte    // what the inferring worker was given, last time
	var lastShares [][][]byte // what each incident's judging worker was given, last time
	var res *Result
	for b.Loop() {
		t0 := time.Now()
		var encoded [][]byte
		shards := map[int][][]byte{}
		size, fireSize, keptSize, recSize, recKeptSize, coreSize, tallySize, assignSize, detailSize, stormSize, figSize, namesSize, namedSize, connSize = 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
		least, any := time.Duration(math.MaxInt64), false
		var recovered [][]byte      // by part
		var figures [][]byte        // the fleet's figures, of every part
		var names [][]byte          // the device ids, by part
		var cores, tallies [][]byte // what finds the incidents and what details them, by part
		for i := range s.Parts() {
			p, err := s.Part(i)
			if err != nil {
				b.Fatal(err)
			}
			if m, ok := p.MedianTTR(); ok {
				least, any = min(least, m), true
			}
			rec, err := p.TakeRecovered()
			if err != nil {
				b.Fatal(err)
			}
			f, err := p.TakeFigures()
			if err != nil {
				b.Fatal(err)
			}
			figures, figSize = append(figures, f), figSize+len(f)
			recovered = append(recovered, rec)
			recSize += len(rec)
			for k, f := range p.TakeFires(1024) {
				shards[k] = append(shards[k], f)
				fireSize += len(f)
			}
			core, tally, err := p.TakeIncidents()
			if err != nil {
				b.Fatal(err)
			}
			cores, tallies, coreSize, tallySize = append(cores, core), append(tallies, tally), coreSize+len(core), tallySize+len(tally)
			ids, err := p.TakeNames()
			if err != nil {
				b.Fatal(err)
			}
			names, namesSize = append(names, ids), namesSize+len(ids)
			data, err := p.MarshalBinary()
			if err != nil {
				b.Fatal(err)
			}
			size += len(data)
			encoded = append(encoded, data)
		}
		t1 := time.Now()
		var kept [][]byte // by shard
		for _, shard := range shards {
			k, err := s.KeepFires(shard)
			if err != nil {
				b.Fatal(err)
			}
			keptSize += len(k)
			kept = append(kept, k)
		}
		wants := map[int][][]byte{} // the devices the kept fires name, by part
		for _, k := range kept {
			byPart, err := s.Wanted(k)
			if err != nil {
				b.Fatal(err)
			}
			for part, w := range byPart {
				wants[part] = append(wants[part], w)
			}
		}
		named := make([][]byte, len(names))
		for i, ids := range names { // each part's worker names what is wanted of it
			if len(wants[i]) > 0 {
				if named[i], err = s.Name(ids, wants[i]); err != nil {
					b.Fatal(err)
				}
				namedSize += len(named[i])
			}
		}
		names = nil
		t2 := time.Now()
		for i, rec := range recovered {
			if any && rec != nil {
				if recovered[i], err = s.KeepRecovered(rec, least); err != nil {
					b.Fatal(err)
				}
			}
			recKeptSize += len(recovered[i])
		}
		t3 := time.Now()
		lastCores = slices.Clone(cores) // Infer drops what it decodes
		byPart, err := s.Infer(cores)
		if err != nil {
			b.Fatal(err)
		}
		cores = nil
		t4 := time.Now()
		details := make([][]byte, len(tallies))
		storms := map[int][][]byte{}     // recovery-storm's shares, by incident
		connects := map[int64][][]byte{} // the connects, by shard of time
		for i, t := range tallies {      // each part's worker details its incidents
			assignSize += len(byPart[i])
			var shares map[int][]byte
			var conns map[int64][]byte
			if details[i], shares, conns, err = s.Detail(t, byPart[i]); err != nil {
				b.Fatal(err)
			}
			detailSize += len(details[i])
			for k, sh := range shares {
				storms[k], stormSize = append(storms[k], sh), stormSize+len(sh)
			}
			for k, c := range conns {
				connects[k], connSize = append(connects[k], c), connSize+len(c)
			}
		}
		var peaks [][]byte
		for _, shard := range connects { // each shard's worker finds its busiest windows
			pk, err := s.Peaks(shard)
			if err != nil {
				b.Fatal(err)
			}
			peaks = append(peaks, pk)
		}
		connects = nil
		byPart, tallies = nil, nil
		var judged [][]byte
		lastShares = nil
		for _, shares := range storms { // each incident's worker judges its return
			lastShares = append(lastShares, slices.Clone(shares)) // JudgeStorm drops what it decodes
			j, err := s.JudgeStorm(shares)
			if err != nil {
				b.Fatal(err)
			}
			judged = append(judged, j)
		}
		storms = nil
		merged := figures[0] // a combine: merged where they were made, in pairs, then shipped
		for _, f := range figures[1:] {
			if merged, err = MergeFigures(merged, f); err != nil {
				b.Fatal(err)
			}
		}
		figures = nil
		t5 := time.Now()
		in = &finishInput{Inference: s.Inference(), Peaks: peaks, Partials: encoded, Kept: kept, Named: named, Recovered: recovered, Details: details, Judged: judged, Figures: merged}
		if res, err = finishWorker(s, in, inMemory(encoded), nil); err != nil {
			b.Fatal(err)
		}
		parts, keep, prune, finish = parts+t1.Sub(t0), keep+t2.Sub(t1), prune+t3.Sub(t2), finish+time.Since(t5)
		inferring, detail = inferring+t4.Sub(t3), detail+t5.Sub(t4)
	}
	n := float64(b.N)
	recs := float64(res.Summary.Records)
	b.ReportMetric(recs/(parts.Seconds()/n), "part-records/s")
	b.ReportMetric(keep.Seconds()/n, "keep-s")
	b.ReportMetric(prune.Seconds()/n, "keep-recovered-s")
	b.ReportMetric(float64(recSize)/recs, "recovered-B/record")
	b.ReportMetric(float64(recKeptSize)/recs, "recovered-kept-B/record")
	b.ReportMetric(finish.Seconds()/n, "finish-s")
	b.ReportMetric(inferring.Seconds()/n, "infer-s")
	b.ReportMetric(detail.Seconds()/n, "detail-s")
	b.ReportMetric(float64(coreSize)/recs, "incidents-B/record")
	b.ReportMetric(float64(tallySize)/recs, "tallies-B/record")
	b.ReportMetric(float64(assignSize)/recs, "assigned-B/record")
	b.ReportMetric(float64(detailSize)/recs, "details-B/record")
	b.ReportMetric(float64(stormSize)/recs, "storm-shares-B/record")
	b.ReportMetric(float64(figSize)/recs, "figures-B/record")
	b.ReportMetric(float64(namesSize)/recs, "names-B/record")
	b.ReportMetric(float64(namedSize)/recs, "named-B/record")
	b.ReportMetric(float64(connSize)/recs, "connects-B/record")
	b.ReportMetric(float64(size)/recs, "partial-B/record")
	b.ReportMetric(float64(fireSize)/recs, "fires-B/record")
	b.ReportMetric(float64(keptSize)/recs, "kept-B/record")
	held, checked, err := finishWorkerHeap(dir, in)
	if err != nil {
		b.Fatal(err)
	}
	if checked != res.Summary.Records {
		b.Fatalf("the finishing worker checked %d records, the benchmark %d", checked, res.Summary.Records)
	}
	b.ReportMetric(float64(held)/recs, "finish-worker-heap-B/record")
	inferHeld, err := blobsWorkerHeap("TestInferWorker", dir, s.Inference(), lastCores)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(inferHeld)/recs, "infer-worker-heap-B/record")
	var judgeHeld uint64 // the largest incident's judging worker's
	for _, shares := range lastShares {
		h, err := blobsWorkerHeap("TestJudgeWorker", dir, s.Inference(), shares)
		if err != nil {
			b.Fatal(err)
		}
		judgeHeld = max(judgeHeld, h)
	}
	b.ReportMetric(float64(judgeHeld)/recs, "judge-worker-heap-B/record")
}
