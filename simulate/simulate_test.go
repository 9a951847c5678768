package simulate

import (
	"bufio"
	"bytes"
	"context"
	"math"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/policy"
)

// run simulates cfg and decodes every line of the output, failing the test
// on any line the decoder rejects.
func run(t *testing.T, cfg Config) ([]auditfmt.Record, Stats, []byte) {
	t.Helper()
	var buf bytes.Buffer
	st, err := Run(context.Background(), cfg, &buf)
	if err != nil {
		t.Fatal(err)
	}
	var recs []auditfmt.Record
	var d auditfmt.Decoder
	sc := bufio.NewScanner(bytes.NewReader(buf.Bytes()))
	for n := 1; sc.Scan(); n++ {
		var r auditfmt.Record
		if err := d.Decode(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %d: %v\n%s", n, err, sc.Bytes())
		}
		recs = append(recs, r)
	}
	if int64(len(recs)) != st.Records {
		t.Fatalf("Stats.Records = %d, the output has %d lines", st.Records, len(recs))
	}
	return recs, st, buf.Bytes()
}

func preset(t *testing.T, name string) policy.Policy {
	t.Helper()
	p, err := policy.Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// window returns a full-jitter policy whose every draw is uniform in
// [0, w] seconds.
func window(t *testing.T, w float64) policy.Policy {
	t.Helper()
	p, err := policy.Parse("window.json", []byte(`{"delay": "full_jitter", "base_delay_s": `+ftoa(w)+`, "max_delay_s": `+ftoa(w)+`, "multiplier": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func ftoa(f float64) string { return string(auditfmt.AppendFloat(nil, f)) }

// at returns a record's time in microseconds from DefaultStart.
func at(r *auditfmt.Record) int64 { return (r.RecordedAt - DefaultStart.UnixNano()) / 1000 }

// TestFullJitterSpreadsOverTheWindow checks the closed form of the first
// window: N devices drawing uniformly from [0, W] put N/W socket-opens on
// the broker in each second of it. With no latency, each first attempt
// fails at its socket-open, so the attempt_failed records with attempt 1
// are the first socket-opens.
func TestFullJitterSpreadsOverTheWindow(t *testing.T) {
	const n, w = 20000, 10
	recs, _, _ := run(t, Config{Devices: n, Outage: time.Hour, Policy: window(t, w), Seed: 7, Latency: -1, Horizon: w * time.Second})
	var perS [w]float64
	for i := range recs {
		if r := &recs[i]; r.Outcome == auditfmt.AttemptFailed && r.Attempt == 1 {
			perS[at(r)/microsPerSecond]++
		}
	}
	mean, sd := float64(n)/w, math.Sqrt(float64(n)/w*(1-1.0/w))
	chi2 := 0.0
	for s, got := range perS {
		if math.Abs(got-mean) > 5*sd {
			t.Errorf("second %d: %v first socket-opens, want %v ± %.0f (5 sd)", s, got, mean, 5*sd)
		}
		chi2 += (got - mean) * (got - mean) / mean
	}
	// 9 degrees of freedom: P(chi2 > 27.9) = 0.001
	if chi2 > 27.9 {
		t.Errorf("chi-square against uniform = %.1f, above 27.9 (p = 0.001); per second: %v", chi2, perS)
	}
}

// TestFullJitterSteadyRate checks the renewal rate of a long outage: a
// device that waits uniform [0, W] and then L for the failure opens a
// socket every W/2 + L seconds on average, so N of them put N/(W/2+L)
// opens per second on the broker.
func TestFullJitterSteadyRate(t *testing.T) {
	const n, w = 2000, 4.0
	lat := 100 * time.Millisecond
	_, st, _ := run(t, Config{Devices: n, Outage: time.Hour, Policy: window(t, w), Seed: 3, Latency: lat, Horizon: 120 * time.Second})
	want := n / (w/2 + lat.Seconds())
	if math.Abs(st.MeanPerS-want)/want > 0.02 {
		t.Errorf("mean socket-opens per second = %.1f, want %.1f ± 2%%", st.MeanPerS, want)
	}
}

// TestFixedTimerFleetStaysInPhase checks the classic storm: a fleet on a
// fixed timer that dropped together puts all N attempts on the broker at
// the same instant, every interval, until the broker is back.
func TestFixedTimerFleetStaysInPhase(t *testing.T) {
	const n = 500
	recs, st, _ := run(t, Config{Devices: n, Outage: 32 * time.Second, Policy: preset(t, "fixed"), Seed: 1})
	opens := map[int64]int{}
	for i := range recs {
		switch r := &recs[i]; r.Outcome {
		case auditfmt.AttemptFailed, auditfmt.Connected:
			opens[at(r)]++
		}
	}
	// opens every 5 s + 50 ms latency: 5.05, 10.1, ..., 30.3, then success at 35.35
	if len(opens) != 7 {
		t.Errorf("socket-opens at %d distinct instants, want 7: %v", len(opens), opens)
	}
	for ts, k := range opens {
		if k != n {
			t.Errorf("%d outcomes at %.6f s, want all %d devices", k, float64(ts)/1e6, n)
		}
	}
	if st.PeakPerS != n || st.PeakUpPerS != n || st.Recovered != n || st.TTRMax != 35350*time.Millisecond {
		t.Errorf("peak %d/s, recovered %d, TTR max %v; want %d, %d, 35.35s", st.PeakPerS, st.Recovered, st.TTRMax, n, n)
	}
}

// TestJitterDoesLessWorkUnderCapacity reproduces the published AWS backoff
// simulations: against a broker that accepts a fixed number of connects
// per second, full jitter recovers the fleet with fewer attempts than
// exponential backoff without jitter.
func TestJitterDoesLessWorkUnderCapacity(t *testing.T) {
	cfg := Config{Devices: 2000, Outage: 10 * time.Second, Seed: 5, Capacity: 50, Horizon: 4 * time.Hour}
	cfg.Policy = preset(t, "exponential")
	_, exp, _ := run(t, cfg)
	cfg.Policy = preset(t, "full-jitter")
	cfg.Policy.MinConnectSpacingS = 0
	_, jit, _ := run(t, cfg)
	t.Logf("exponential: %d attempts, %d refused, TTR max %v; full jitter: %d attempts, %d refused, TTR max %v",
		exp.Attempts, exp.RefusedOverload, exp.TTRMax, jit.Attempts, jit.RefusedOverload, jit.TTRMax)
	if exp.Recovered != 2000 || jit.Recovered != 2000 {
		t.Fatalf("recovered %d (exponential) and %d (full jitter) of 2000 within the horizon", exp.Recovered, jit.Recovered)
	}
	if jit.Attempts >= exp.Attempts {
		t.Errorf("full jitter took %d attempts, exponential %d: want fewer with jitter", jit.Attempts, exp.Attempts)
	}
}

// TestSameSeedIsByteIdentical checks determinism, and that the seed
// matters.
func TestSameSeedIsByteIdentical(t *testing.T) {
	cfg := Config{Devices: 300, Outage: 40 * time.Second, Policy: preset(t, "full-jitter"), Seed: 11, DevicesPerHost: 4, Flaps: 1, FlapUp: 2 * time.Second, FlapDown: 10 * time.Second}
	_, _, a := run(t, cfg)
	_, _, b := run(t, cfg)
	if !bytes.Equal(a, b) {
		t.Fatal("two runs with the same seed differ")
	}
	cfg.Seed = 12
	if _, _, c := run(t, cfg); bytes.Equal(a, c) {
		t.Fatal("seeds 11 and 12 give the same output")
	}
}

// TestCopiedSeedsDrawIdenticalDelays checks the copied-image pathology:
// every device draws the same delay sequence.
func TestCopiedSeedsDrawIdenticalDelays(t *testing.T) {
	recs, _, _ := run(t, Config{Devices: 50, Outage: 30 * time.Second, Policy: preset(t, "full-jitter"), Seed: 2, SameSeed: true})
	seqs := delaysByDevice(recs)
	first := seqs["dev-0001"]
	if len(first) < 4 {
		t.Fatalf("dev-0001 drew %d delays, want several", len(first))
	}
	for id, s := range seqs {
		if !equalFloats(s, first) {
			t.Fatalf("%s drew %v, dev-0001 drew %v", id, s, first)
		}
	}
	recs, _, _ = run(t, Config{Devices: 50, Outage: 30 * time.Second, Policy: preset(t, "full-jitter"), Seed: 2})
	seqs = delaysByDevice(recs)
	if equalFloats(seqs["dev-0001"], seqs["dev-0002"]) {
		t.Fatal("without SameSeed, dev-0001 and dev-0002 drew the same delays")
	}
}

func delaysByDevice(recs []auditfmt.Record) map[string][]float64 {
	out := map[string][]float64{}
	for _, r := range recs {
		if r.Outcome == auditfmt.BackoffWait {
			out[r.ClientID] = append(out[r.ClientID], r.BackoffDelayS)
		}
	}
	return out
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestTickQuantisesDelays checks that every drawn delay is a whole number
// of ticks.
func TestTickQuantisesDelays(t *testing.T) {
	recs, _, _ := run(t, Config{Devices: 100, Outage: 30 * time.Second, Policy: preset(t, "full-jitter"), Seed: 4, Tick: 500 * time.Millisecond})
	for _, r := range recs {
		if r.Outcome == auditfmt.BackoffWait {
			if q := r.BackoffDelayS / 0.5; q != math.Trunc(q) {
				t.Fatalf("%s attempt %d drew %v s, not a multiple of 0.5 s", r.ClientID, r.Attempt, r.BackoffDelayS)
			}
		}
	}
}
