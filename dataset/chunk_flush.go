package dataset

import (
	"bytes"
	"io"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// chunkIndex is the page index of a column chunk: the column index (nil
// for a column without min/max) and the offset index.
type chunkIndex struct {
	column *format.ColumnIndex
	offset format.OffsetIndex
}

// flush writes the column chunk, which starts at offset in the file, to
// out, and returns its metadata and page index. The writer is then ready
// for the next row group.
func (w *columnWriter) flush(out io.Writer, offset int64) (format.ColumnChunk, chunkIndex, error) {
	if err := w.cutPage(); err != nil {
		return format.ColumnChunk{}, chunkIndex{}, err
	}
	md := format.ColumnMetaData{
		Type:         format.Type(w.kind),
		PathInSchema: []string{columnNames[w.c]},
		Codec:        w.codec,
		NumValues:    w.chunk.rows,
		Statistics:   format.Statistics{NullCount: w.chunk.nulls},
	}
	if b := &w.chunk.bounds; b.ok {
		md.Statistics.MinValue, md.Statistics.MaxValue = bytes.Clone(b.min), bytes.Clone(b.max)
	}
	start := offset
	if w.dict != nil {
		n, size, err := w.writeDictPage(out)
		if err != nil {
			return format.ColumnChunk{}, chunkIndex{}, err
		}
		md.DictionaryPageOffset = offset
		md.TotalUncompressedSize += size
		offset += n
		md.Encoding = []format.Encoding{format.Plain, format.RLEDictionary}
		md.EncodingStats = []format.PageEncodingStats{
			{PageType: format.DictionaryPage, Encoding: format.Plain, Count: 1},
			{PageType: format.DataPage, Encoding: format.RLEDictionary, Count: w.chunk.dataPages},
		}
	} else {
		enc := format.Plain
		if w.delta {
			enc = format.DeltaBinaryPacked
		}
		md.Encoding = []format.Encoding{enc}
		md.EncodingStats = []format.PageEncodingStats{{PageType: format.DataPage, Encoding: enc, Count: w.chunk.dataPages}}
	}
	if w.optional {
		md.Encoding = append(md.Encoding, format.RLE)
	}
	if _, err := out.Write(w.pages); err != nil {
		return format.ColumnChunk{}, chunkIndex{}, err
	}
	md.DataPageOffset = offset
	md.TotalUncompressedSize += w.chunk.uncompressed
	md.TotalCompressedSize = offset + int64(len(w.pages)) - start
	idx := w.pageIndex(offset)
	w.resetChunk()
	return format.ColumnChunk{FileOffset: start, MetaData: md}, idx, nil
}

// writeDictPage writes the dictionary page and returns its size in the
// file and uncompressed.
func (w *columnWriter) writeDictPage(out io.Writer) (n, size int64, err error) {
	body := w.dict.plain
	packed, err := w.compress(body)
	if err != nil {
		return 0, 0, err
	}
	header := format.PageHeader{
		Type:                 format.DictionaryPage,
		UncompressedPageSize: int32(len(body)),
		CompressedPageSize:   int32(len(packed)),
		DictionaryPageHeader: thrift.New(format.DictionaryPageHeader{NumValues: int32(w.dict.len()), Encoding: format.Plain}),
	}
	h, err := thrift.Marshal(new(thrift.CompactProtocol), &header)
	if err != nil {
		return 0, 0, err
	}
	if _, err := out.Write(h); err != nil {
		return 0, 0, err
	}
	if _, err := out.Write(packed); err != nil {
		return 0, 0, err
	}
	return int64(len(h) + len(packed)), int64(len(h) + len(body)), nil
}

// pageIndex returns the page index of the chunk whose data pages start at
// offset.
func (w *columnWriter) pageIndex(offset int64) chunkIndex {
	var idx chunkIndex
	idx.offset.PageLocations = make([]format.PageLocation, len(w.index))
	for i, p := range w.index {
		idx.offset.PageLocations[i] = format.PageLocation{Offset: offset + p.offset, CompressedPageSize: p.size, FirstRowIndex: p.firstRow}
	}
	if !w.bounded {
		return idx
	}
	ci := &format.ColumnIndex{BoundaryOrder: format.Unordered}
	for _, p := range w.index {
		null := p.nulls == p.rows
		ci.NullPages = append(ci.NullPages, null)
		ci.NullCounts = append(ci.NullCounts, p.nulls)
		lo, hi := []byte{}, []byte{}
		if !null {
			lo, hi = p.bounds.min, p.bounds.max
		}
		ci.MinValues, ci.MaxValues = append(ci.MinValues, lo), append(ci.MaxValues, hi)
	}
	idx.column = ci
	return idx
}

func (w *columnWriter) resetChunk() {
	w.pages, w.index = w.pages[:0], w.index[:0]
	w.chunk = chunkStats{bounds: bounds{min: w.chunk.bounds.min[:0], max: w.chunk.bounds.max[:0]}}
	if w.dict != nil {
		w.dict.reset()
	}
}
