package analyze

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/stormaudit/stormaudit/brokerlog"
)

// liveHeap returns the bytes in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestBrokerLogHeldByClients: what a broker log costs a check grows with
// the clients it names and the events that differ, not with its lines
// (issue 35: a 5.7 MB gzip of 20 million identical accept lines grew a
// check to 24 GB, 920 bytes a line). 500,000 identical lines from a gzip
// of a few KiB are held as one event; 200,000 distinct lines naming 2,000
// clients cost under 56 bytes a line (40, and a growing slice's slack).
func TestBrokerLogHeldByClients(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 700,000 lines")
	}
	if got := unsafe.Sizeof(brokerEv{}); got != 40 {
		t.Errorf("brokerEv is %d bytes, docs/security.md says 40", got)
	}
	line := "1796185183: New client connected from 10.0.0.1:40000 as dev-0001 (p2, c1, k30).\n"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(strings.Repeat(line, 500_000)))
	zw.Close()
	before := liveHeap()
	l, err := LoadBrokerLog(&gz, "same.log.gz", brokerlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	grew := int64(liveHeap()) - int64(before)
	runtime.KeepAlive(&gz)
	if len(l.events) != 1 || l.events[0].N != 500_000 || l.Found != 500_000 || l.info.Accepts != 500_000 || l.info.AcceptsPeak != 500_000 {
		t.Errorf("identical lines: %d events held, the first standing for %d; info %+v", len(l.events), l.events[0].N, l.info)
	}
	if grew > 1<<20 {
		t.Errorf("500,000 identical lines hold %d bytes, want under 1 MiB", grew)
	}
	runtime.KeepAlive(l)

	var b strings.Builder
	for i := range 200_000 {
		fmt.Fprintf(&b, "%d: New client connected from 10.0.%d.%d:40000 as dev-%04d (p2, c1, k30).\n", 1796185183+i/10, i%200, i%256, i%2000)
	}
	text := b.String()
	before = liveHeap()
	l, err = LoadBrokerLog(strings.NewReader(text), "distinct.log", brokerlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	grew = int64(liveHeap()) - int64(before)
	runtime.KeepAlive(text)
	if len(l.events) != 200_000 || len(l.clients) != 2001 {
		t.Errorf("distinct lines: %d events, %d clients", len(l.events), len(l.clients))
	}
	t.Logf("distinct lines: %.1f bytes each", float64(grew)/200_000)
	if per := float64(grew) / 200_000; per > 56 {
		t.Errorf("distinct lines hold %.1f bytes each, want under 56", per)
	}
	runtime.KeepAlive(l)
}

// TestRepeatedAcceptsCounted: a run of identical accepts held once is
// still counted as every one of them: paired one by one with the
// device's connected records, the rest reported as unaudited with their
// count.
func TestRepeatedAcceptsCounted(t *testing.T) {
	h := newBrokerHolder()
	e := brokerlog.Event{At: 1e18, Res: 1e9, Kind: brokerlog.Accepted, Client: "dev-01", Line: 1}
	for i := range 1000 {
		e.Line = i + 1
		h.add(&e)
	}
	l := h.done(&brokerlog.Log{Name: "rep.log", Found: 1000, Lines: 1000})
	wc := witnessCounter{On: true, Devs: []witnessDev{{Dev: 0, ID: "dev-01", Conn: []int64{1e18 + 2e8}, Refs: []Ref{{}}, Next: []int64{NoTime},
		First: 1e18, Last: 1e18 + 3e8}}}
	wit, _, _ := wc.judge([]*BrokerLog{l})
	if wit.Paired != 1 || repeats(wit.Unaudited) != 999 || len(wit.Unaudited) != 1 {
		t.Errorf("paired %d, unaudited %d in %d events", wit.Paired, repeats(wit.Unaudited), len(wit.Unaudited))
	}
}
