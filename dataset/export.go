package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// ExportDictionaries are the columns ExportArrowIPC writes dictionary
// encoded: those of few distinct values (a fleet's devices, gateways and
// inputs, and the enums), each value once per file rather than per row.
var ExportDictionaries = []string{"client_id", "outcome", "host_id", "stage", "failure_class", "source"}

// ExportOptions configures ExportArrowIPC.
type ExportOptions struct {
	// Compression is the IPC buffer compression: "zstd", "lz4" or "none"
	// (or "", none).
	Compression string
	// Redact, when set, replaces the value of every string column that a
	// device wrote (RedactColumns) by what it returns for the column's
	// name and the value; it must give equal values for equal inputs.
	Redact func(column, value string) string
	// Context, when set, stops the export between two batches once it
	// is done (its cause is the error).
	Context context.Context
	// Since and Until, when set, keep only the rows recorded in [Since,
	// Until); Outside, when not nil, is set to how many were left out.
	Since, Until time.Time
	Outside      *int64
}

// RedactColumns are the columns whose text a device wrote, which
// ExportOptions.Redact sees: the identifiers, the unknown and envelope
// members, and the input's name (a file named after a device's MAC
// address).
var RedactColumns = []string{"client_id", "host_id", "attempt_id", "record_id", "extra", "envelope", "source"}

// ExportArrowIPC writes the rows of the dataset in dir to w as one Arrow
// IPC file (the random-access "Feather v2" format that pyarrow, pandas,
// polars and DuckDB read), in batches of DefaultBatchRows rows, with the
// schema of ArrowReader.Schema except that the ExportDictionaries columns
// are dictionary<values=utf8, indices=int32>, each with one dictionary
// for the whole file (the IPC file format allows no other), and that
// recorded_at is in the unit of the dataset's files,
// timestamp[us, tz=UTC], with recorded_at_ns after it (the nanoseconds
// past the microsecond, 1 to 999, null for none), as the files store
// them (ExportSchema); buffers are compressed as opts say. It reads the dataset twice: the dictionary
// columns first, to build the dictionaries, then every column. Memory
// stays bounded by the batch size and the dictionaries. On error, what was
// written to w is not a valid file.
func ExportArrowIPC(dir string, w io.Writer, opts ExportOptions) (err error) {
	var wopts []ipc.Option
	switch opts.Compression {
	case "", "none":
	case "zstd":
		wopts = append(wopts, ipc.WithZstd())
	case "lz4":
		wopts = append(wopts, ipc.WithLZ4())
	default:
		return fmt.Errorf("compression: expected zstd, lz4 or none, found %q", opts.Compression)
	}
	dicts, err := exportDictionaries(dir, opts.Redact)
	if err != nil {
		return err
	}
	defer dicts.release()
	r, err := OpenArrowWith(dir, ArrowOptions{BatchRows: DefaultBatchRows, Dictionaries: ExportDictionaries})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, r.Close()) }()
	schema := exportSchema(r.Schema())
	win, outside := newRowWindow(opts.Since, opts.Until), int64(0)
	iw, err := ipc.NewFileWriter(w, append(wopts, ipc.WithSchema(schema), ipc.WithAllocator(r.mem))...)
	if err != nil {
		return err
	}
	for {
		if ctx := opts.Context; ctx != nil && ctx.Err() != nil {
			return context.Cause(ctx)
		}
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if win.on {
			kept, left, err := win.keep(rec, r.mem)
			rec.Release()
			if err != nil {
				return err
			}
			rec, outside = kept, outside+left
			if rec.NumRows() == 0 {
				rec.Release()
				continue
			}
		}
		out, err := dicts.encode(schema, rec, opts.Redact)
		rec.Release()
		if err != nil {
			return err
		}
		err = iw.Write(out)
		out.Release()
		if err != nil {
			return fmt.Errorf("write Arrow IPC: %w", err)
		}
	}
	if err := iw.Close(); err != nil {
		return fmt.Errorf("write Arrow IPC: %w", err)
	}
	if opts.Outside != nil {
		*opts.Outside = outside
	}
	return nil
}

// ExportTimeUnit is the unit of recorded_at in an Arrow IPC export: that
// of the dataset's Parquet files, TIMESTAMP(MICROS), which every reader
// of them takes (Spark refuses nanoseconds), so that a table read from
// either has one type. recorded_at_ns holds the rest.
const ExportTimeUnit = arrow.Microsecond

// ExportSchema returns the schema of an Arrow IPC export
// (ExportArrowIPC) of every column.
func ExportSchema() *arrow.Schema {
	p, err := project(nil, ExportDictionaries)
	if err != nil {
		panic(err) // the dataset's own columns
	}
	return exportSchema(p.schema)
}

// exportSchema is s, the schema of ArrowReader's batches, with
// recorded_at in ExportTimeUnit and recorded_at_ns after it.
func exportSchema(s *arrow.Schema) *arrow.Schema {
	var fields []arrow.Field
	for _, f := range s.Fields() {
		if f.Name == columnNames[colRecordedAt] {
			f.Type = &arrow.TimestampType{Unit: ExportTimeUnit, TimeZone: "UTC"}
			fields = append(fields, f, arrowColumns[colRecordedAtNs])
			continue
		}
		fields = append(fields, f)
	}
	meta := s.Metadata()
	return arrow.NewSchema(fields, &meta)
}

// splitRecordedAt returns a, recorded_at in nanoseconds, as its
// microseconds (of type t) and the nanoseconds past each, null for none.
func splitRecordedAt(a *array.Timestamp, t arrow.DataType) (us, ns arrow.Array) {
	vals := a.TimestampValues()
	out := make([]arrow.Timestamp, len(vals))
	nb := array.NewInt32Builder(memory.DefaultAllocator)
	defer nb.Release()
	nb.Reserve(len(vals))
	for i, v := range vals { // a required column: the reader let no null through
		u, rem := splitTime(int64(v))
		out[i] = arrow.Timestamp(u)
		if rem == 0 {
			nb.UnsafeAppendBoolToBitmap(false)
		} else {
			nb.UnsafeAppend(rem)
		}
	}
	d := array.NewData(t, len(out), []*memory.Buffer{nil, memory.NewBufferBytes(arrow.TimestampTraits.CastToBytes(out))}, nil, 0, 0)
	defer d.Release()
	return array.NewTimestampData(d), nb.NewInt32Array()
}

// fileDicts holds one dictionary per dictionary column of an export, by
// column name: every value of the column in the dataset, in order of
// first appearance, and the index of each.
type fileDicts map[string]*fileDict

type fileDict struct {
	index  map[string]int32
	values *array.String
}

func (d fileDicts) release() {
	for _, fd := range d {
		if fd.values != nil {
			fd.values.Release()
		}
	}
}

// exportDictionaries reads the dictionary columns of the dataset in dir
// and returns their dictionaries, whose values redact (if set) replaces.
func exportDictionaries(dir string, redact func(column, value string) string) (fileDicts, error) {
	r, err := OpenArrowWith(dir, ArrowOptions{BatchRows: DefaultBatchRows, Columns: ExportDictionaries, Dictionaries: ExportDictionaries})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	seen := map[string][]string{}
	index := map[string]map[string]int32{}
	for _, name := range ExportDictionaries {
		index[name] = map[string]int32{}
	}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		for c, f := range rec.Schema().Fields() {
			vals := rec.Column(c).(*array.Dictionary).Dictionary().(*array.String)
			for i := range vals.Len() {
				if v := vals.Value(i); !has(index[f.Name], v) {
					v = strings.Clone(v) // Value points into the batch's buffers
					index[f.Name][v] = int32(len(seen[f.Name]))
					seen[f.Name] = append(seen[f.Name], v)
				}
			}
		}
		rec.Release()
	}
	out := fileDicts{}
	for _, name := range ExportDictionaries {
		b := array.NewStringBuilder(memory.DefaultAllocator)
		if redact != nil && slices.Contains(RedactColumns, name) {
			seen[name] = redactDictionary(seen[name], index[name], func(v string) string { return redact(name, v) })
		}
		b.AppendValues(seen[name], nil)
		out[name] = &fileDict{index: index[name], values: b.NewStringArray()}
		b.Release()
	}
	return out, nil
}

func has(m map[string]int32, k string) bool { _, ok := m[k]; return ok }

// encode returns rec in the export's schema: each dictionary column
// re-indexed into the file's dictionary of that column, the other
// RedactColumns redacted, and recorded_at in microseconds with
// recorded_at_ns after it.
func (d fileDicts) encode(schema *arrow.Schema, rec arrow.RecordBatch, redact func(column, value string) string) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, 0, schema.NumFields())
	var made []arrow.Array
	defer func() {
		for _, a := range made {
			a.Release()
		}
	}()
	for c, f := range rec.Schema().Fields() {
		if f.Name == columnNames[colRecordedAt] {
			us, ns := splitRecordedAt(rec.Column(c).(*array.Timestamp), schema.Field(len(cols)).Type)
			made = append(made, us, ns)
			cols = append(cols, us, ns)
			continue
		}
		fd := d[f.Name]
		if fd == nil {
			a := rec.Column(c)
			if s, ok := a.(*array.String); ok && redact != nil && slices.Contains(RedactColumns, f.Name) {
				a = redactStrings(s, func(v string) string { return redact(f.Name, v) })
				made = append(made, a)
			}
			cols = append(cols, a)
			continue
		}
		a := rec.Column(c).(*array.Dictionary)
		local := a.Dictionary().(*array.String)
		remap := make([]int32, local.Len())
		for i := range remap {
			k, ok := fd.index[local.Value(i)]
			if !ok {
				return nil, fmt.Errorf("export: column %s: %q was not in the dataset when read before (the dataset changed while being exported)", f.Name, local.Value(i))
			}
			remap[i] = k
		}
		ib := array.NewInt32Builder(memory.DefaultAllocator)
		ib.Reserve(a.Len())
		for i := range a.Len() {
			if a.IsNull(i) {
				ib.AppendNull()
			} else {
				ib.UnsafeAppend(remap[a.GetValueIndex(i)])
			}
		}
		idx := ib.NewInt32Array()
		ib.Release()
		da := array.NewDictionaryArray(f.Type, idx, fd.values)
		idx.Release()
		made = append(made, da)
		cols = append(cols, da)
	}
	return array.NewRecordBatch(schema, cols, rec.NumRows()), nil
}

// redactStrings returns a new array of a's values through redact.
func redactStrings(a *array.String, redact func(string) string) *array.String {
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	b.Reserve(a.Len())
	for i := range a.Len() {
		if a.IsNull(i) {
			b.AppendNull()
		} else {
			b.Append(redact(a.Value(i)))
		}
	}
	return b.NewStringArray()
}

// redactDictionary returns the distinct redacted values of a dictionary,
// and points index (value -> its place in vals) at them: two values may
// share a pseudonym (two spellings of one MAC address), and a dictionary
// with a value twice is one that readers building categories refuse.
func redactDictionary(vals []string, index map[string]int32, redact func(string) string) []string {
	var out []string
	at := map[string]int32{}
	moved := make([]int32, len(vals))
	for i, v := range vals {
		r := redact(v)
		k, ok := at[r]
		if !ok {
			k = int32(len(out))
			at[r] = k
			out = append(out, r)
		}
		moved[i] = k
	}
	for v, i := range index {
		index[v] = moved[i]
	}
	return out
}
