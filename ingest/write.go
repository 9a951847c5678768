package ingest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

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
	recs  []auditfmt.Record
	pos   []hashchain.Pos
	owner *lineBatch // the lines the records' strings are, when streaming
}

// write merges the sorted records, drops and logs duplicates, and writes
// the Parquet files and the manifest. The records are split by client id
// into partitions (partition.go) written in parallel, each a pipeline of
// two goroutines passing batches of rows: dedup (merge, de-duplicate,
// link) and writeFiles (the tree's leaves, Parquet).
func (ing *ingest) write() (*dataset.Manifest, error) {
	if s := ing.inOrder; s != nil { // the input came in order: written already
		ing.inOrder = nil
		err := s.finish()
		for _, r := range s.runs {
			os.Remove(r.path)
		}
		if err != nil {
			return nil, err
		}
		return ing.conclude([]*partition{s.p})
	}
	if err := ing.sort.finishSort(); err != nil {
		return nil, err
	}
	defer ing.sort.discard()
	splits := ing.sort.splits(ing.opts.Partitions, ing.records/ing.opts.partitionRows)
	parts := make([]*partition, len(splits)+1)
	for i := range parts {
		parts[i] = &partition{index: i, counts: make([]dataset.Counts, len(ing.inputs))}
		if i > 0 {
			parts[i].lo = &splits[i-1]
		}
		if i < len(splits) {
			parts[i].hi = &splits[i]
		}
	}
	var wg sync.WaitGroup
	for _, p := range parts {
		wg.Go(func() { p.err = ing.writePartition(p, len(parts)) })
	}
	wg.Wait()
	for _, p := range parts {
		if p.err != nil {
			return nil, p.err
		}
	}
	return ing.conclude(parts)
}

// conclude puts the partitions' files in place and writes the
// checkpoint and the manifest.
func (ing *ingest) conclude(parts []*partition) (*dataset.Manifest, error) {
	ing.progress("write", true)
	files, tree, err := ing.assemble(parts)
	if err != nil {
		return nil, err
	}
	cp, signers, err := writeCheckpoint(ing.dir, hashchain.Checkpoint{Origin: ing.opts.Log, Size: tree.Rows(), Root: tree.Root()}, ing.opts.Signer)
	if err != nil {
		return nil, err
	}
	return ing.finishManifest(files, cp, signers)
}

// partition is one range of client ids of the dataset being written.
type partition struct {
	index  int
	lo, hi *splitKey // its records are at or above lo and below hi (nil: no bound)
	counts []dataset.Counts
	files  []partFile
	leaves hashchain.Leaves3
	dups   string // the file of its duplicates
	err    error
	stream bool // written from the input as it streamed (stream.go)
}

// name names p's temporary files.
func (p *partition) name() string {
	if p.stream {
		return "stream"
	}
	return fmt.Sprintf("%03d", p.index)
}

// partFile is a Parquet file a partition wrote, under a name of its own
// until assemble gives it its place in the dataset.
type partFile struct {
	path   string
	bucket int
	file   dataset.File
}

// writePartition merges, links and writes the records of p, one of
// parts partitions written at once.
func (ing *ingest) writePartition(p *partition, parts int) error {
	m, err := ing.sort.merge(p.lo, parts)
	if err != nil {
		return err
	}
	p.dups = filepath.Join(ing.dir, "duplicates-"+p.name()+".tmp")
	dups, err := newDupLog(p.dups)
	if err != nil {
		m.close()
		return err
	}
	linked := make(chan *rowBatch, writeBatches)
	free := make(chan *rowBatch, writeBatches)
	for range writeBatches {
		free <- &rowBatch{recs: make([]auditfmt.Record, 0, writeBatch), pos: make([]hashchain.Pos, 0, writeBatch)}
	}
	ch := hashchain.NewChains3(ing.opts.Log, true)
	mergeErr := make(chan error, 1)
	go func() { mergeErr <- ing.dedup(p, m, dups, ch, linked, free) }()
	werr := ing.writeFiles(p, linked, func(b *rowBatch) { free <- b })
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
	p.leaves.End()
	return err
}

// dedup streams the merge into batches, up to p.hi, keeping the first of
// each run of identical records, and links the records it keeps into
// their chains.
func (ing *ingest) dedup(p *partition, m *merger, dups *dupLog, ch *hashchain.Chains, out chan<- *rowBatch, free <-chan *rowBatch) error {
	defer close(out)
	batch := <-free
	var held auditfmt.Record  // the last kept, once its batch has gone on
	var last *auditfmt.Record // the record kept last
	l := linker{chains: ch, names: ing.names}
	for {
		e, err := m.top()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		rec := &e.rec
		if p.hi != nil && (last == nil || rec.ClientID != last.ClientID) && p.hi.compare(m.bucket, rec.ClientID) <= 0 {
			break // the next partition's
		}
		if last != nil && auditfmt.SameRecord(last, rec) {
			p.counts[rec.Source].Duplicates++
			if err := dups.add(ing.names, rec, last); err != nil {
				return err
			}
		} else {
			p.counts[rec.Source].Accepted++
			batch.recs = append(batch.recs, *rec) // the one copy of a record the merge makes
			last = &batch.recs[len(batch.recs)-1]
			batch.pos = append(batch.pos, l.link(last))
		}
		if err := m.pop(); err != nil {
			return err
		}
		if len(batch.recs) == writeBatch {
			held = *last
			last = &held
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

// writeFiles adds the rows of the batches to p's leaves and writes them
// to p's part files, starting a new file at the first change of
// client_id after FileRows rows, and, with buckets, at each change of
// bucket. It hands each batch to done once written.
func (ing *ingest) writeFiles(p *partition, in <-chan *rowBatch, done func(*rowBatch)) (err error) {
	var fw *dataset.FileWriter
	var path, lastClient string
	bucket := -1
	drain := func() {
		for b := range in {
			done(b)
		}
	}
	defer drain()
	closeFile := func() error {
		err := fw.Close()
		if err == nil {
			f := dataset.File{Rows: fw.Rows(), RowGroups: fw.RowGroups(), SHA256: fw.SHA256()}
			p.files = append(p.files, partFile{path: path, bucket: bucket, file: f})
		}
		fw = nil
		return err
	}
	for full := range in {
		for i := range full.pos {
			p.leaves.Add(full.pos[i].Seq, full.pos[i].Link)
		}
		batch, pos := full.recs, full.pos
		for len(batch) > 0 {
			b := ing.bucket(batch[0].ClientID)
			if fw != nil && (b != bucket || fw.Rows() >= ing.opts.FileRows && batch[0].ClientID != lastClient) {
				if err := closeFile(); err != nil {
					return err
				}
			}
			if fw == nil {
				path = filepath.Join(ing.dir, fmt.Sprintf("part-%s-%05d.tmp", p.name(), len(p.files)))
				if fw, err = dataset.CreateFile(path, ing.allNames); err != nil {
					return err
				}
				bucket = b
			}
			n := ing.splitAt(batch, fw.Rows(), lastClient, bucket)
			if err := fw.WriteChained(batch[:n], pos[:n]); err != nil {
				fw.Close()
				return err
			}
			lastClient = batch[n-1].ClientID
			batch, pos = batch[n:], pos[n:]
		}
		done(full)
		if !p.stream {
			ing.wrote(int64(len(full.pos)))
		}
	}
	if fw != nil {
		return closeFile()
	}
	return nil
}

// wrote counts rows written, for progress.
func (ing *ingest) wrote(n int64) {
	ing.mu.Lock()
	defer ing.mu.Unlock()
	ing.written += n
	ing.records = ing.written
	ing.progress("write", false)
}

// assemble gives the partitions' files their names and places in the
// dataset, in order, appends their duplicates to the dataset's
// duplicates file in order, adds up their counts and builds the tree
// over their leaves.
func (ing *ingest) assemble(parts []*partition) ([]dataset.File, *hashchain.Tree3, error) {
	var files []dataset.File
	tree := &hashchain.Tree3{}
	dups, err := os.Create(filepath.Join(ing.dir, dataset.DuplicatesName))
	if err != nil {
		return nil, nil, err
	}
	defer dups.Close()
	for _, p := range parts {
		for _, f := range p.files {
			name, err := ing.partName(f.bucket, len(files))
			if err == nil {
				err = os.Rename(f.path, filepath.Join(ing.dir, filepath.FromSlash(name)))
			}
			if err != nil {
				return nil, nil, err
			}
			f.file.Name = name
			files = append(files, f.file)
		}
		for s := range p.counts {
			ing.inputs[s].Accepted += p.counts[s].Accepted
			ing.inputs[s].Duplicates += p.counts[s].Duplicates
		}
		tree.AddChains(&p.leaves)
		if err := appendFile(dups, p.dups); err != nil {
			return nil, nil, err
		}
	}
	return files, tree, dups.Close()
}

// appendFile appends the file at path to w and removes it.
func appendFile(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	_, err = io.Copy(w, f)
	f.Close()
	if err == nil {
		err = os.Remove(path)
	}
	return err
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
	if ing.opts.Buckets <= 1 && rows+int64(len(batch)) <= ing.opts.FileRows {
		return len(batch) // no file ends in it
	}
	for i := range batch {
		if batch[i].ClientID != last && i > 0 && (rows+int64(i) >= ing.opts.FileRows || ing.bucket(batch[i].ClientID) != bucket) {
			return i
		}
		last = batch[i].ClientID
	}
	return len(batch)
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
