package ingest

import (
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/stormaudit/stormaudit/internal/testonly/testkit"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// TestSorterOrder sorts records through chunks, run files and the merge,
// with client ids longer than the 16 bytes of a sort key and records that
// tie on client and time, and compares the result with compareRows.
func TestSorterOrder(t *testing.T) {
	recs := testkit.Records(7, 5000)
	for i := range recs {
		recs[i].Source, recs[i].Line = uint32(i%3), int64(i+1)
		switch i % 4 {
		case 1:
			recs[i].ClientID = "a-client-id-longer-than-sixteen-bytes-" + recs[i].ClientID[:1]
		case 2:
			recs[i].RecordedAt = recs[i-1].RecordedAt
			recs[i].ClientID = recs[i-1].ClientID
		}
	}
	for _, limit := range []int{7, 97, 1000, 10000} {
		s := newSorter(t.TempDir(), limit)
		var b encoded
		for i := range recs {
			e := hashed{rec: recs[i]}
			b.add(&e)
			if b.len() == 333 || i == len(recs)-1 {
				if err := s.add(&b); err != nil {
					t.Fatal(err)
				}
				b.reset()
			}
		}
		m, err := s.finish()
		if err != nil {
			t.Fatal(err)
		}
		want := slices.Clone(recs)
		slices.SortFunc(want, func(a, b auditfmt.Record) int { return compareRows(&a, &b) })
		for i := range want {
			var e hashed
			if err := m.next(&e); err != nil {
				t.Fatalf("limit %d: record %d: %v", limit, i, err)
			}
			if e.rec != want[i] {
				t.Fatalf("limit %d: record %d: got line %d, want line %d", limit, i, e.rec.Line, want[i].Line)
			}
		}
		if err := m.next(new(hashed)); err != io.EOF {
			t.Errorf("limit %d: after the last record: got %v, want io.EOF", limit, err)
		}
		if err := m.close(); err != nil {
			t.Error(err)
		}
	}
}

// TestRunRoundTrip reads back what appendRun writes, every field of
// every record (testkit sets each optional field on some).
func TestRunRoundTrip(t *testing.T) {
	recs := testkit.Records(9, 2000)
	all := recs[0]
	all.Has = auditfmt.HasSchema | auditfmt.HasDeviceSeq | auditfmt.HasReasonCode | auditfmt.HasCeiling |
		auditfmt.HasSessionPresent | auditfmt.HasOutboxDepth | auditfmt.HasOutboxFlushed |
		auditfmt.HasInboundRedelivered | auditfmt.HasInboundDuplicates
	all.OutboxDepth, all.OutboxFlushed = 1<<53, 17
	all.InboundRedelivered, all.InboundDuplicates = 1<<53, 3
	recs = append(recs, all)
	prev := ""
	for i := range recs {
		e := hashed{rec: recs[i]}
		b := appendRun(nil, &e)
		var got hashed
		if err := decodeRun(b[4:], &got, prev); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if got != e {
			t.Fatalf("record %d:\n got %+v\nwant %+v", i, got, e)
		}
		prev = got.rec.ClientID
	}
}

// TestSortPaths sorts chunks down each of sort's three paths, already in
// order, grouped by client id (few devices, some with times out of order
// or tied) and by comparison (a device a record or two), against
// compareRows; and sortGrouped gives up, leaving the keys as they were,
// on a chunk of more ids than it may hold.
func TestSortPaths(t *testing.T) {
	recs := testkit.Records(3, 4000)
	for i := range recs {
		recs[i].Source, recs[i].Line = uint32(i/2000), int64(i+1)
	}
	few := slices.Clone(recs)
	for i := range few {
		few[i].ClientID = "dev-" + string(rune('a'+i%5))
		if i%7 == 3 {
			few[i].RecordedAt = few[max(i-5, 0)].RecordedAt // out of order, or tied
		}
	}
	many := slices.Clone(recs)
	for i := range many {
		many[i].ClientID = fmt.Sprintf("dev-%06d", (i*7919)%3000)
	}
	sorted := slices.Clone(recs)
	slices.SortFunc(sorted, func(a, b auditfmt.Record) int { return compareRows(&a, &b) })
	for name, in := range map[string][]auditfmt.Record{"few": few, "many": many, "sorted": sorted} {
		var b encoded
		for i := range in {
			b.add(&hashed{rec: in[i]})
		}
		if name == "many" {
			before := slices.Clone(b.keys)
			if b.sortGrouped(len(b.keys)/8, nil) || !slices.Equal(before, b.keys) {
				t.Errorf("many: sortGrouped took 3,000 ids in 4,000 records, or moved the keys")
			}
		}
		b.sort()
		want := slices.Clone(in)
		slices.SortFunc(want, func(a, b auditfmt.Record) int { return compareRows(&a, &b) })
		for i, k := range b.keys {
			var e hashed
			if err := decodeRun(b.record(int(k.i)), &e, ""); err != nil {
				t.Fatal(err)
			}
			if e.rec != want[i] {
				t.Fatalf("%s: record %d: got line %d, want line %d", name, i, e.rec.Line, want[i].Line)
			}
		}
	}
}

// FuzzRunRoundTrip: any integers, negative ones and those of several
// bytes included, read back as appendRun wrote them, and decodeRun of
// arbitrary bytes returns an error rather than panicking.
func FuzzRunRoundTrip(f *testing.F) {
	f.Add(int64(3), int16(-60), int64(-1), int64(1), int64(1764512250000000000), []byte{0, 1, 0x80})
	f.Add(int64(-64), int16(63), int64(64), int64(-65), int64(-1), []byte{})
	base := testkit.Records(3, 1)[0]
	f.Fuzz(func(t *testing.T, attempt int64, off int16, seq, line, at int64, junk []byte) {
		e := hashed{rec: base}
		e.rec.Attempt, e.rec.OffsetMin, e.rec.DeviceSeq, e.rec.Line, e.rec.RecordedAt = attempt, off, seq, line, at
		e.rec.Has |= auditfmt.HasDeviceSeq // an optional number is kept when it is there
		b := appendRun(nil, &e)
		var got hashed
		if err := decodeRun(b[4:], &got, ""); err != nil || got != e {
			t.Fatalf("%+v read back as %+v, %v", e.rec, got.rec, err)
		}
		decodeRun(junk, &got, "")
	})
}
