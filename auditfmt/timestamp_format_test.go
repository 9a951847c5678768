package auditfmt

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// referenceTimestamp is AppendTimestamp written with package time.
func referenceTimestamp(dst []byte, ns int64, offsetMin int16) []byte {
	t := time.Unix(0, ns+int64(offsetMin)*int64(time.Minute)).UTC()
	dst = t.AppendFormat(dst, "2006-01-02T15:04:05.999999999")
	sign := byte('+')
	off := int(offsetMin)
	if off < 0 {
		sign, off = '-', -off
	}
	return append(dst, sign, byte('0'+off/600), byte('0'+off/60%10), ':', byte('0'+off%60/10), byte('0'+off%10))
}

// AppendTimestamp must write what package time writes, for every int64
// and every offset a record can hold.
func TestAppendTimestampMatchesPackageTime(t *testing.T) {
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
				checkTimestamp(t, ns, off)
			}
			continue
		}
		checkTimestamp(t, ns, off)
	}
}

func checkTimestamp(t *testing.T, ns int64, off int16) {
	t.Helper()
	got := string(AppendTimestamp(nil, ns, off))
	want := string(referenceTimestamp(nil, ns, off))
	if got != want {
		t.Fatalf("AppendTimestamp(%d, %d) = %s, want %s", ns, off, got, want)
	}
}
