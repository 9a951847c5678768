package verify

import (
	"io"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/stormaudit/stormaudit/dataset"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/hashchain"
)

const verifyBatchRows = 4096

// Link states of a row, as a hashing worker leaves them.
const (
	linkUnchecked = iota // the previous link of the chain was not at hand
	linkOK
	linkBad
)

// verifyBatch is a run of consecutive rows of one file with, once hashed,
// each row's record hash, tree leaf, canonical length and link state.
// Hashing needs no order: a row's link is checked against the stored link
// of the row before it when that row is the same chain's previous record,
// which it is everywhere but at the first row of a chain; the verifier
// then checks that the stored links form an unbroken chain.
type verifyBatch struct {
	file    string
	row0    int64    // index in the file of the first row
	sources []string // the file's source names when the batch was read
	recs    []auditfmt.Record
	pos     []hashchain.Pos
	prev    hashchain.Pos // the row before the batch, if hasPrev
	hasPrev bool

	h, leaf []tlog.Hash
	n       []int
	link    []uint8
	err     []string // what is wrong with a row on its own, or ""
	done    chan struct{}
}

// readBatches reads the files' rows into batches, hands each to a hashing
// worker, and sends them to out in storage order.
//
// Batches come from free when it has one (the consumer puts back those it
// is done with) and are made otherwise.
func readBatches(dir string, files []dataset.File, log string, version int, out chan<- *verifyBatch, free chan *verifyBatch, stop <-chan struct{}) error {
	defer close(out)
	work := make(chan *verifyBatch, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var hs hashchain.Hasher
			var buf []byte
			for b := range work {
				if version == hashchain.Version3 {
					buf = b.hash3(buf)
				} else {
					b.hash(&hs, log)
				}
				close(b.done)
			}
		}()
	}
	defer func() { close(work); wg.Wait() }()
	var prev hashchain.Pos
	hasPrev := false
	for _, f := range files {
		fr, err := dataset.OpenFile(filepath.Join(dir, f.Name))
		if err != nil {
			return err
		}
		var row int64
		for {
			b := newBatch(free)
			b.file, b.row0, b.prev, b.hasPrev = f.Name, row, prev, hasPrev
			n, err := fr.ReadChain(b.recs, b.pos)
			if n > 0 {
				b.recs, b.pos, b.sources = b.recs[:n], b.pos[:n], fr.Sources()
				prev, hasPrev = b.pos[n-1], true
				row += int64(n)
				select {
				case work <- b:
				case <-stop:
					fr.Close()
					return nil
				}
				out <- b
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				fr.Close()
				return err
			}
		}
		fr.Close()
	}
	return nil
}

// newBatch returns a batch of verifyBatchRows rows to read into: one from
// free, or a new one.
func newBatch(free chan *verifyBatch) *verifyBatch {
	var b *verifyBatch
	select {
	case b = <-free:
		b.recs, b.pos = b.recs[:verifyBatchRows], b.pos[:verifyBatchRows]
	default:
		b = &verifyBatch{recs: make([]auditfmt.Record, verifyBatchRows), pos: make([]hashchain.Pos, verifyBatchRows)}
	}
	b.done = make(chan struct{})
	return b
}

// prepare sizes the batch's per-row results for its rows, cleared.
func (b *verifyBatch) prepare() {
	k := len(b.recs)
	b.h, b.leaf, b.n = resize(b.h, k), resize(b.leaf, k), resize(b.n, k)
	b.link, b.err = resize(b.link, k), resize(b.err, k)
	clear(b.link)
	clear(b.err)
}

// prevLink returns the link row i follows, when it is at hand: its
// chain's genesis at seq 0, else the stored link of the row before when
// that row is the chain's previous record.
func (b *verifyBatch) prevLink(i int, genesis func(origin string) tlog.Hash) (tlog.Hash, bool) {
	pos := &b.pos[i]
	if pos.Seq == 0 {
		return genesis(pos.Origin), true
	}
	var prev *hashchain.Pos
	if i > 0 {
		prev = &b.pos[i-1]
	} else if b.hasPrev {
		prev = &b.prev
	}
	if prev != nil && prev.Origin == pos.Origin && prev.Seq == pos.Seq-1 {
		return prev.Link, true
	}
	return tlog.Hash{}, false
}

// hash computes, for version 2, what can be computed of each row without
// the rows of other batches.
func (b *verifyBatch) hash(hs *hashchain.Hasher, log string) {
	b.prepare()
	for i := range b.recs {
		rec, pos := &b.recs[i], &b.pos[i]
		source := b.sources[rec.Source]
		h, n, err := hs.Record(rec, source)
		if err != nil {
			b.err[i] = "record: " + err.Error()
			continue
		}
		b.h[i], b.n[i] = h, n
		b.leaf[i] = hashchain.Leaf(*pos)
		if prev, ok := b.prevLink(i, hashchain.Genesis); ok {
			b.link[i] = linkState(hashchain.NextLink(prev, h) == pos.Link)
		}
	}
}

// hash3 computes, for version 3, each row's canonical length and link
// state: its link against the link before it (prevLink). buf is B's
// buffer, returned for reuse.
func (b *verifyBatch) hash3(buf []byte) []byte {
	b.prepare()
	for i := range b.recs {
		rec, pos := &b.recs[i], &b.pos[i]
		if int(rec.Source) >= len(b.sources) {
			b.err[i] = "source: no such input"
			continue
		}
		buf = hashchain.AppendRecordBytes3(buf[:0], rec, pos.Seq, b.sources[rec.Source])
		b.n[i], b.leaf[i] = len(buf), pos.Link
		if prev, ok := b.prevLink(i, hashchain.Genesis3); ok {
			b.link[i] = linkState(hashchain.Link3(prev, buf) == pos.Link)
		}
	}
	return buf
}

func linkState(ok bool) uint8 {
	if ok {
		return linkOK
	}
	return linkBad
}

// resize returns s with length n, reusing its array when it can.
func resize[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}
