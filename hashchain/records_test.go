package hashchain

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// cornerRecord returns a valid record with every field drawn at random,
// numbers and times from the corners too.
func cornerRecord(rng *rand.Rand) auditfmt.Record {
	// the corners of the plausible delays (auditfmt.MinDelayS to MaxDelayS)
	floats := []float64{0, 0.1, 1, 2.5, auditfmt.MinDelayS, 1.5e-9, 1e-7, 123456.789, 1e6, auditfmt.MaxDelayS}
	float := func() float64 {
		if rng.IntN(2) == 0 {
			return floats[rng.IntN(len(floats))]
		}
		v := min(math.Abs(rng.NormFloat64())*math.Pow(10, float64(rng.IntN(16)-9)), auditfmt.MaxDelayS)
		if v < auditfmt.MinDelayS {
			return 0
		}
		return v
	}
	strs := []string{"", "a", "dev-0001", "é\"\\\n\t\x01\u2028😀", "\x7f", "</script>"}
	str := func() string { return strs[rng.IntN(len(strs))] }
	r := auditfmt.Record{
		ClientID:      "c" + str(),
		Attempt:       rng.Int64N(1 << 53),
		BackoffDelayS: float(),
		Outcome:       auditfmt.Outcome(1 + rng.IntN(8)),
		CleanSession:  rng.IntN(2) == 0,
		RecordedAt:    rng.Int64() - math.MaxInt64/2,
		OffsetMin:     int16(rng.IntN(2*24*60-1) - 24*60 + 1),
		HostID:        str(),
		AttemptID:     str(),
		RecordID:      str(),
		Stage:         auditfmt.Stage(rng.IntN(4)),
		FailureClass:  auditfmt.FailureClass(rng.IntN(7)),
	}
	switch rng.IntN(8) {
	case 0, 1:
		r.RecordedAt = time.Date(2026, 11, 30, 14, 17, 34, rng.IntN(1e9), time.UTC).UnixNano()
	case 2: // the ends of int64 nanoseconds, beyond the years the decoder reads
		r.RecordedAt = []int64{math.MinInt64, math.MaxInt64, math.MinInt64 + 86400e9, math.MaxInt64 - 86400e9}[rng.IntN(4)]
	}
	r.Has = auditfmt.Presence(rng.IntN(2048))
	r.Schema, r.DeviceSeq, r.ReasonCode, r.CeilingS, r.SessionPresent = 1, rng.Int64N(1<<40), rng.Int64N(256), float(), rng.IntN(2) == 0
	r.OutboxDepth, r.OutboxFlushed = []int64{0, 1, 1 << 53}[rng.IntN(3)], rng.Int64N(1<<53+1)
	r.InboundRedelivered = rng.Int64N(1<<53 + 1)
	r.InboundDuplicates = min(r.InboundRedelivered, []int64{0, 1, 1 << 53}[rng.IntN(3)])
	r.OutboxDropped = []int64{0, 1, 1 << 53, rng.Int64N(1<<53 + 1)}[rng.IntN(4)]
	r.InboundExpired = min(r.InboundRedelivered, []int64{0, 1, 1 << 53}[rng.IntN(3)])
	if rng.IntN(3) == 0 {
		r.Extra = `{"x":1,"y":[true,null,"z"]}`
	}
	return r
}

// TestCheckRecordIsAppendRecordBytes holds CheckRecord to
// AppendRecordBytes: the same records fail, with the same error, over
// random and corner records and records broken in each way R refuses.
func TestCheckRecordIsAppendRecordBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	var recs []auditfmt.Record
	for range 50_000 {
		recs = append(recs, cornerRecord(rng), randomRecord(rng))
	}
	breaks := []func(*auditfmt.Record){
		func(r *auditfmt.Record) { r.Attempt = 1<<53 + 1 },
		func(r *auditfmt.Record) { r.DeviceSeq, r.Has = -(1<<53 + 1), r.Has|auditfmt.HasDeviceSeq },
		func(r *auditfmt.Record) { r.OutboxDepth, r.Has = 1<<53+1, r.Has|auditfmt.HasOutboxDepth },
		func(r *auditfmt.Record) { r.OutboxFlushed, r.Has = math.MaxInt64, r.Has|auditfmt.HasOutboxFlushed },
		func(r *auditfmt.Record) { r.Extra, r.Has = `{"outbox_flushed": 1}`, r.Has|auditfmt.HasOutboxFlushed },
		func(r *auditfmt.Record) { r.InboundRedelivered, r.Has = 1<<53+1, r.Has|auditfmt.HasInboundRedelivered },
		func(r *auditfmt.Record) {
			r.Extra, r.Has = `{"inbound_duplicates": 0}`, r.Has|auditfmt.HasInboundDuplicates
		},
		func(r *auditfmt.Record) { r.OutboxDropped, r.Has = math.MaxInt64, r.Has|auditfmt.HasOutboxDropped },
		func(r *auditfmt.Record) { r.InboundExpired, r.Has = -(1<<53 + 1), r.Has|auditfmt.HasInboundExpired },
		func(r *auditfmt.Record) { r.Extra, r.Has = `{"outbox_dropped": 1}`, r.Has|auditfmt.HasOutboxDropped },
		func(r *auditfmt.Record) { r.BackoffDelayS = math.Inf(1) },
		func(r *auditfmt.Record) { r.CeilingS, r.Has = math.NaN(), r.Has|auditfmt.HasCeiling },
		func(r *auditfmt.Record) { r.ClientID = "dev\xff" },
		func(r *auditfmt.Record) { r.HostID = "gw\xc3" },
		func(r *auditfmt.Record) { r.Outcome = 99 },
		func(r *auditfmt.Record) { r.Stage = 9 },
		func(r *auditfmt.Record) { r.FailureClass = 200 },
		func(r *auditfmt.Record) { r.OffsetMin = 24 * 60 },
		func(r *auditfmt.Record) { r.Extra = `{"n": 12345678901234567890}` },
		func(r *auditfmt.Record) { r.Extra = `{"attempt": 1}` },
		func(r *auditfmt.Record) { r.Envelope = `{"x": 0.1000000000000000055511151231257827}` },
	}
	for i := range 5000 {
		r := randomRecord(rng)
		breaks[i%len(breaks)](&r)
		recs = append(recs, r)
	}
	failed := 0
	for i := range recs {
		r := &recs[i]
		_, werr := AppendRecordBytes(nil, r)
		cerr := CheckRecord(r)
		if fmt.Sprint(werr) != fmt.Sprint(cerr) {
			t.Fatalf("record %+v: AppendRecordBytes %v, CheckRecord %v", *r, werr, cerr)
		}
		if werr != nil {
			failed++
		}
	}
	if failed < 5000 {
		t.Fatalf("only %d of the records fail: the test tests too little", failed)
	}
}
