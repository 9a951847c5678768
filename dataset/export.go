package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

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
// for the whole file (the IPC file format allows no other), and buffers
// compressed as opts say. It reads the dataset twice: the dictionary
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
	schema := r.Schema()
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
	return nil
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

// encode returns rec with each dictionary column re-indexed into the
// file's dictionary of that column, and the other RedactColumns redacted.
func (d fileDicts) encode(schema *arrow.Schema, rec arrow.RecordBatch, redact func(column, value string) string) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, rec.NumCols())
	var made []arrow.Array
	defer func() {
		for _, a := range made {
			a.Release()
		}
	}()
	for c, f := range rec.Schema().Fields() {
		fd := d[f.Name]
		if fd == nil {
			cols[c] = rec.Column(c)
			if s, ok := cols[c].(*array.String); ok && redact != nil && slices.Contains(RedactColumns, f.Name) {
				cols[c] = redactStrings(s, func(v string) string { return redact(f.Name, v) })
				made = append(made, cols[c])
			}
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
		cols[c] = da
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
