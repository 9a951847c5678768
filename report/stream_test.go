package report

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/stormaudit/stormaudit/analyze"
)

// peakWriter discards what it is given and samples the heap at each write.
type peakWriter struct{ peak, n uint64 }

func (w *peakWriter) Write(p []byte) (int, error) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w.peak = max(w.peak, ms.HeapAlloc)
	w.n += uint64(len(p))
	return len(p), nil
}

// TestRenderingStreams: JSON and SARIF of 20,000 findings (about 30 MB
// each) grow the heap by far less than their size while they are written
// (a regression: both built the whole document in memory, and SARIF of
// 1M records with 200k devices took 4.7 GB).
func TestRenderingStreams(t *testing.T) {
	r := fixture()
	long := strings.Repeat("an explanation a reviewer can check by hand; ", 20)
	r.Findings = nil
	for i := range 20000 {
		r.Findings = append(r.Findings, analyze.Finding{Rule: "delay-bounds", Severity: analyze.Error, Device: fmt.Sprintf("dev-%06d", i),
			Message: "a message", Explanation: long, Records: []analyze.Ref{{Source: 0, Line: int64(i)}, {Source: 0, Line: int64(i + 1)}}})
	}
	for name, render := range map[string]func(io.Writer) error{
		"json":  func(w io.Writer) error { return JSON(w, r) },
		"sarif": func(w io.Writer) error { return SARIF(w, r, SARIFOptions{}) },
	} {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		w := &peakWriter{}
		if err := render(w); err != nil {
			t.Fatal(err)
		}
		// garbage not yet collected counts too (the collector runs when the
		// heap doubles): a third of the document is well above it and well
		// below what building the document in memory costs
		if grown := int64(w.peak) - int64(ms.HeapAlloc); grown > int64(w.n)/3 {
			t.Errorf("%s: the heap grew by %d MB while writing %d MB of 20,000 findings", name, grown>>20, w.n>>20)
		}
	}
}
