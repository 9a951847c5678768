package ingest

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/dataset"
)

// Scan reads the sources as Run does: the same records are accepted,
// rejected (into dir's rejects.ndjson) and found duplicate (into
// duplicates.ndjson), in the same dataset order. But it builds no
// dataset: no record hashes, chains, tree, checkpoint, Parquet files or
// stage. It calls fn with the accepted records, in dataset order, a batch
// at a time (the slice is valid only during the call), and returns a
// manifest that accounts for every line, with no files and no log. dir
// must be new or empty; it holds the sort's runs while Scan runs. It is
// the path of a check of raw logs, which needs the records, not a signed
// dataset of them.
func Scan(ctx context.Context, dir string, sources []Source, opts Options, fn func(recs []auditfmt.Record) error) (*dataset.Manifest, error) {
	opts.setDefaults()
	if err := checkOutputDir(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ing := &ingest{ctx: ctx, dir: dir, opts: opts, sort: newSorter(dir, opts.ChunkRecords), scan: true}
	err := ing.read(sources)
	if err == nil {
		err = ing.stream(fn)
	}
	if err != nil {
		ing.sort.discard()
		return nil, err
	}
	man := &dataset.Manifest{Format: "stormaudit-dataset", SchemaVersion: auditfmt.SchemaVersion, CreatedBy: opts.CreatedBy,
		SortedBy: []string{"client_id", "recorded_at"}, Files: []dataset.File{}, Inputs: ing.inputs}
	for _, in := range ing.inputs {
		if !in.Balanced() {
			return nil, fmt.Errorf("internal error: %s: %d lines read but %d accepted, %d rejected, %d duplicates",
				in.Name, in.Lines, in.Accepted, in.Rejected, in.Duplicates)
		}
		man.Totals.Add(in.Counts)
	}
	man.Rows = man.Totals.Accepted
	return man, nil
}

// stream merges the sorted records, drops and logs duplicates, and hands
// the others to fn in batches.
func (ing *ingest) stream(fn func([]auditfmt.Record) error) error {
	m, err := ing.sort.finish()
	if err != nil {
		return err
	}
	defer m.close()
	dups, err := newDupLog(filepath.Join(ing.dir, dataset.DuplicatesName))
	if err != nil {
		return err
	}
	batch := make([]auditfmt.Record, 0, writeBatch)
	var prev, e hashed
	have := false
	for n := 0; ; n++ {
		if n%writeBatch == 0 {
			if err = ing.ctx.Err(); err != nil {
				break // cancelled: no more records for fn
			}
		}
		if err = m.next(&e); err != nil {
			break
		}
		rec := &e.rec
		if have && auditfmt.SameRecord(&prev.rec, rec) {
			ing.inputs[rec.Source].Duplicates++
			if err = dups.add(ing.names, rec, &prev.rec); err != nil {
				break
			}
			continue
		}
		prev, have = e, true
		ing.inputs[rec.Source].Accepted++
		if batch = append(batch, *rec); len(batch) == writeBatch {
			if err = fn(batch); err != nil {
				break
			}
			batch = batch[:0]
		}
	}
	if err == io.EOF {
		err = nil
		if len(batch) > 0 {
			err = fn(batch)
		}
	}
	if cerr := dups.close(); err == nil {
		err = cerr
	}
	return err
}
