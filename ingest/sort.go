package ingest

import (
	"cmp"
	"container/heap"
	"encoding/binary"
	"io"
	"os"
	"slices"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/dataset"
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
// Chunks hold the records in run encoding, which is about half the size
// of the records themselves and holds no pointers for the GC to scan.
type sorter struct {
	buckets  int // Options.Buckets: records sort by bucket first
	dir      string
	limit    int // records in a chunk
	maxBytes int // bytes in a chunk: large records fill it before limit does
	chunk    *encoded
	spare    *encoded
	runs     []runFile
	pending  chan spillResult // the spill in flight, if any

	prefix      []string   // the files of a stream that ended (stream.go), in order
	prefixMarks []splitKey // the client id of every markEvery-th row of prefix
}

type spillResult struct {
	run   runFile
	chunk *encoded
	err   error
}

// chunkBytes bounds the encoded records of one chunk.
const chunkBytes = 64 << 20

func newSorter(dir string, limit int) *sorter {
	return &sorter{dir: dir, limit: limit, maxBytes: chunkBytes, chunk: newEncoded(limit, 0)}
}

// add copies the records of b into the chunk, spilling it whenever it is
// full: limit records, or maxBytes bytes.
func (s *sorter) add(b *encoded) error {
	for i := 0; i < b.len(); {
		room := s.maxBytes - len(s.chunk.buf)
		n := 1
		for n < b.len()-i && s.chunk.len()+n < s.limit && b.ends[i+n]-b.start(i) <= room {
			n++
		}
		s.reserve(n, b.ends[i+n-1]-b.start(i))
		s.chunk.appendFrom(b, i, i+n)
		if s.buckets > 0 {
			s.chunk.setBuckets(s.chunk.len()-n, s.buckets)
		}
		i += n
		if s.chunk.len() == s.limit || len(s.chunk.buf) >= s.maxBytes {
			if err := s.spill(); err != nil {
				return err
			}
		}
	}
	return nil
}

// reserve makes room in the chunk for n more records of size bytes in
// all. When it must grow, it grows to what a full chunk of records of the
// average size so far needs, rather than by the quarter that append adds
// to big slices, each time copying the chunk.
func (s *sorter) reserve(n, size int) {
	c := s.chunk
	if len(c.buf)+size <= cap(c.buf) {
		return
	}
	perRecord := (len(c.buf) + size) / (c.len() + n)
	want := max(len(c.buf)+size, min(perRecord*s.limit, s.maxBytes)*9/8)
	c.buf = slices.Grow(c.buf, want-len(c.buf))
}

// spill hands the full chunk to a goroutine and continues with a spare one.
func (s *sorter) spill() error {
	if err := s.wait(); err != nil {
		return err
	}
	if s.spare == nil {
		s.spare = newEncoded(s.limit, cap(s.chunk.buf))
	}
	full := s.chunk
	s.chunk, s.spare = s.spare, nil
	s.chunk.reset()
	s.pending = make(chan spillResult, 1)
	go func(done chan<- spillResult) {
		full.sort()
		run, err := writeRun(s.dir, full)
		done <- spillResult{run: run, chunk: full, err: err}
	}(s.pending)
	return nil
}

func (s *sorter) wait() error {
	if s.pending == nil {
		return nil
	}
	r := <-s.pending
	s.pending = nil
	s.spare = r.chunk
	if r.err != nil {
		return r.err
	}
	s.runs = append(s.runs, r.run)
	return nil
}

// finish sorts what is left in memory and returns a merge over it and
// every run, in dataset order. Closing the merge removes the runs.
func (s *sorter) finish() (*merger, error) {
	if err := s.finishSort(); err != nil {
		return nil, err
	}
	m, err := s.merge(nil, 1)
	if err != nil {
		s.discard()
		return nil, err
	}
	m.after = s.discard
	return m, nil
}

// finishSort waits for the spill in flight and sorts what is left in
// memory: after it, merge may be called, once or in parallel. When
// there are runs already, the chunk in memory becomes one too, so that
// the merges' buffers and the writers do not come on top of a chunk.
func (s *sorter) finishSort() error {
	if len(s.runs) > 0 && s.chunk.len() > 0 {
		if err := s.spill(); err != nil {
			s.discard()
			return err
		}
		s.chunk = newEncoded(0, 0)
	}
	err := s.wait()
	s.spare = nil
	if err != nil {
		s.discard()
		return err
	}
	s.chunk.sort()
	return nil
}

// merge returns a merge, in dataset order, of the records from lo on
// (from the first, if lo is nil) of the chunk in memory and every run,
// one of merges merges at once (their read buffers share 16 MiB). Its
// caller stops where it wants; closing it leaves the runs in place.
func (s *sorter) merge(lo *splitKey, merges int) (*merger, error) {
	m := &merger{h: mergeHeap{buckets: s.buckets}, lo: lo}
	mem := &memCursor{c: s.chunk}
	if lo != nil {
		mem.i = s.chunk.lowerBound(*lo)
	}
	if err := m.push(mem); err != nil {
		return nil, err
	}
	if len(s.prefix) > 0 {
		pc := &prefixCursor{paths: s.prefix}
		m.closers = append(m.closers, pc)
		if err := m.push(pc); err != nil {
			m.close()
			return nil, err
		}
	}
	bufSize := readBufSize(len(s.runs) * merges)
	for _, run := range s.runs {
		rr, err := openRun(run, lo, bufSize)
		if err == nil {
			m.runs = append(m.runs, rr)
			err = m.push(&runCursor{rr: rr})
		}
		if err != nil {
			m.close()
			return nil, err
		}
	}
	return m, nil
}

// discard removes the run files and the prefix.
func (s *sorter) discard() {
	s.wait()
	for _, run := range s.runs {
		os.Remove(run.path)
	}
	for _, path := range s.prefix {
		os.Remove(path)
	}
	s.runs, s.prefix = nil, nil
}

// cursor is one sorted source of a merge.
type cursor interface {
	// next loads the next record into e; io.EOF at the end.
	next(e *hashed) error
}

// memCursor reads a sorted chunk.
type memCursor struct {
	c    *encoded
	i    int
	prev string
}

func (c *memCursor) next(e *hashed) error {
	if c.i == c.c.len() {
		return io.EOF
	}
	if err := decodeRun(c.c.record(int(c.c.keys[c.i].i)), e, c.prev); err != nil {
		return err
	}
	c.i++
	c.prev = e.rec.ClientID
	return nil
}

// sortKey is what the sort compares first: the first 16 bytes of the
// client id, big-endian so that integer order is byte order, and the
// time. Comparing 32-byte keys in one array is several times faster than
// decoding the records; only keys that tie fall back to the full
// comparison.
type sortKey struct {
	bucket   uint32 // with Options.Buckets, the client id's bucket; else 0
	id0, id1 uint64
	at       int64
	i, n     int32 // the record's index and the client id's length
}

func keyOf(r *auditfmt.Record, i int) sortKey {
	var b [16]byte
	copy(b[:], r.ClientID)
	return sortKey{id0: binary.BigEndian.Uint64(b[:8]), id1: binary.BigEndian.Uint64(b[8:]), at: r.RecordedAt, i: int32(i), n: int32(min(len(r.ClientID), 1<<30))}
}

// sort puts the keys of b in dataset order, leaving the records where
// they are. Keys already in order (input that arrived sorted) stay; a
// chunk of few devices (at most one id in 8 records) is grouped by client
// id (sortGrouped); any other is sorted by comparison.
func (b *encoded) sort() {
	var x, y hashed // records decoded for keys that tie
	compare := func(k, l sortKey) int {
		if c := cmp.Compare(k.bucket, l.bucket); c != 0 {
			return c
		}
		if c := cmp.Compare(k.id0, l.id0); c != 0 {
			return c
		}
		if c := cmp.Compare(k.id1, l.id1); c != 0 {
			return c
		}
		if k.n > 16 || l.n > 16 || k.at == l.at {
			// Both encodings were written by appendRun: they decode.
			decodeRun(b.record(int(k.i)), &x, "")
			decodeRun(b.record(int(l.i)), &y, "")
			return compareRows(&x.rec, &y.rec)
		}
		if c := cmp.Compare(k.n, l.n); c != 0 {
			return c // one id is the other with NUL bytes appended
		}
		return cmp.Compare(k.at, l.at)
	}
	if slices.IsSortedFunc(b.keys, compare) || b.sortGrouped(len(b.keys)/8, compare) {
		return
	}
	slices.SortFunc(b.keys, compare)
}

// sortGrouped sorts the keys of b, in input order, by grouping them by
// client id (a hash lookup a record and a counting sort) and sorting only
// the devices whose times do not strictly increase in input order: input
// order is (source, line) order, compare's last tie-break. It gives up,
// returning false with the keys as they were, when the chunk holds more
// than most client ids, where the lookups cost more than comparing (on
// 20M lines of 200,000 devices a chunk holds 150,000).
func (b *encoded) sortGrouped(most int, compare func(k, l sortKey) int) bool {
	var g grouping
	if !g.group(b, most) {
		return false
	}
	keys := g.place(b.keys)
	for start := 0; start < len(keys); {
		end := start + int(g.size[g.gid[keys[start].i]])
		dev := keys[start:end]
		for i := 1; i < len(dev); i++ {
			if dev[i].at <= dev[i-1].at {
				slices.SortFunc(dev, compare)
				break
			}
		}
		start = end
	}
	b.keys = keys
	return true
}

// grouping is a chunk's records grouped by client id.
type grouping struct {
	gid    []int32 // by record: its group
	size   []int32 // by group: its records
	rank   []int32 // by group: its place in dataset order
	ids    []string
	bucket []uint32
}

// group finds the group of each record of b, whose keys are in input
// order, and ranks the groups by bucket and client id; false if there
// are more than most groups.
func (g *grouping) group(b *encoded, most int) bool {
	index := make(map[string]int32)
	g.gid = make([]int32, len(b.keys))
	for k := range b.keys {
		rec := b.record(k)
		l, w := binary.Uvarint(rec) // the client id comes first
		id := rec[w : w+int(l)]
		n, ok := index[string(id)]
		if !ok {
			if len(g.ids) == most {
				return false
			}
			n = int32(len(g.ids))
			g.ids = append(g.ids, string(id))
			g.bucket = append(g.bucket, b.keys[k].bucket)
			g.size = append(g.size, 0)
			index[g.ids[n]] = n
		}
		g.gid[k] = n
		g.size[n]++
	}
	order := make([]int32, len(g.ids))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := cmp.Compare(g.bucket[a], g.bucket[b]); c != 0 {
			return c
		}
		return cmp.Compare(g.ids[a], g.ids[b])
	})
	g.rank = make([]int32, len(order))
	for r, n := range order {
		g.rank[n] = int32(r)
	}
	return true
}

// place returns keys (in input order) grouped, the groups in rank order
// and each group's keys in input order.
func (g *grouping) place(keys []sortKey) []sortKey {
	start := make([]int, len(g.rank)+1) // by rank
	for n, r := range g.rank {
		start[r+1] = int(g.size[n])
	}
	for r := 1; r < len(start); r++ {
		start[r] += start[r-1]
	}
	out := make([]sortKey, len(keys))
	for _, k := range keys {
		r := g.rank[g.gid[k.i]]
		out[start[r]] = k
		start[r]++
	}
	return out
}

type runCursor struct{ rr *runReader }

func (c *runCursor) next(e *hashed) error { return c.rr.next(e) }

// merger is a k-way merge of sorted cursors.
type merger struct {
	h       mergeHeap
	runs    []*runReader
	closers []io.Closer
	lo      *splitKey // records below are skipped
	after   func()    // called by close, if set
	bucket  uint32    // the bucket of the record next returned last, with Options.Buckets
}

type mergeItem struct {
	e      hashed
	bucket uint32 // e's bucket, with Options.Buckets
	c      cursor
}

// mergeHeap orders the cursors' next records: by bucket (with buckets),
// then in dataset order.
type mergeHeap struct {
	items   []*mergeItem
	buckets int
}

func (h *mergeHeap) Len() int { return len(h.items) }
func (h *mergeHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	if a.bucket != b.bucket {
		return a.bucket < b.bucket
	}
	return compareRows(&a.e.rec, &b.e.rec) < 0
}
func (h *mergeHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *mergeHeap) Push(x any)    { h.items = append(h.items, x.(*mergeItem)) }
func (h *mergeHeap) Pop() any {
	it := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return it
}

// advance reads it's cursor's next record and its bucket.
func (h *mergeHeap) advance(it *mergeItem) error {
	err := it.c.next(&it.e)
	if err == nil && h.buckets > 0 {
		it.bucket = uint32(dataset.Bucket(it.e.rec.ClientID, h.buckets))
	}
	return err
}

// push adds a cursor to the merge, skipping its records below m.lo.
func (m *merger) push(c cursor) error {
	it := &mergeItem{c: c}
	for {
		switch err := m.h.advance(it); err {
		case nil:
			if m.lo != nil && m.lo.compare(it.bucket, it.e.rec.ClientID) > 0 {
				continue
			}
			heap.Push(&m.h, it)
		case io.EOF:
		default:
			return err
		}
		return nil
	}
}

// next stores the smallest remaining record in e; io.EOF at the end.
func (m *merger) next(e *hashed) error {
	top, err := m.top()
	if err != nil {
		return err
	}
	*e = *top
	return m.pop()
}

// top returns the smallest remaining record, valid until pop, and sets
// m.bucket to its bucket; io.EOF at the end.
func (m *merger) top() (*hashed, error) {
	if m.h.Len() == 0 {
		return nil, io.EOF
	}
	m.bucket = m.h.items[0].bucket
	return &m.h.items[0].e, nil
}

// pop moves past the record top returned.
func (m *merger) pop() error {
	top := m.h.items[0]
	switch err := m.h.advance(top); err {
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
	m.runs = nil
	for _, c := range m.closers {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	m.closers = nil
	if m.after != nil {
		m.after()
		m.after = nil
	}
	return first
}
