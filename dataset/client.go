package dataset

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/stormaudit/stormaudit/hashchain"

	"github.com/parquet-go/parquet-go"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// Row is a record of a dataset with its place in it.
type Row struct {
	Record auditfmt.Record
	Chain  hashchain.Pos // zero when the dataset has no chain columns
	File   int           // index in Manifest.Files
	Row    int64         // the row in that file
}

// ReadClient returns the rows of the client whose client_id is id, in
// dataset order, and the names of the inputs their Record.Source indexes:
// the manifest's inputs in order, then any other name the files give.
//
// It reads only what may hold them. A dataset is sorted by client_id, so
// a client's rows are contiguous: the row groups whose client_id bounds
// (the column chunk's statistics) admit id are the only ones opened, and
// within one, the pages whose bounds admit it (the column index) give the
// rows to read, found through the offset index of every column. A file
// without a page index is read from the start of each such row group.
// Rows that fail validation are errors, as in FileReader.Read.
func ReadClient(dir, id string) ([]Row, []string, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, 0, len(m.Inputs))
	for _, in := range m.Inputs {
		names = append(names, in.Name)
	}
	var rows []Row
	for i, f := range m.Files {
		got, err := readClientFile(filepath.Join(dir, f.Name), id)
		if err != nil {
			return nil, nil, err
		}
		for _, g := range got.rows {
			g.File = i
			g.Record.Source = uint32(sourceNumber(&names, got.sources[g.Record.Source]))
			rows = append(rows, g)
		}
	}
	return rows, names, nil
}

// sourceNumber returns the index of name in *names, appending it if new.
func sourceNumber(names *[]string, name string) int {
	if k := slices.Index(*names, name); k >= 0 {
		return k
	}
	*names = append(*names, name)
	return len(*names) - 1
}

// clientRows are the rows of one client read from one file, with the
// file's source names their Record.Source indexes.
type clientRows struct {
	rows    []Row
	sources []string
}

func readClientFile(path, id string) (_ clientRows, err error) {
	defer recoverCorrupt(path, &err)
	r, err := OpenFile(path)
	if err != nil {
		return clientRows{}, err
	}
	defer r.Close()
	var out clientRows
	var first int64 // the row group's first row in the file
	for _, g := range r.pf.RowGroups() {
		from, to, err := clientSpan(g, r.index[colClientID], id)
		if err != nil {
			return clientRows{}, fmt.Errorf("%s: %w", path, err)
		}
		if from < to {
			if err := r.readSpan(g, first, from, to, id, &out.rows); err != nil {
				return clientRows{}, err
			}
		}
		first += g.NumRows()
	}
	out.sources = r.Sources()
	for _, row := range out.rows {
		if int(row.Record.Source) >= len(out.sources) {
			return clientRows{}, fmt.Errorf("%s: row %d: source: index %d beyond the file's %d sources", path, row.Row, row.Record.Source, len(out.sources))
		}
	}
	return out, nil
}

// clientSpan returns the rows [from, to) of row group g that may hold the
// client id, by the bounds of its client_id column (leaf index leaf).
func clientSpan(g parquet.RowGroup, leaf int, id string) (from, to int64, err error) {
	chunk := g.ColumnChunks()[leaf]
	n := g.NumRows()
	if fc, ok := chunk.(*parquet.FileColumnChunk); ok {
		if lo, hi, ok := fc.Bounds(); ok && (id < string(lo.ByteArray()) || id > string(hi.ByteArray())) {
			return 0, 0, nil
		}
	}
	ci, err := chunk.ColumnIndex()
	if err != nil {
		return 0, n, nil // no page index: the whole group
	}
	oi, err := chunk.OffsetIndex()
	if err != nil || oi.NumPages() != ci.NumPages() {
		return 0, n, nil
	}
	pages := ci.NumPages()
	p0 := 0
	for p0 < pages && (ci.NullPage(p0) || string(ci.MaxValue(p0).ByteArray()) < id) {
		p0++
	}
	p1 := p0
	for p1 < pages && (ci.NullPage(p1) || string(ci.MinValue(p1).ByteArray()) <= id) {
		p1++
	}
	if p0 == p1 {
		return 0, 0, nil
	}
	from, to = oi.FirstRowIndex(p0), n
	if p1 < pages {
		to = oi.FirstRowIndex(p1)
	}
	return from, to, nil
}

// readSpan reads the rows of client id among rows [from, to) of row group
// g, whose first row is row first of the file, and appends them to rows.
// It finds them in the client_id column alone, then decodes only them.
func (r *FileReader) readSpan(g parquet.RowGroup, first, from, to int64, id string, rows *[]Row) error {
	chunks := g.ColumnChunks()
	for _, i := range r.index {
		if i >= 0 {
			chunks[i].OffsetIndex() // loaded, SeekToRow jumps to the page; without it, it skips rows
		}
	}
	a, b, err := findClient(chunks[r.index[colClientID]], from, to, id)
	if err != nil {
		return fmt.Errorf("%s: row %d: client_id: %w", r.path, first+from, err)
	}
	if a == b {
		return nil
	}
	chained := r.index[colOrigin] >= 0
	if err := r.closeColumns(); err != nil {
		return fmt.Errorf("%s: %w", r.path, err)
	}
	r.groups, r.mode, r.span = nil, readRecords, true
	if chained {
		r.mode = readChained
	}
	for c, i := range r.index {
		if i < 0 {
			continue
		}
		r.cols[c] = newColumnReader(chunks[i])
		if err := r.cols[c].SeekToRow(a); err != nil {
			return fmt.Errorf("%s: row %d: %s: %w", r.path, first+a, columnNames[c], err)
		}
	}
	r.left, r.row, r.err = b-a, first+a, nil
	r.batch, r.pos = r.batch[:0], 0
	n := int(b - a)
	recs := make([]auditfmt.Record, n)
	pos := make([]hashchain.Pos, n)
	var got int
	for got < n {
		var k int
		if chained {
			k, err = r.ReadChain(recs[got:], pos[got:])
		} else {
			k, err = r.Read(recs[got:])
		}
		got += k
		if err != nil {
			return err // a *RowError too: the reviewer must know the record is bad
		}
	}
	for k := range recs {
		if recs[k].ClientID != id {
			return fmt.Errorf("%s: row %d: client_id: expected %q, found %q (the column disagrees with itself)", r.path, first+a+int64(k), id, recs[k].ClientID)
		}
		*rows = append(*rows, Row{Record: recs[k], Chain: pos[k], Row: first + a + int64(k)})
	}
	return nil
}

// findClient returns the rows [a, b) of the column chunk (client_id) among
// rows [from, to) whose value is id; a == b when there are none.
func findClient(chunk parquet.ColumnChunk, from, to int64, id string) (a, b int64, err error) {
	cr := parquet.NewColumnChunkValueReader(chunk)
	defer cr.Close()
	if err := cr.SeekToRow(from); err != nil {
		return 0, 0, err
	}
	want := []byte(id)
	vals := make([]parquet.Value, readBatch)
	for row := from; row < to; {
		k, err := cr.ReadValues(vals[:min(int64(len(vals)), to-row)])
		for _, v := range vals[:k] {
			switch bytes.Compare(v.ByteArray(), want) {
			case 0:
				if b == a {
					a = row
				}
				b = row + 1
			case 1:
				return a, b, nil // sorted: no more of it
			}
			row++
		}
		switch {
		case err == io.EOF:
			return a, b, nil
		case err != nil:
			return 0, 0, err
		case k == 0:
			return 0, 0, io.ErrNoProgress
		}
	}
	return a, b, nil
}
