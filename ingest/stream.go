package ingest

import (
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/dataset"
	"github.com/stormaudit/stormaudit/hashchain"
)

// Input that arrives in dataset order (each device's records together, in
// time order, the devices in client id order, as when the files of the
// devices are concatenated in name order) needs no sort. An ingest starts
// by streaming: records go from the decoders, in input order, straight to
// de-duplication, their links and the Parquet writer, with no run files,
// as one partition written while the input is read.
//
// The first record that sorts before the one kept last ends the stream.
// What was streamed is then Parquet files and duplicates already found:
// the files become one more sorted source of the merge (prefixCursor),
// the duplicates a run, and the links, leaves and counts of the stream are
// dropped, so that the merge finds the same duplicates, links the same
// chains and writes the same rows as if the whole input had been sorted.
// What remains of the input is sorted as before. Interleaved input ends
// the stream at its second device; input sorted but for a late record
// pays for its prefix written once and read back once.

// stream is the ingest of input that has so far arrived in order.
type stream struct {
	ing     *ingest
	p       *partition
	linker  linker
	dups    *dupLog
	dropped *encoded  // duplicates dropped, in run encoding, for the merge if the stream ends
	runs    []runFile // dropped spilled
	marks   []splitKey
	prev    *auditfmt.Record // the record kept last
	holds   *lineBatch       // the batch prev is in
	kept    int64
	out     chan *rowBatch
	written chan error
}

// droppedRun is how many dropped duplicates a stream holds in memory
// before it spills them to a run.
const droppedRun = 1 << 16

// streams reports whether an ingest with these options may stream: not
// with buckets, whose order is by bucket first, nor in Scan.
func (ing *ingest) streams() bool { return !ing.scan && ing.opts.Buckets <= 1 && !ing.opts.noStream }

// startStream starts the stream and its Parquet writer.
func (ing *ingest) startStream() error {
	p := &partition{stream: true, counts: make([]dataset.Counts, len(ing.allNames))}
	p.dups = filepath.Join(ing.dir, "duplicates-"+p.name()+".tmp")
	dups, err := newDupLog(p.dups)
	if err != nil {
		return err
	}
	s := &stream{ing: ing, p: p, linker: linker{chains: hashchain.NewChains3(ing.opts.Log, true), names: ing.allNames}, dups: dups,
		dropped: newEncoded(0, 0), out: make(chan *rowBatch, writeBatches), written: make(chan error, 1)}
	go func() {
		s.written <- ing.writeFiles(p, s.out, func(b *rowBatch) { b.owner.release() })
	}()
	ing.inOrder = s
	ing.listing.Store(true)
	return nil
}

// add takes the records of b, which the caller holds, in order, up to the
// first that is out of order: it returns those from it on, which the
// stream did not take (nil if it took them all).
func (s *stream) add(b *lineBatch) (rest []auditfmt.Record, err error) {
	kept := b.list[:0] // the records kept move down over those dropped
	b.rows = rowBatch{pos: b.rows.pos[:0], owner: b}
	for i := range b.list {
		rec := &b.list[i]
		if s.prev != nil {
			c := auditfmt.Compare(s.prev, rec)
			if c > 0 {
				rest = b.list[i:]
				break
			}
			if c == 0 {
				if err := s.drop(rec); err != nil {
					return nil, err
				}
				continue
			}
		}
		s.p.counts[rec.Source].Accepted++
		b.rows.pos = append(b.rows.pos, s.linker.link(rec))
		if s.kept%markEvery == 0 {
			s.marks = append(s.marks, splitKey{id: strings.Clone(rec.ClientID)})
		}
		s.kept++
		kept = append(kept, *rec)
		s.prev = &kept[len(kept)-1]
	}
	if len(kept) == 0 {
		return rest, nil
	}
	if s.holds != b {
		if s.holds != nil {
			s.holds.release()
		}
		b.hold()
		s.holds = b
	}
	b.rows.recs = kept
	b.hold()
	s.out <- &b.rows
	return rest, nil
}

// drop logs a duplicate of s.prev and keeps a copy for the merge.
func (s *stream) drop(rec *auditfmt.Record) error {
	s.p.counts[rec.Source].Duplicates++
	if err := s.dups.add(s.ing.allNames, rec, s.prev); err != nil {
		return err
	}
	s.dropped.add(&hashed{rec: *rec})
	if s.dropped.len() < droppedRun && len(s.dropped.buf) < chunkBytes/4 {
		return nil
	}
	run, err := writeRun(s.ing.dir, s.dropped) // in order already
	if err != nil {
		return err
	}
	s.runs = append(s.runs, run)
	s.dropped.reset()
	return nil
}

// finish waits for the writer to write what was streamed.
func (s *stream) finish() error {
	close(s.out)
	err := <-s.written
	if s.holds != nil {
		s.holds.release()
		s.holds = nil
	}
	if cerr := s.dups.close(); err == nil {
		err = cerr
	}
	s.p.leaves.End()
	return err
}

// endStream ends the stream at a record out of order: what it wrote becomes a
// sorted source of the merge and what it dropped a run, and the records
// that follow are sorted.
func (ing *ingest) endStream() error {
	s := ing.inOrder
	ing.inOrder = nil
	ing.listing.Store(false)
	err := s.finish()
	os.Remove(s.p.dups)
	if err == nil && s.dropped.len() > 0 {
		var run runFile
		if run, err = writeRun(ing.dir, s.dropped); err == nil {
			s.runs = append(s.runs, run)
		}
	}
	for _, f := range s.p.files {
		ing.sort.prefix = append(ing.sort.prefix, f.path)
	}
	ing.sort.prefixMarks = s.marks
	ing.sort.runs = append(ing.sort.runs, s.runs...)
	if ing.opts.streamEnded != nil {
		ing.opts.streamEnded(s.kept)
	}
	return err
}

// abortStream stops a stream after an error.
func (ing *ingest) abortStream() {
	if s := ing.inOrder; s != nil {
		ing.inOrder = nil
		s.finish()
		for _, r := range s.runs {
			os.Remove(r.path)
		}
	}
}

// encodeList encodes records decoded into a list for the sort.
func encodeList(list []auditfmt.Record, dst *encoded) {
	for i := range list {
		dst.add(&hashed{rec: list[i]})
	}
}

// prefixCursor reads back, in order, the rows a stream wrote before it
// ended.
type prefixCursor struct {
	paths []string
	fr    *dataset.FileReader
	recs  []auditfmt.Record
	i, n  int
}

func (c *prefixCursor) next(e *hashed) error {
	for c.i == c.n {
		if c.fr == nil {
			if len(c.paths) == 0 {
				return io.EOF
			}
			fr, err := dataset.OpenFile(c.paths[0])
			if err != nil {
				return err
			}
			c.fr, c.paths = fr, c.paths[1:]
			if c.recs == nil {
				c.recs = make([]auditfmt.Record, 1024)
			}
		}
		n, err := c.fr.Read(c.recs)
		c.i, c.n = 0, n
		if err == io.EOF {
			err = c.fr.Close()
			c.fr = nil
		}
		if err != nil {
			return err
		}
	}
	e.rec = c.recs[c.i]
	c.i++
	return nil
}

// Close closes the file being read.
func (c *prefixCursor) Close() error {
	if c.fr == nil {
		return nil
	}
	err := c.fr.Close()
	c.fr = nil
	return err
}
