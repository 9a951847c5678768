package replay

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"time"
)

// BenchmarkReplay10k replays 10,000 devices connecting evenly over 2 s
// (5,000 connects/s) against the embedded broker, and reports the
// medians over its runs of the sustained connect rate, the schedule's
// lateness and the CONNACK latency. Run it several times (-benchtime 5x):
// the machine is shared, and a run's figures swing.
func BenchmarkReplay10k(b *testing.B) {
	benchReplay(b, 10000, 2*time.Second, BrokerOptions{})
}

// BenchmarkReplayCapacity replays 2,000 devices over 5 s against an
// embedded broker that accepts 100 connects a second, and reports the
// accepted rate over the seconds of the replay.
func BenchmarkReplayCapacity(b *testing.B) {
	benchReplay(b, 2000, 5*time.Second, BrokerOptions{Capacity: 100})
}

func benchReplay(b *testing.B, n int, span time.Duration, bo BrokerOptions) {
	defer TuneGC()() // as stormaudit replay runs
	plan := spread(n, span)
	var rate, accepted, p50, p99, ack99 []float64
	for b.Loop() {
		// the last run's connections and the broker's client goroutines
		// wind down before the next one starts
		runtime.GC()
		time.Sleep(2 * time.Second)
		br, err := StartEmbedded(bo)
		if err != nil {
			b.Fatal(err)
		}
		rep, err := Run(context.Background(), plan, Options{Broker: br.Addr(), Hold: 100 * time.Millisecond, Wills: br.Wills})
		br.Close()
		if err != nil {
			b.Fatal(err)
		}
		rate = append(rate, rep.ConnectsPerS)
		accepted = append(accepted, float64(rep.ConnectsAccepted)/rep.OpenedS)
		p50, p99, ack99 = append(p50, rep.LatenessP50Ms), append(p99, rep.LatenessP99Ms), append(ack99, rep.ConnackP99Ms)
		b.Logf("run %d: %.0f connects/s, %.1f accepted/s, lateness p50 %.3f ms p99 %.3f ms, CONNACK p99 %.1f ms",
			len(rate), rep.ConnectsPerS, accepted[len(accepted)-1], rep.LatenessP50Ms, rep.LatenessP99Ms, rep.ConnackP99Ms)
	}
	b.ReportMetric(median(rate), "connects/s")
	b.ReportMetric(median(accepted), "accepted/s")
	b.ReportMetric(median(p50), "lateness-p50-ms")
	b.ReportMetric(median(p99), "lateness-p99-ms")
	b.ReportMetric(median(ack99), "connack-p99-ms")
}

func median(xs []float64) float64 {
	slices.Sort(xs)
	return xs[len(xs)/2]
}
