package dataset

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/delta"
	"github.com/parquet-go/parquet-go/encoding/rle"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// columnWriter encodes one column of a dataset file into the pages of its
// column chunk in the current row group: PLAIN or dictionary-encoded
// values, definition levels for an optional column, v1 data pages
// compressed with zstd (except link's, and those of a column whose first
// page zstd could not shrink: compress), min/max for the columns that
// keep them.
type columnWriter struct {
	c        int
	kind     parquet.Kind
	optional bool
	dict     *dictionary // nil for a PLAIN column
	bounded  bool        // the page index and statistics carry min/max
	codec    format.CompressionCodec
	decided  bool // the first page has confirmed the codec (compress)

	delta bool // DELTA_BINARY_PACKED: the integer columns

	// the page being filled
	levels []uint8 // definition levels, one a row
	values []byte  // PLAIN values
	idx    []int32 // dictionary indices
	i32    []int32 // the values of a delta column
	i64    []int64
	rows   int
	nulls  int
	page   bounds

	// the column chunk
	pages []byte // data pages, headers included
	index []pageEntry
	chunk chunkStats
	batch bounds // scratch: a batch's bounds
	buf   *pageBuffers
}

// pageBuffers are the scratch buffers of cutting a page, which the
// columns of a file share: they cut their pages one at a time.
type pageBuffers struct {
	body   []byte // an uncompressed page
	packed []byte // encoded levels or indices; a compressed page
}

// pageEntry describes a data page for the page index.
type pageEntry struct {
	offset   int64 // in columnWriter.pages
	size     int32 // header included
	firstRow int64
	nulls    int64
	rows     int64
	bounds   bounds
}

// chunkStats are the totals of a column chunk.
type chunkStats struct {
	rows         int64
	nulls        int64
	uncompressed int64
	bounds       bounds
	dataPages    int32
}

// dictColumns are the dictionary-encoded columns; noBounds those without
// min/max, which would not prune a row group or a page (every group holds
// most outcomes, sources, stages, hosts; links are hashes) yet cost a
// comparison of every value.
var (
	dictColumns = []int{colClientID, colOutcome, colHostID, colStage, colFailureClass, colSource, colOrigin}
	noBounds    = []int{colOutcome, colStage, colFailureClass, colSource, colHostID, colAttemptID, colRecordID, colExtra, colEnvelope, colLink}
)

// deltaInts encodes the integer columns' values: sorted rows make
// recorded_at, line and seq climb in small steps, which bit-pack to a few
// bits a value, where zstd on their PLAIN bytes cost most of a file's
// compression.
var deltaInts = &delta.BinaryPackedEncoding{}

func newColumnWriter(c int, buf *pageBuffers) *columnWriter {
	w := &columnWriter{
		c:        c,
		buf:      buf,
		kind:     columnTypes[c].kind,
		optional: !columnTypes[c].required,
		bounded:  !slices.Contains(noBounds, c),
		codec:    format.Zstd,
	}
	if slices.Contains(dictColumns, c) {
		w.dict = newDictionary()
	}
	w.delta = w.dict == nil && (w.kind == parquet.Int32 || w.kind == parquet.Int64)
	if c == colLink {
		w.codec = format.Uncompressed
	}
	return w
}

// add appends the column's values of a batch to the page.
func (w *columnWriter) add(b *colBatch) {
	w.rows += b.n
	if w.optional {
		w.levels = append(w.levels, b.def[w.c]...)
		for _, d := range b.def[w.c] {
			w.nulls += int(1 - d)
		}
	}
	if w.bounded {
		batchBounds(&w.batch, b, w.c)
		w.page.merge(w.kind, &w.batch)
	}
	if w.dict != nil {
		for _, v := range b.bytes[w.c] {
			w.idx = append(w.idx, w.dict.id(v))
		}
		return
	}
	if w.delta {
		w.i32, w.i64 = append(w.i32, b.i32[w.c]...), append(w.i64, b.i64[w.c]...)
		return
	}
	w.values = appendPlain(w.values, b, w.c)
}

// appendPlain appends column c's values of b PLAIN encoded.
func appendPlain(dst []byte, b *colBatch, c int) []byte {
	switch columnTypes[c].kind {
	case parquet.Boolean:
		for _, v := range b.bools[c] { // packed when the page is cut
			dst = append(dst, b2u8(v))
		}
	case parquet.Int32:
		for _, v := range b.i32[c] {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(v))
		}
	case parquet.Int64:
		for _, v := range b.i64[c] {
			dst = binary.LittleEndian.AppendUint64(dst, uint64(v))
		}
	case parquet.Double:
		for _, v := range b.f64[c] {
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
		}
	case parquet.FixedLenByteArray:
		for _, v := range b.bytes[c] {
			dst = append(dst, v...)
		}
	default:
		for _, v := range b.bytes[c] {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(len(v)))
			dst = append(dst, v...)
		}
	}
	return dst
}

func b2u8(v bool) uint8 {
	if v {
		return 1
	}
	return 0
}

// pageFull reports whether the page has reached pageBufferSize bytes
// (4 a row for dictionary indices).
func (w *columnWriter) pageFull() bool {
	return len(w.values)+4*len(w.idx)+4*len(w.i32)+8*len(w.i64)+len(w.levels)/8 >= pageBufferSize
}

// cutPage ends the page being filled, if it has rows.
func (w *columnWriter) cutPage() error {
	if w.rows == 0 {
		return nil
	}
	body := w.buf.body[:0]
	if w.optional {
		body = w.encodeLevels(body)
	}
	body, enc, err := w.encodeValues(body)
	if err != nil {
		return err
	}
	w.buf.body = body
	return w.writePage(body, enc)
}

// encodeLevels appends the page's definition levels to dst, RLE/bit-packed
// hybrid with bit width 1 after their 4-byte length, as v1 data pages have
// them.
func (w *columnWriter) encodeLevels(dst []byte) []byte {
	levels, _ := (&rle.Encoding{BitWidth: 1}).EncodeLevels(w.buf.packed[:0], w.levels)
	w.buf.packed = levels
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(levels)))
	return append(dst, levels...)
}

// encodeValues appends the page's values to dst and returns their
// encoding.
func (w *columnWriter) encodeValues(dst []byte) ([]byte, format.Encoding, error) {
	switch {
	case w.dict != nil:
		width := bits.Len(uint(max(w.dict.len()-1, 0)))
		dst = append(dst, byte(width))
		out, err := (&rle.Encoding{BitWidth: width}).EncodeInt32(w.buf.packed[:0], w.idx)
		w.buf.packed = out
		return append(dst, out...), format.RLEDictionary, err
	case w.kind == parquet.Boolean:
		return packBits(dst, w.values), format.Plain, nil
	case w.delta:
		var out []byte
		var err error
		if w.kind == parquet.Int32 {
			out, err = deltaInts.EncodeInt32(w.buf.packed[:0], w.i32)
		} else {
			out, err = deltaInts.EncodeInt64(w.buf.packed[:0], w.i64)
		}
		w.buf.packed = out
		return append(dst, out...), format.DeltaBinaryPacked, err
	}
	return append(dst, w.values...), format.Plain, nil
}

// packBits appends v, one 0/1 byte a value, as bits, the first value in
// the lowest bit.
func packBits(dst, v []byte) []byte {
	for i := 0; i < len(v); i += 8 {
		var x byte
		for j, b := range v[i:min(i+8, len(v))] {
			x |= b << j
		}
		dst = append(dst, x)
	}
	return dst
}

// compress returns body compressed with the column's codec.
//
// The first page of a PLAIN column decides the codec for the file: if
// zstd does not shrink it by a tenth, as with random doubles
// (backoff_delay_s) or hashes, the column is stored uncompressed, which
// saves zstd its full price. (Within a file, a column keeps one codec:
// parquet-go's reader takes the first row group's for all.)
func (w *columnWriter) compress(body []byte) ([]byte, error) {
	if w.codec != format.Zstd {
		return body, nil
	}
	var err error
	if w.buf.packed, err = codec.Encode(w.buf.packed[:0], body); err != nil {
		return nil, err
	}
	if !w.decided && w.dict == nil {
		w.decided = true
		if len(w.buf.packed)*10 >= len(body)*9 {
			w.codec = format.Uncompressed
			return body, nil
		}
	}
	return w.buf.packed, nil
}

// writePage compresses body and appends it, as a data page, to the chunk.
func (w *columnWriter) writePage(body []byte, enc format.Encoding) error {
	data, err := w.compress(body)
	if err != nil {
		return err
	}
	header := format.PageHeader{
		Type:                 format.DataPage,
		UncompressedPageSize: int32(len(body)),
		CompressedPageSize:   int32(len(data)),
		DataPageHeader: thrift.New(format.DataPageHeader{
			NumValues: int32(w.rows), Encoding: enc,
			DefinitionLevelEncoding: format.RLE, RepetitionLevelEncoding: format.RLE,
		}),
	}
	h, err := thrift.Marshal(new(thrift.CompactProtocol), &header)
	if err != nil {
		return err
	}
	e := pageEntry{offset: int64(len(w.pages)), size: int32(len(h) + len(data)), firstRow: w.chunk.rows, nulls: int64(w.nulls), rows: int64(w.rows)}
	e.bounds.merge(w.kind, &w.page)
	w.index = append(w.index, e)
	w.pages = append(append(w.pages, h...), data...)
	w.chunk.rows += int64(w.rows)
	w.chunk.nulls += int64(w.nulls)
	w.chunk.uncompressed += int64(len(h) + len(body))
	w.chunk.bounds.merge(w.kind, &w.page)
	w.chunk.dataPages++
	w.levels, w.values, w.idx, w.rows, w.nulls = w.levels[:0], w.values[:0], w.idx[:0], 0, 0
	w.i32, w.i64 = w.i32[:0], w.i64[:0]
	w.page.reset()
	return nil
}
