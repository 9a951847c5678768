package dataset

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/stormaudit/stormaudit/auditfmt"
)

const writeBatch = 8192

// write merges the sorted records, drops and logs duplicates, and writes
// the Parquet files and the manifest.
func (ing *ingest) write() (*Manifest, error) {
	m, err := ing.sort.finish()
	if err != nil {
		return nil, err
	}
	dups, err := newDupLog(filepath.Join(ing.dir, DuplicatesName))
	if err != nil {
		m.close()
		return nil, err
	}
	batches := make(chan []auditfmt.Record, 2)
	free := make(chan []auditfmt.Record, 3)
	for range 3 {
		free <- make([]auditfmt.Record, 0, writeBatch)
	}
	mergeErr := make(chan error, 1)
	go func() { mergeErr <- ing.dedup(m, dups, batches, free) }()
	files, werr := ing.writeFiles(batches, free)
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
	return ing.finishManifest(files)
}

// dedup streams the merge into batches, keeping the first of each run of
// identical records.
func (ing *ingest) dedup(m *merger, dups *dupLog, out chan<- []auditfmt.Record, free <-chan []auditfmt.Record) error {
	defer close(out)
	batch := <-free
	var prev auditfmt.Record
	have := false
	for {
		var rec auditfmt.Record
		err := m.next(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if have && auditfmt.SameRecord(&prev, &rec) {
			ing.inputs[rec.Source].Duplicates++
			if err := dups.add(ing.names, &rec, &prev); err != nil {
				return err
			}
			continue
		}
		prev, have = rec, true
		ing.inputs[rec.Source].Accepted++
		batch = append(batch, rec)
		if len(batch) == writeBatch {
			out <- batch
			batch = (<-free)[:0]
		}
	}
	if len(batch) > 0 {
		out <- batch
	}
	return nil
}

// writeFiles writes batches to part files, starting a new file at the
// first change of client_id after FileRows rows.
func (ing *ingest) writeFiles(in <-chan []auditfmt.Record, free chan<- []auditfmt.Record) (files []File, err error) {
	var fw *FileWriter
	var lastClient string
	var written int64
	drain := func() {
		for b := range in {
			free <- b
		}
	}
	defer drain()
	for full := range in {
		batch := full
		for len(batch) > 0 {
			if fw != nil && fw.Rows() >= ing.opts.FileRows && batch[0].ClientID != lastClient {
				if files, err = ing.closeFile(fw, files); err != nil {
					return nil, err
				}
				fw = nil
			}
			if fw == nil {
				name := fmt.Sprintf("part-%05d.parquet", len(files))
				if fw, err = CreateFile(filepath.Join(ing.dir, name), ing.names); err != nil {
					return nil, err
				}
			}
			n := ing.splitAt(batch, fw.Rows(), lastClient)
			if err := fw.Write(batch[:n]); err != nil {
				fw.Close()
				return nil, err
			}
			lastClient = batch[n-1].ClientID
			written += int64(n)
			batch = batch[n:]
		}
		free <- full[:0]
		ing.records = written
		ing.progress("write", false)
	}
	if fw != nil {
		if files, err = ing.closeFile(fw, files); err != nil {
			return nil, err
		}
	}
	ing.progress("write", true)
	return files, nil
}

// splitAt returns how many records of batch still belong in the current
// file: all of them, or those up to the first change of client_id once
// the file has FileRows rows.
func (ing *ingest) splitAt(batch []auditfmt.Record, rows int64, last string) int {
	for i := range batch {
		if rows+int64(i) >= ing.opts.FileRows && batch[i].ClientID != last && i > 0 {
			return i
		}
		last = batch[i].ClientID
	}
	return len(batch)
}

func (ing *ingest) closeFile(fw *FileWriter, files []File) ([]File, error) {
	if err := fw.Close(); err != nil {
		return nil, err
	}
	name := fmt.Sprintf("part-%05d.parquet", len(files))
	return append(files, File{Name: name, Rows: fw.Rows(), RowGroups: fw.RowGroups(), SHA256: fw.SHA256()}), nil
}

func (ing *ingest) finishManifest(files []File) (*Manifest, error) {
	man := &Manifest{
		Format:        "stormaudit-dataset",
		SchemaVersion: auditfmt.SchemaVersion,
		CreatedBy:     ing.opts.CreatedBy,
		SortedBy:      []string{"client_id", "recorded_at"},
		Files:         files,
		Inputs:        ing.inputs,
	}
	if man.Files == nil {
		man.Files = []File{}
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
	return man, writeManifest(ing.dir, man)
}

// writeManifest writes the manifest atomically: a temporary file, synced,
// then renamed into place.
func writeManifest(dir string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, ManifestName+".tmp")
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
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
	return os.Rename(tmp, filepath.Join(dir, ManifestName))
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

func isValidUTF8(b []byte) bool { return utf8.Valid(b) }
