//go:build unix

package analyze

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// BenchmarkCheckTail is BenchmarkCheck with the finishing step after the
// read measured apart: its share of the check's wall time (tail-%), the
// cores it kept busy on average (tail-cores: its CPU time over its wall
// time) and, from those, the part of it that ran on one core alone
// (serial-%: on 2 cores, 2 × wall − CPU, over the check's wall time).
//
//	STORMAUDIT_BENCH_DATASET=/tmp/fleet go test ./analyze -run '^$' -bench CheckTail -benchtime 1x -count 5 -cpu 2
func BenchmarkCheckTail(b *testing.B) {
	dir := os.Getenv("STORMAUDIT_BENCH_DATASET")
	if dir == "" {
		b.Skip("STORMAUDIT_BENCH_DATASET is not set")
	}
	var wall, cpu, total time.Duration
	var t0 time.Time
	var r0 syscall.Rusage
	tailProbe = func(end bool) {
		var r syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &r)
		if !end {
			t0, r0 = time.Now(), r
			return
		}
		wall += time.Since(t0)
		cpu += time.Duration(r.Utime.Nano() + r.Stime.Nano() - r0.Utime.Nano() - r0.Stime.Nano())
	}
	defer func() { tailProbe = nil }()
	for b.Loop() {
		start := time.Now()
		if _, err := Check(dir, Options{}); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
	}
	b.ReportMetric(100*wall.Seconds()/total.Seconds(), "tail-%")
	b.ReportMetric(cpu.Seconds()/wall.Seconds(), "tail-cores")
	serial := max(0, 2*wall-cpu) // on 2 cores: the time one of them was idle
	b.ReportMetric(100*serial.Seconds()/total.Seconds(), "serial-%")
}
