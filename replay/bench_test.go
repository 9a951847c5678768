package replay

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
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

// heldLateness is the p99 lateness under which BenchmarkReplayHeldRate
// counts a rate as held.
const heldLateness = 5.0 // ms

// heldRates are the rates BenchmarkReplayHeldRate tries, in order; the
// environment's STORMAUDIT_HELD_RATES (rates separated by commas) sets
// others, to profile one.
func heldRates(b *testing.B) []int {
	env := os.Getenv("STORMAUDIT_HELD_RATES")
	if env == "" {
		return []int{1000, 2000, 3000, 5000, 7500, 10000, 12500, 15000, 20000, 25000, 30000}
	}
	var rates []int
	for _, f := range strings.Split(env, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("STORMAUDIT_HELD_RATES: %q: expected rates > 0 separated by commas", env)
		}
		rates = append(rates, n)
	}
	return rates
}

// BenchmarkReplayHeldRate reports the highest rate of connects a second
// (of heldRates) at which the replay keeps its p99 lateness under 5 ms,
// against the embedded broker and against Mosquitto: at each rate it
// replays devices connecting evenly for 2 s (fewer, over less time, where
// this machine's descriptors would not hold them: 6,000 with the
// embedded broker, 15,000 against Mosquitto), twice if the first run
// misses, and stops at the first rate missed twice. It logs, for each
// run, the CPU time the replay's process and Mosquitto's spent a
// connect: where the time goes. Run it with -benchtime 3x and quote the
// median; bench/replay.sh does.
func BenchmarkReplayHeldRate(b *testing.B) {
	b.Run("embedded", func(b *testing.B) {
		heldRate(b, 6000, func() (string, func()) {
			br, err := StartEmbedded(BrokerOptions{})
			if err != nil {
				b.Fatal(err)
			}
			return br.Addr(), func() { br.Close() }
		}, nil)
	})
	b.Run("mosquitto", func(b *testing.B) {
		var log bytes.Buffer
		m := startMosquitto(b, "connection_messages false\n", &log)
		heldRate(b, 15000, func() (string, func()) { return m.Addr(), func() {} }, func() time.Duration { return procCPU(m.broker.Pid()) })
	})
	if os.Getenv("STORMAUDIT_KERNEL_PORTS") != "" {
		// the peer: connect() chooses the local ports, as before the
		// replay chose them itself
		b.Run("mosquitto-kernel-ports", func(b *testing.B) {
			chooseLocalPorts = false
			defer func() { chooseLocalPorts = true }()
			var log bytes.Buffer
			m := startMosquitto(b, "connection_messages false\n", &log)
			heldRate(b, 15000, func() (string, func()) { return m.Addr(), func() {} }, func() time.Duration { return procCPU(m.broker.Pid()) })
		})
	}
}

// heldRate runs BenchmarkReplayHeldRate against the broker start gives
// (a fresh one each run, or the same), with at most most devices a run;
// brokerCPU, when set, is the CPU time the broker's process has spent.
func heldRate(b *testing.B, most int, start func() (string, func()), brokerCPU func() time.Duration) {
	defer TuneGC()()
	if env := os.Getenv("STORMAUDIT_HELD_DEVICES"); env != "" {
		n, err := strconv.Atoi(env)
		if err != nil || n <= 0 {
			b.Fatalf("STORMAUDIT_HELD_DEVICES: %q: expected a count > 0", env)
		}
		most = n
	}
	var held []float64
	for b.Loop() {
		best := 0
	rates:
		for _, rate := range heldRates(b) {
			n := min(2*rate, most)
			plan := spread(n, time.Duration(n)*time.Second/time.Duration(rate))
			for range 2 {
				runtime.GC()
				time.Sleep(2 * time.Second) // the last run's connections wind down
				addr, stop := start()
				cpu0, broker0 := procCPU(os.Getpid()), time.Duration(0)
				if brokerCPU != nil {
					broker0 = brokerCPU()
				}
				rep, err := Run(context.Background(), plan, Options{Broker: addr, Hold: 100 * time.Millisecond})
				stop()
				if err != nil {
					b.Fatal(err)
				}
				where := fmt.Sprintf("the replay's CPU %.0f µs a connect", float64((procCPU(os.Getpid())-cpu0).Microseconds())/float64(n))
				if brokerCPU != nil {
					where += fmt.Sprintf(", the broker's %.0f µs", float64((brokerCPU()-broker0).Microseconds())/float64(n))
				}
				b.Logf("run %d: %d connects/s, %d devices: sustained %.0f/s, lateness p50 %.2f ms p99 %.2f ms, CONNACK p99 %.1f ms, %d accepted; %s",
					len(held)+1, rate, n, rep.ConnectsPerS, rep.LatenessP50Ms, rep.LatenessP99Ms, rep.ConnackP99Ms, rep.ConnectsAccepted, where)
				if rep.LatenessP99Ms < heldLateness && rep.ConnectsAccepted == n {
					best = rate
					continue rates
				}
			}
			break
		}
		held = append(held, float64(best))
		b.Logf("run %d: held %d connects/s", len(held), best)
	}
	b.ReportMetric(median(held), "held-connects/s")
}

// procCPU returns the CPU time, user and system, the process pid has
// spent (its threads included), from /proc; 0 when it cannot tell.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// the fields after the command's closing parenthesis; utime and stime
	// are the 14th and 15th of the line, in clock ticks (100 a second)
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}
