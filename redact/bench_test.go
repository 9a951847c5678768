package redact

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// plainValues are typical attempt_id, record_id, client_id and
// recorded_at values: what the scanner meets millions of times and must
// pass without allocating.
func plainValues(n int) []string {
	rng := rand.New(rand.NewPCG(1, 2))
	vs := make([]string, n)
	for i := range vs {
		switch i % 4 {
		case 0:
			vs[i] = fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", rng.Uint32(), rng.Uint32()&0xffff,
				rng.Uint32()&0xfff, rng.Uint32()&0xfff, rng.Uint64()&0xffffffffffff)
		case 1:
			vs[i] = fmt.Sprintf("dev-%04d", rng.IntN(10000))
		case 2:
			vs[i] = fmt.Sprintf("2026-11-30T14:%02d:%02d.%06d+00:00", rng.IntN(60), rng.IntN(60), rng.IntN(1e6))
		case 3:
			vs[i] = fmt.Sprintf("dev-%04d/attempt-%d", rng.IntN(10000), rng.IntN(50))
		}
	}
	return vs
}

func BenchmarkScanPlain(b *testing.B) {
	vs := plainValues(1024)
	hits := 0
	fn := func(Hit) { hits++ }
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		Scan("attempt_id", vs[i%len(vs)], fn)
		i++
	}
	if hits != 0 {
		b.Fatalf("%d hits in plain values", hits)
	}
}

func BenchmarkScanJSON(b *testing.B) {
	const extra = `{"fw":"1.4.2","rssi":-71}`
	hits := 0
	fn := func(Hit) { hits++ }
	b.ReportAllocs()
	for b.Loop() {
		ScanJSON("extra", extra, fn)
	}
	if hits != 0 {
		b.Fatalf("%d hits", hits)
	}
}

// BenchmarkRedactJSON redacts an extra with a credential, a URL password
// and a MAC address: the cost of a record that has something to replace.
func BenchmarkRedactJSON(b *testing.B) {
	const extra = `{"fw":"1.4.2","mqtt":{"url":"mqtts://dev-17:hunter2@broker:8883","password":"hunter2"},"mac":"aa:bb:cc:dd:ee:ff"}`
	r := New([]byte("bench"))
	b.ReportAllocs()
	for b.Loop() {
		r.JSON("extra", extra)
	}
}

// BenchmarkRedactPlain redacts typical ids: nothing to replace.
func BenchmarkRedactPlain(b *testing.B) {
	vs := plainValues(1024)
	r := New([]byte("bench"))
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		r.String("attempt_id", vs[i%len(vs)])
		i++
	}
}
