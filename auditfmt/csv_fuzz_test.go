package auditfmt_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// FuzzCSV reads any input as CSV, writes the good records back with
// CSVWriter and reads them again: the records must come back equal, and
// no input may make the reader panic, loop or lose track of lines.
func FuzzCSV(f *testing.F) {
	f.Fuzz(func(t *testing.T, in []byte) {
		got, ok := csvReadAllChecked(t, in)
		if !ok {
			return
		}
		var buf bytes.Buffer
		w := auditfmt.NewCSVWriter(&buf, got.extra)
		for i := range got.recs {
			if err := w.Write(&got.recs[i]); err != nil {
				t.Fatalf("Write(%+v): %v", got.recs[i], err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		again, ok := csvReadAllChecked(t, buf.Bytes())
		switch {
		case !ok:
			t.Fatalf("the writer's header was rejected:\n%q", buf.Bytes())
		case again.bad != 0:
			t.Fatalf("%d rows written by CSVWriter were rejected:\n%q", again.bad, buf.Bytes())
		case !slices.Equal(got.extra, again.extra):
			t.Fatalf("extra columns %q came back as %q", got.extra, again.extra)
		case !reflect.DeepEqual(got.recs, again.recs):
			t.Fatalf("records changed in a round trip:\n got %+v\nwant %+v\nCSV:\n%q", again.recs, got.recs, buf.Bytes())
		}
	})
}

type csvReadResult struct {
	recs  []auditfmt.Record // the good records, Source and Line cleared
	extra []string          // the unknown columns
	bad   int               // rows rejected
}

// csvReadAllChecked reads in to the end, checking what must hold for any
// input: errors are *FieldError, raw rows are part of the input, lines go
// up, good records validate. ok is false when the header was rejected.
func csvReadAllChecked(t *testing.T, in []byte) (res csvReadResult, ok bool) {
	t.Helper()
	c, err := auditfmt.NewCSVReader(bytes.NewReader(in))
	if err != nil {
		if fe := (*auditfmt.FieldError)(nil); !errors.As(err, &fe) {
			t.Fatalf("NewCSVReader: %v is not a *FieldError", err)
		}
		return res, false
	}
	res.extra = c.ExtraColumns()
	line := int64(1)
	for range len(in) + 2 {
		rec := auditfmt.Record{Source: 5}
		raw, err := c.Next(&rec)
		if err == io.EOF {
			return res, true
		}
		if rec.Line <= line || rec.Source != 5 || !bytes.Contains(in, raw) {
			t.Fatalf("row after line %d: line %d, source %d, raw %q not in the input", line, rec.Line, rec.Source, raw)
		}
		line = rec.Line
		if err != nil {
			if fe := (*auditfmt.FieldError)(nil); !errors.As(err, &fe) {
				t.Fatalf("line %d: %v is not a *FieldError", rec.Line, err)
			}
			res.bad++
			continue
		}
		if err := rec.Validate(); err != nil {
			t.Fatalf("line %d: a record that does not validate was accepted: %v", rec.Line, err)
		}
		rec.Source, rec.Line = 0, 0
		res.recs = append(res.recs, rec)
	}
	t.Fatalf("more rows than bytes in the input: the reader loops")
	return res, false
}

// TestCSVFuzzCorpusLoads fails when the committed seed corpus of FuzzCSV
// is missing or unreadable, so that the fuzz test never silently runs on
// nothing, and checks that enough seeds get past the header to exercise
// the round trip.
func TestCSVFuzzCorpusLoads(t *testing.T) {
	files, err := filepath.Glob("testdata/fuzz/FuzzCSV/*")
	if err != nil {
		t.Fatal(err)
	}
	loaded, withRecords := 0, 0
	for _, name := range files {
		data, err := readFuzzSeed(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		loaded++
		if got, ok := csvReadAllChecked(t, data); ok && len(got.recs) > 0 {
			withRecords++
		}
	}
	if loaded < 10 || withRecords < 5 {
		t.Errorf("loaded %d seeds for FuzzCSV, %d with good records; want at least 10 and 5", loaded, withRecords)
	}
}

// readFuzzSeed reads a corpus file of one []byte value in the
// "go test fuzz v1" format.
func readFuzzSeed(name string) ([]byte, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	header, value, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	value, ok := strings.CutPrefix(value, "[]byte(")
	if header != "go test fuzz v1" || !ok || !strings.HasSuffix(value, ")") {
		return nil, errors.New(`not a "go test fuzz v1" file of one []byte`)
	}
	s, err := strconv.Unquote(strings.TrimSuffix(value, ")"))
	return []byte(s), err
}
