package dataset

import (
	"cmp"
	"container/heap"
	"encoding/binary"
	"io"
	"os"
	"slices"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// compareRows is the dataset order: auditfmt.Compare, then input order, so
// that of two copies of a record the first one read is kept.
func compareRows(a, b *auditfmt.Record) int {
	if c := auditfmt.Compare(a, b); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Source, b.Source); c != 0 {
		return c
	}
	return cmp.Compare(a.Line, b.Line)
}

// sorter collects records in chunks of at most limit, sorts each full
// chunk and spills it to a run file in the background while the next one
// fills, so memory holds at most two chunks whatever the input size.
type sorter struct {
	dir     string
	limit   int
	chunk   []auditfmt.Record
	spare   []auditfmt.Record
	runs    []string
	pending chan spillResult // the spill in flight, if any
}

type spillResult struct {
	path  string
	chunk []auditfmt.Record
	err   error
}

func newSorter(dir string, limit int) *sorter {
	return &sorter{dir: dir, limit: limit, chunk: make([]auditfmt.Record, 0, limit)}
}

func (s *sorter) add(recs []auditfmt.Record) error {
	for len(recs) > 0 {
		n := min(len(recs), s.limit-len(s.chunk))
		s.chunk = append(s.chunk, recs[:n]...)
		recs = recs[n:]
		if len(s.chunk) == s.limit {
			if err := s.spill(); err != nil {
				return err
			}
		}
	}
	return nil
}

// spill hands the full chunk to a goroutine and continues with a spare one.
func (s *sorter) spill() error {
	if err := s.wait(); err != nil {
		return err
	}
	full := s.chunk
	s.chunk, s.spare = s.spare[:0], nil
	s.pending = make(chan spillResult, 1)
	go func(done chan<- spillResult) {
		path, err := writeRun(s.dir, full, sortedOrder(full))
		done <- spillResult{path: path, chunk: full, err: err}
	}(s.pending)
	return nil
}

func (s *sorter) wait() error {
	if s.pending == nil {
		return nil
	}
	r := <-s.pending
	s.pending = nil
	clear(r.chunk)
	s.spare = r.chunk[:0]
	if r.err != nil {
		return r.err
	}
	s.runs = append(s.runs, r.path)
	return nil
}

// finish sorts what is left in memory and returns a merge over it and
// every run, in dataset order.
func (s *sorter) finish() (*merger, error) {
	if err := s.wait(); err != nil {
		return nil, err
	}
	m := &merger{}
	mem := &memCursor{recs: s.chunk, order: sortedOrder(s.chunk)}
	if err := m.push(mem); err != nil {
		return nil, err
	}
	for _, path := range s.runs {
		rr, err := openRun(path)
		if err != nil {
			m.close()
			return nil, err
		}
		m.runs = append(m.runs, rr)
		if err := m.push(&runCursor{rr: rr}); err != nil {
			m.close()
			return nil, err
		}
	}
	s.runs = nil
	return m, nil
}

// discard removes run files after a failure.
func (s *sorter) discard() {
	s.wait()
	for _, path := range s.runs {
		os.Remove(path)
	}
}

// cursor is one sorted source of a merge.
type cursor interface {
	// next loads the next record into rec; io.EOF at the end.
	next(rec *auditfmt.Record) error
}

type memCursor struct {
	recs  []auditfmt.Record
	order []int32
	i     int
}

func (c *memCursor) next(rec *auditfmt.Record) error {
	if c.i == len(c.order) {
		return io.EOF
	}
	*rec = c.recs[c.order[c.i]]
	c.i++
	return nil
}

// sortKey is what the sort compares first: the first 16 bytes of the
// client id, big-endian so that integer order is byte order, and the
// time. Comparing 32-byte keys in one array is several times faster than
// following indexes into the records; only keys that tie fall back to the
// full comparison.
type sortKey struct {
	id0, id1 uint64
	at       int64
	i, n     int32 // the record's index and the client id's length
}

func keyOf(r *auditfmt.Record, i int) sortKey {
	var b [16]byte
	copy(b[:], r.ClientID)
	return sortKey{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:]), r.RecordedAt, int32(i), int32(min(len(r.ClientID), 1<<30))}
}

// sortedOrder returns the indexes of recs in dataset order, leaving recs
// where they are.
func sortedOrder(recs []auditfmt.Record) []int32 {
	keys := make([]sortKey, len(recs))
	for i := range recs {
		keys[i] = keyOf(&recs[i], i)
	}
	slices.SortFunc(keys, func(a, b sortKey) int {
		if c := cmp.Compare(a.id0, b.id0); c != 0 {
			return c
		}
		if c := cmp.Compare(a.id1, b.id1); c != 0 {
			return c
		}
		if a.n > 16 || b.n > 16 || a.at == b.at {
			return compareRows(&recs[a.i], &recs[b.i])
		}
		if c := cmp.Compare(a.n, b.n); c != 0 {
			return c // one id is the other with NUL bytes appended
		}
		return cmp.Compare(a.at, b.at)
	})
	order := make([]int32, len(keys))
	for i, k := range keys {
		order[i] = k.i
	}
	return order
}

type runCursor struct{ rr *runReader }

func (c *runCursor) next(rec *auditfmt.Record) error { return c.rr.next(rec) }

// merger is a k-way merge of sorted cursors.
type merger struct {
	h    mergeHeap
	runs []*runReader
}

type mergeItem struct {
	rec auditfmt.Record
	c   cursor
}

type mergeHeap []*mergeItem

func (h mergeHeap) Len() int           { return len(h) }
func (h mergeHeap) Less(i, j int) bool { return compareRows(&h[i].rec, &h[j].rec) < 0 }
func (h mergeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)        { *h = append(*h, x.(*mergeItem)) }
func (h *mergeHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

func (m *merger) push(c cursor) error {
	it := &mergeItem{c: c}
	switch err := c.next(&it.rec); err {
	case nil:
		heap.Push(&m.h, it)
	case io.EOF:
	default:
		return err
	}
	return nil
}

// next stores the smallest remaining record in rec; io.EOF at the end.
func (m *merger) next(rec *auditfmt.Record) error {
	if len(m.h) == 0 {
		return io.EOF
	}
	top := m.h[0]
	*rec = top.rec
	switch err := top.c.next(&top.rec); err {
	case nil:
		heap.Fix(&m.h, 0)
	case io.EOF:
		heap.Pop(&m.h)
	default:
		return err
	}
	return nil
}

func (m *merger) close() error {
	var first error
	for _, rr := range m.runs {
		if err := rr.close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
