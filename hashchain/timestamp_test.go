package hashchain

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// appendTimestamp must write what auditfmt.AppendTimestamp writes, for
// every int64 and every offset a record can hold.
func TestAppendTimestampMatchesAuditfmt(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	nss := []int64{0, -1, 1, 1e9, -1e9, 1795961854979964000, 1795961854000000000, 1795961854100000000,
		math.MaxInt64, math.MinInt64, math.MaxInt64 - 1e9, math.MinInt64 + 1e9, 951782400e9, 951868800e9 - 1}
	for range 200000 {
		ns := rng.Int64()
		if rng.IntN(2) == 0 {
			ns = ns / 1e9 * 1e9 // whole seconds
		}
		if rng.IntN(4) == 0 {
			ns = ns / 1e3 * 1e3 // microseconds, as Python writes
		}
		nss = append(nss, ns)
	}
	offsets := []int16{0, 1, -1, 60, -60, 90, -330, 1439, -1439, 345}
	for i, ns := range nss {
		off := offsets[i%len(offsets)]
		if i < 20 {
			for _, off := range offsets {
				check(t, ns, off)
			}
			continue
		}
		check(t, ns, off)
	}
}

func check(t *testing.T, ns int64, off int16) {
	t.Helper()
	got := string(appendTimestamp(nil, ns, off))
	want := string(auditfmt.AppendTimestamp(nil, ns, off))
	if got != want {
		t.Fatalf("appendTimestamp(%d, %d) = %s, want %s", ns, off, got, want)
	}
}
