package auditfmt

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeJSON checks that Decode never panics, that it rejects every
// line json.Valid rejects, that it fails with a syntax error only on lines
// that are not JSON, that what it decodes agrees with encoding/json and
// does not depend on whitespace, and that a decoded record survives
// AppendJSON and Decode unchanged. The seed
// corpus is in testdata/fuzz/FuzzDecodeJSON.
func FuzzDecodeJSON(f *testing.F) {
	f.Fuzz(func(t *testing.T, line []byte) {
		var d Decoder
		var rec Record
		err := d.Decode(line, &rec)
		valid := json.Valid(line)
		if err != nil {
			if _, ok := err.(*FieldError); !ok {
				t.Fatalf("error %#v is not a *FieldError", err)
			}
			if d.hard && valid && utf8.Valid(line) && len(line) <= MaxLineBytes && !strings.HasPrefix(err.Error(), "expected a JSON object") {
				t.Fatalf("syntax error %q on a line json.Valid accepts", err)
			}
			return
		}
		if !valid {
			t.Fatalf("decoded a line json.Valid rejects: %+v", rec)
		}
		checkAgainstStdlib(t, line, &rec)

		// Whitespace between tokens makes no difference.
		var compact bytes.Buffer
		if err := json.Compact(&compact, line); err != nil {
			t.Fatalf("json.Compact: %v", err)
		}
		var same Record
		if err := d.Decode(compact.Bytes(), &same); err != nil || !reflect.DeepEqual(rec, same) {
			t.Fatalf("compacted to %s:\n got %+v, %v\nwant %+v", compact.Bytes(), same, err, rec)
		}

		out := rec.AppendJSON(nil)
		var again Record
		if err := d.Decode(out, &again); err != nil {
			t.Fatalf("decoding AppendJSON's output %s: %v", out, err)
		}
		rec.Envelope, rec.Source, rec.Line = "", 0, 0
		again.Envelope, again.Source, again.Line = "", 0, 0
		if !reflect.DeepEqual(rec, again) {
			t.Fatalf("round trip through %s:\n got %+v\nwant %+v", out, again, rec)
		}
	})
}

// checkAgainstStdlib compares a decoded record with what encoding/json
// makes of the line.
func checkAgainstStdlib(t *testing.T, line []byte, rec *Record) {
	t.Helper()
	var top map[string]any
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	members := top
	if audit, ok := top["audit"].(map[string]any); ok {
		members = audit
		delete(top, "audit")
		compareObject(t, "Envelope", rec.Envelope, top)
	} else if rec.Envelope != "" {
		t.Fatalf("Envelope %s on a flat record", rec.Envelope)
	}
	id, ok := members["client_id"]
	if !ok {
		id = members["device_id"]
	}
	want := map[string]any{
		"client_id":       id,
		"attempt":         json.Number(strconv.FormatInt(rec.Attempt, 10)),
		"outcome":         rec.Outcome.String(),
		"clean_session":   rec.CleanSession,
		"backoff_delay_s": rec.BackoffDelayS,
	}
	got := map[string]any{
		"client_id":       rec.ClientID,
		"attempt":         canonicalInt(members["attempt"]),
		"outcome":         members["outcome"],
		"clean_session":   members["clean_session"],
		"backoff_delay_s": number(t, members["backoff_delay_s"]),
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("encoding/json reads %v, Decode %v", got, want)
	}
	ts, _ := members["recorded_at"].(string)
	if ns, off, err := ParseTimestamp([]byte(ts)); err != nil || ns != rec.RecordedAt || off != rec.OffsetMin {
		t.Fatalf("recorded_at %q: ParseTimestamp gives %d %d %v, Decode %d %d", ts, ns, off, err, rec.RecordedAt, rec.OffsetMin)
	}
	extra := map[string]any{}
	for k, v := range members {
		if wireFieldOf([]byte(k)) == fieldUnknown {
			extra[k] = v
		}
	}
	compareObject(t, "Extra", rec.Extra, extra)
}

// compareObject checks that text, a JSON object or "" for an empty one,
// holds the members want.
func compareObject(t *testing.T, what, text string, want map[string]any) {
	t.Helper()
	got := map[string]any{}
	if text != "" {
		dec := json.NewDecoder(strings.NewReader(text))
		dec.UseNumber()
		if err := dec.Decode(&got); err != nil || len(got) == 0 {
			t.Fatalf("%s %s: %v", what, text, err)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s %s holds %v, encoding/json reads %v", what, text, got, want)
	}
}

func canonicalInt(v any) any {
	n, ok := v.(json.Number)
	if !ok {
		return v
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return v
	}
	return json.Number(strconv.FormatInt(i, 10))
}

func number(t *testing.T, v any) any {
	n, ok := v.(json.Number)
	if !ok {
		return v
	}
	f, err := n.Float64()
	if err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	if f == 0 {
		f = 0 // not -0, as Decode stores it
	}
	return f
}

// TestFuzzCorpusLoads fails if the seed corpus of FuzzDecodeJSON is missing
// or holds a file the fuzzer could not read.
func TestFuzzCorpusLoads(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzDecodeJSON")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		header, value, ok := strings.Cut(string(data), "\n")
		if header != "go test fuzz v1" || !ok || !strings.HasPrefix(value, "[]byte(") {
			t.Errorf("%s is not a go test fuzz v1 file with one []byte", e.Name())
			continue
		}
		if _, err := strconv.Unquote(strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(value, "[]byte(")), ")")); err != nil {
			t.Errorf("%s: %v", e.Name(), err)
		}
		n++
	}
	if n < 15 {
		t.Errorf("%s holds %d seeds, want at least 15", dir, n)
	}
}
