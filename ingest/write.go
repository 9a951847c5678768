package ingest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/stormaudit/stormaudit/dataset"

	"golang.org/x/mod/sumdb/note"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/hashchain"
)

const (
	writeBatch   = 8192
	writeBatches = 4 // batches in flight between the stages of the write
)

// rowBatch is a run of rows on their way to a Parquet file.
type rowBatch struct {
	recs []auditfmt.Record
	pos  []hashchain.Pos
}

// write merges the sorted records, drops and logs duplicates, and writes
// the Parquet files and the manifest. It is a pipeline of three
// goroutines passing batches of rows: dedup (merge, de-duplicate, link),
// grow (leaf hashes and the tree) and writeFiles (Parquet).
func (ing *ingest) write() (*dataset.Manifest, error) {
	m, err := ing.sort.finish()
	if err != nil {
		return nil, err
	}
	dups, err := newDupLog(filepath.Join(ing.dir, dataset.DuplicatesName))
	if err != nil {
		m.close()
		return nil, err
	}
	linked := make(chan *rowBatch, writeBatches)
	chained := make(chan *rowBatch, writeBatches)
	free := make(chan *rowBatch, writeBatches)
	for range writeBatches {
		free <- &rowBatch{make([]auditfmt.Record, 0, writeBatch), make([]hashchain.Pos, 0, writeBatch)}
	}
	ch := hashchain.NewChains3(ing.opts.Log, true)
	tree := &treeBuilder{}
	mergeErr := make(chan error, 1)
	go func() { mergeErr <- ing.dedup(m, dups, ch, linked, free) }()
	go tree.grow(linked, chained)
	files, werr := ing.writeFiles(chained, free)
	err = <-mergeErr
	if err == nil {
		err = werr
	}
	if cerr := m.close(); err == nil {
		err = cerr
	}
	if cerr := dups.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	cp, signers, err := writeCheckpoint(ing.dir, tree.checkpoint(ing.opts.Log), ing.opts.Signer)
	if err != nil {
		return nil, err
	}
	return ing.finishManifest(files, cp, signers)
}

// dedup streams the merge into batches, keeping the first of each run of
// identical records, and links the records it keeps into their chains.
func (ing *ingest) dedup(m *merger, dups *dupLog, ch *hashchain.Chains, out chan<- *rowBatch, free <-chan *rowBatch) error {
	defer close(out)
	batch := <-free
	var prev, e hashed
	have := false
	var b []byte // the record's canonical bytes B
	for {
		err := m.next(&e)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		rec := &e.rec
		if have && auditfmt.SameRecord(&prev.rec, rec) {
			ing.inputs[rec.Source].Duplicates++
			if err := dups.add(ing.names, rec, &prev.rec); err != nil {
				return err
			}
			continue
		}
		prev, have = e, true
		ing.inputs[rec.Source].Accepted++
		batch.recs = append(batch.recs, *rec)
		batch.pos = append(batch.pos, ch.Append3(rec.ClientID, func(seq int64) []byte {
			b = hashchain.AppendRecordBytes3(b[:0], rec, seq, ing.names[rec.Source])
			return b
		}))
		if len(batch.recs) == writeBatch {
			out <- batch
			batch = <-free
			batch.recs, batch.pos = batch.recs[:0], batch.pos[:0]
		}
	}
	if len(batch.recs) > 0 {
		out <- batch
	}
	return nil
}

// writeFiles writes batches to part files, starting a new file at the
// first change of client_id after FileRows rows, and, with buckets, at
// each change of bucket.
func (ing *ingest) writeFiles(in <-chan *rowBatch, free chan<- *rowBatch) (files []dataset.File, err error) {
	var fw *dataset.FileWriter
	var name, lastClient string
	bucket := -1
	var written int64
	drain := func() {
		for b := range in {
			free <- b
		}
	}
	defer drain()
	for full := range in {
		batch, pos := full.recs, full.pos
		for len(batch) > 0 {
			b := ing.bucket(batch[0].ClientID)
			if fw != nil && (b != bucket || fw.Rows() >= ing.opts.FileRows && batch[0].ClientID != lastClient) {
				if files, err = ing.closeFile(fw, name, files); err != nil {
					return nil, err
				}
				fw = nil
			}
			if fw == nil {
				if name, err = ing.partName(b, len(files)); err != nil {
					return nil, err
				}
				if fw, err = dataset.CreateFile(filepath.Join(ing.dir, filepath.FromSlash(name)), ing.names); err != nil {
					return nil, err
				}
				bucket = b
			}
			n := ing.splitAt(batch, fw.Rows(), lastClient, bucket)
			if err := fw.WriteChained(batch[:n], pos[:n]); err != nil {
				fw.Close()
				return nil, err
			}
			lastClient = batch[n-1].ClientID
			written += int64(n)
			batch, pos = batch[n:], pos[n:]
		}
		free <- full
		ing.records = written
		ing.progress("write", false)
	}
	if fw != nil {
		if files, err = ing.closeFile(fw, name, files); err != nil {
			return nil, err
		}
	}
	ing.progress("write", true)
	return files, nil
}

// bucket returns the bucket of a client id (0 without buckets).
func (ing *ingest) bucket(id string) int { return dataset.Bucket(id, ing.opts.Buckets) }

// partName returns the name of the k-th part file, in bucket b: numbered
// across the dataset, so no two files share a base name.
func (ing *ingest) partName(b, k int) (string, error) {
	name := fmt.Sprintf("part-%05d.parquet", k)
	if ing.opts.Buckets <= 1 {
		return name, nil
	}
	dir := dataset.BucketDir(b, ing.opts.Buckets)
	if err := os.MkdirAll(filepath.Join(ing.dir, dir), 0o755); err != nil {
		return "", err
	}
	return dir + "/" + name, nil
}

// splitAt returns how many records of batch still belong in the current
// file: all of them, or those up to the first change of client_id once
// the file has FileRows rows, or to the first of another bucket.
func (ing *ingest) splitAt(batch []auditfmt.Record, rows int64, last string, bucket int) int {
	for i := range batch {
		if batch[i].ClientID != last && i > 0 && (rows+int64(i) >= ing.opts.FileRows || ing.bucket(batch[i].ClientID) != bucket) {
			return i
		}
		last = batch[i].ClientID
	}
	return len(batch)
}

func (ing *ingest) closeFile(fw *dataset.FileWriter, name string, files []dataset.File) ([]dataset.File, error) {
	if err := fw.Close(); err != nil {
		return nil, err
	}
	return append(files, dataset.File{Name: name, Rows: fw.Rows(), RowGroups: fw.RowGroups(), SHA256: fw.SHA256()}), nil
}

func (ing *ingest) finishManifest(files []dataset.File, cp hashchain.Checkpoint, signers []string) (*dataset.Manifest, error) {
	man := &dataset.Manifest{
		Format:        "stormaudit-dataset",
		SchemaVersion: auditfmt.SchemaVersion,
		ChainVersion:  hashchain.Version3,
		CreatedBy:     ing.opts.CreatedBy,
		DatasetID:     ing.id,
		Log:           ing.opts.Log,
		Checkpoint:    string(cp.Format()),
		Signers:       signers,
		SortedBy:      []string{"client_id", "recorded_at"},
		Files:         files,
		Buckets:       bucketsOf(ing.opts.Buckets),
		Inputs:        ing.inputs,
	}
	if man.Files == nil {
		man.Files = []dataset.File{}
	}
	for _, f := range files {
		man.Rows += f.Rows
	}
	for _, in := range ing.inputs {
		if !in.Balanced() {
			return nil, fmt.Errorf("internal error: %s: %d lines read but %d accepted, %d rejected, %d duplicates",
				in.Name, in.Lines, in.Accepted, in.Rejected, in.Duplicates)
		}
		man.Totals.Add(in.Counts)
	}
	if man.Totals.Accepted != man.Rows {
		return nil, fmt.Errorf("internal error: %d records accepted but %d rows written", man.Totals.Accepted, man.Rows)
	}
	var err error
	if man.BrokerLogs, err = ing.storeBrokerLogs(); err != nil {
		return nil, err
	}
	if man.Rejects, err = dataset.DigestFile(filepath.Join(ing.dir, dataset.RejectsName)); err != nil {
		return nil, err
	}
	if man.Duplicates, err = dataset.DigestFile(filepath.Join(ing.dir, dataset.DuplicatesName)); err != nil {
		return nil, err
	}
	return man, writeManifest(ing.dir, man, ing.opts.Signer)
}

// writeManifest writes the manifest atomically and, with a signer, its
// signature.
func writeManifest(dir string, m *dataset.Manifest, signer note.Signer) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if signer != nil {
		sig, err := note.Sign(&note.Note{Text: string(b)}, signer)
		if err != nil {
			return err
		}
		if err := writeFileAtomic(dir, dataset.ManifestSigName, sig); err != nil {
			return err
		}
	}
	return writeFileAtomic(dir, dataset.ManifestName, b)
}

// writeCheckpoint signs cp (when there is a signer) and writes it to the
// checkpoint file. The Parquet files it covers are already synced.
func writeCheckpoint(dir string, cp hashchain.Checkpoint, signer note.Signer) (hashchain.Checkpoint, []string, error) {
	text := cp.Format()
	var signers []string
	if signer != nil {
		var err error
		if text, err = hashchain.SignCheckpoint(cp, signer); err != nil {
			return cp, nil, err
		}
		signers = []string{signer.Name()}
	}
	return cp, signers, writeFileAtomic(dir, dataset.CheckpointName, text)
}

// writeFileAtomic writes dir/name through a temporary file: write, fsync,
// rename, fsync the directory, so that a crash leaves the old file or the
// new one, never a part.
func writeFileAtomic(dir, name string, data []byte) error {
	tmp := filepath.Join(dir, name+".tmp")
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// dupLog writes one line per duplicate: where it was read and where the
// copy that was kept was read.
type dupLog struct {
	f *os.File
	w *bufio.Writer
	b []byte
}

func newDupLog(path string) (*dupLog, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &dupLog{f: f, w: bufio.NewWriter(f)}, nil
}

func (d *dupLog) add(names []string, dup, kept *auditfmt.Record) error {
	d.b = append(d.b[:0], `{"source":`...)
	d.b = auditfmt.AppendJSONString(d.b, names[dup.Source])
	d.b = fmt.Appendf(d.b, `,"line":%d,"client_id":`, dup.Line)
	d.b = auditfmt.AppendJSONString(d.b, dup.ClientID)
	d.b = append(d.b, `,"duplicate_of":{"source":`...)
	d.b = auditfmt.AppendJSONString(d.b, names[kept.Source])
	d.b = fmt.Appendf(d.b, `,"line":%d}}`+"\n", kept.Line)
	_, err := d.w.Write(d.b)
	return err
}

func (d *dupLog) close() error {
	err := d.w.Flush()
	if cerr := d.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// bucketsOf is the manifest's Buckets: 0 for a dataset not partitioned.
func bucketsOf(n int) int {
	if n <= 1 {
		return 0
	}
	return n
}
