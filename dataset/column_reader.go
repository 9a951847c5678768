package dataset

import (
	"io"

	"github.com/parquet-go/parquet-go"
)

// columnReader reads the values of one column chunk a page at a time, as
// parquet.ColumnChunkValueReader does, except that a page holding only
// nulls yields a count of null rows rather than a parquet.Value for each:
// most records lack most optional fields, and making and testing those
// values was a fifth of verify's time. Whether a page is all null comes
// from its definition levels, read from the page itself, never from the
// metadata that describes it.
type columnReader struct {
	pages  parquet.Pages
	page   parquet.Page
	values parquet.ValueReader // the page's, when it has a value
	nulls  int64               // the rows left of a page that holds none
}

func newColumnReader(chunk parquet.ColumnChunk) *columnReader {
	return &columnReader{pages: chunk.Pages()}
}

// read reads up to len(vals) values into vals and returns how many; or,
// with null true, returns n rows that are null, leaving vals as they
// were. A page is released by the read after its last values were
// returned, so the values read stay valid until the next read.
func (r *columnReader) read(vals []parquet.Value) (n int, null bool, err error) {
	for {
		if err := r.load(); err != nil {
			return 0, false, err
		}
		if r.values == nil {
			if r.nulls > 0 {
				n := int(min(r.nulls, int64(len(vals))))
				r.nulls -= int64(n)
				return n, true, nil
			}
		} else {
			n, err := r.values.ReadValues(vals)
			switch {
			case n > 0:
				return n, false, nil
			case err == nil:
				return 0, false, io.ErrNoProgress
			case err != io.EOF:
				return 0, false, err
			}
		}
		r.release()
	}
}

// load reads the next page if the last one is done.
func (r *columnReader) load() error {
	if r.page != nil {
		return nil
	}
	p, err := r.pages.ReadPage()
	if err != nil {
		return err
	}
	r.page = p
	if p.NumNulls() == p.NumRows() {
		r.nulls = p.NumRows()
	} else {
		r.values = p.Values()
	}
	return nil
}

// typed reads values through read, which reads them from a page's values
// into a typed buffer of the caller's when the page's values offer that
// (parquet.Int64Reader and its kin: a PLAIN page of a required column),
// and says ok false otherwise. typed says ok false too at a page of nulls:
// read then reads the values, which decodeColumn judges.
func (r *columnReader) typed(read func(parquet.ValueReader) (n int, ok bool, err error)) (n int, ok bool, err error) {
	for {
		if err := r.load(); err != nil {
			return 0, false, err
		}
		if r.values == nil {
			return 0, false, nil
		}
		n, ok, err := read(r.values)
		switch {
		case !ok:
			return 0, false, nil
		case n > 0:
			return n, true, nil
		case err == nil:
			return 0, false, io.ErrNoProgress
		case err != io.EOF:
			return 0, false, err
		}
		r.release()
	}
}

func (r *columnReader) release() {
	if r.page != nil {
		parquet.Release(r.page)
	}
	r.page, r.values, r.nulls = nil, nil, 0
}

// Close closes the chunk's pages.
func (r *columnReader) Close() error {
	err := r.pages.Close()
	r.release()
	return err
}

// SeekToRow moves the reader to the row at index row of the chunk.
func (r *columnReader) SeekToRow(row int64) error {
	if err := r.pages.SeekToRow(row); err != nil {
		return err
	}
	r.release()
	return nil
}
