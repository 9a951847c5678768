// Package testkit holds what the tests of several packages share: keys,
// generated logs, input files and the process's CPU time. Only tests
// import it.
package testkit

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"

	"golang.org/x/mod/sumdb/note"

	"github.com/stormaudit/stormaudit/hashchain"
)

// Keys returns a new signing key named name and its verifier.
func Keys(t testing.TB, name string) (note.Signer, note.Verifiers) {
	t.Helper()
	skey, vkey, err := hashchain.GenerateKey(name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return s, note.VerifierList(v)
}

// GenLines returns n seed-format lines for devices dev-0000.. in shuffled
// order, deterministic for seed.
func GenLines(n, devices int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 1))
	outcomes := []string{"backoff_wait", "attempt_failed", "connected", "rate_limited_wait"}
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf(`{"client_id": "dev-%04d", "attempt": %d, "backoff_delay_s": %g, "outcome": %q, "clean_session": false, "recorded_at": "2026-11-30T14:%02d:%02d.%06d+00:00"}`,
			rng.IntN(devices), rng.IntN(8), float64(rng.IntN(100000))/1000, outcomes[rng.IntN(4)], 17+rng.IntN(20), rng.IntN(60), rng.IntN(1000000))
	}
	return lines
}

// WriteInput writes lines to a new file named name in a temporary
// directory and returns its path.
func WriteInput(t testing.TB, name string, lines []string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Sources are the input names Records' Record.Source indexes.
var Sources = []string{"fleet-a.ndjson", "-", "fleet b/日志.csv"}

// Records returns n valid records sorted by client_id, recorded_at, with
// every optional field present or absent at random, unicode in the strings
// and Extra and Envelope on some.
func Records(seed uint64, n int) []auditfmt.Record {
	rng := rand.New(rand.NewPCG(seed, 1))
	// the outbox fields draw from a stream of their own, so that the
	// records' other values are what they were before those fields
	outbox := rand.New(rand.NewPCG(seed, 2))
	inbound := rand.New(rand.NewPCG(seed, 3)) // so too the inbound fields
	lost := rand.New(rand.NewPCG(seed, 4))    // and what was dropped and expired
	recs := make([]auditfmt.Record, n)
	base := time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC).UnixNano()
	for i := range recs {
		r := &recs[i]
		dev := i / 37
		r.ClientID = fmt.Sprintf("dev-%05d", dev)
		if dev%5 == 3 {
			r.ClientID += "-ünï-😀"
		}
		r.RecordedAt = base + int64(dev)*int64(time.Millisecond) + int64(i%37)*int64(1500*time.Millisecond) + rng.Int64N(1000)
		r.OffsetMin = []int16{0, 60, -300, 330, 1439, -1439}[rng.IntN(6)]
		r.Attempt = int64(i % 37 % 9)
		r.BackoffDelayS = rng.Float64() * 60
		r.Outcome = auditfmt.Outcome(1 + rng.IntN(8))
		r.CleanSession = rng.IntN(2) == 0
		r.Source = uint32(rng.IntN(len(Sources)))
		r.Line = int64(i + 1)
		genOptionals(rng, r)
		genOutbox(outbox, r)
		genInbound(inbound, r)
		genLost(lost, r)
	}
	return recs
}

// genOutbox sets outbox_depth and outbox_flushed on some records.
func genOutbox(rng *rand.Rand, r *auditfmt.Record) {
	if rng.IntN(2) == 0 {
		r.Has |= auditfmt.HasOutboxDepth
		r.OutboxDepth = rng.Int64N(3) * rng.Int64N(1<<20) // zero often
	}
	if rng.IntN(2) == 0 {
		r.Has |= auditfmt.HasOutboxFlushed
		if rng.IntN(3) > 0 { // else zero
			r.OutboxFlushed = rng.Int64N(1<<53 + 1) // up to 2^53, the most canonical bytes hold
		}
	}
}

// genLost sets outbox_dropped and inbound_expired on some records, the
// expired at most the redeliveries when both are set.
func genLost(rng *rand.Rand, r *auditfmt.Record) {
	if rng.IntN(3) == 0 {
		r.Has |= auditfmt.HasOutboxDropped
		r.OutboxDropped = rng.Int64N(2) * rng.Int64N(1<<53/2+1) // zero often; up to 2^53
	}
	if rng.IntN(3) == 0 {
		r.Has |= auditfmt.HasInboundExpired
		r.InboundExpired = rng.Int64N(4) // small, often zero
		if r.Has&auditfmt.HasInboundRedelivered != 0 {
			r.InboundExpired = min(r.InboundExpired, r.InboundRedelivered)
		}
	}
}

// genInbound sets inbound_redelivered and inbound_duplicates on some
// records, the duplicates at most the redeliveries when both are set.
func genInbound(rng *rand.Rand, r *auditfmt.Record) {
	if rng.IntN(2) == 0 {
		r.Has |= auditfmt.HasInboundRedelivered
		r.InboundRedelivered = rng.Int64N(3) * rng.Int64N(1<<53/2+1) // zero often; up to 2^53
	}
	if rng.IntN(2) == 0 {
		r.Has |= auditfmt.HasInboundDuplicates
		r.InboundDuplicates = rng.Int64N(4) // small, often zero
		if r.Has&auditfmt.HasInboundRedelivered != 0 {
			r.InboundDuplicates = min(r.InboundDuplicates, r.InboundRedelivered)
		}
	}
}

func genOptionals(rng *rand.Rand, r *auditfmt.Record) {
	coin := func() bool { return rng.IntN(2) == 0 }
	if coin() {
		r.Has |= auditfmt.HasSchema
		r.Schema = auditfmt.SchemaVersion
	}
	if coin() {
		r.Has |= auditfmt.HasDeviceSeq
		r.DeviceSeq = rng.Int64N(3) * rng.Int64N(1<<40) // zero often
	}
	if coin() {
		r.Has |= auditfmt.HasReasonCode
		r.ReasonCode = rng.Int64N(256) * rng.Int64N(2) // zero often
	}
	if coin() {
		r.Has |= auditfmt.HasCeiling
		r.CeilingS = float64(rng.IntN(3)) * rng.Float64() * 120
	}
	if coin() {
		r.Has |= auditfmt.HasSessionPresent
		r.SessionPresent = coin()
	}
	r.Stage = auditfmt.Stage(rng.IntN(4))
	r.FailureClass = auditfmt.FailureClass(rng.IntN(7))
	if coin() {
		r.HostID = fmt.Sprintf("host-%d", rng.IntN(50))
	}
	if coin() {
		r.AttemptID = fmt.Sprintf("att-%08x", rng.Uint32())
	}
	if coin() {
		r.RecordID = fmt.Sprintf("rec-%016x-ß", rng.Uint64())
	}
	if rng.IntN(4) == 0 {
		r.Extra = fmt.Sprintf(`{"fw":"1.%d.0","note":"ünïcødé ✓","nested":{"a":[1,2,%d]}}`, rng.IntN(9), rng.IntN(100))
	}
	if rng.IntN(3) == 0 {
		r.Envelope = `{"message":"mqtt_reconnect","levelname":"INFO","logger":"répéteur"}`
	}
}
