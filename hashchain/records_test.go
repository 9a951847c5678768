package hashchain

import (
	"math"
	"math/rand/v2"
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
	r.Has = auditfmt.Presence(rng.IntN(32))
	r.Schema, r.DeviceSeq, r.ReasonCode, r.CeilingS, r.SessionPresent = 1, rng.Int64N(1<<40), rng.Int64N(256), float(), rng.IntN(2) == 0
	if rng.IntN(3) == 0 {
		r.Extra = `{"x":1,"y":[true,null,"z"]}`
	}
	return r
}
