package hashchain

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// The seed corpora are committed in testdata/fuzz; go test runs them as
// regression tests.

func FuzzParseCheckpoint(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := ParseCheckpoint(body)
		if err != nil {
			return
		}
		if got := c.Format(); !bytes.Equal(got, body) {
			t.Fatalf("ParseCheckpoint(%q) = %+v, which formats as %q", body, c, got)
		}
	})
}

func FuzzOpenCheckpoint(f *testing.F) {
	_, verifiers := testKeys(f)
	f.Fuzz(func(t *testing.T, msg []byte) {
		c, n, err := OpenCheckpoint(msg, verifiers)
		if err != nil {
			return
		}
		if string(c.Format()) != n.Text || len(n.Sigs) == 0 {
			t.Fatalf("OpenCheckpoint(%q) = %+v, %+v", msg, c, n)
		}
	})
}

func FuzzCanonicalJSON(f *testing.F) {
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := AppendCanonicalJSON(nil, in)
		if err != nil {
			return
		}
		if !json.Valid(in) {
			t.Fatalf("canonicalised invalid JSON %q to %q", in, out)
		}
		if !json.Valid(out) {
			t.Fatalf("canonical form %q of %q is not JSON", out, in)
		}
		again, err := AppendCanonicalJSON(nil, out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", in, out, again, err)
		}
		var a, b any
		if err := json.Unmarshal(in, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &b); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%q and its canonical form %q differ: %v, %v", in, out, a, b)
		}
	})
}

func FuzzRecordBytes(f *testing.F) {
	f.Fuzz(func(t *testing.T, extra, envelope string) {
		r := baseRecord()
		r.Extra, r.Envelope = extra, envelope
		R, err := AppendRecordBytes(nil, &r)
		if err != nil {
			if _, ok := err.(*auditfmt.FieldError); !ok {
				t.Fatalf("error %T %v is not a FieldError", err, err)
			}
			return
		}
		again, err := AppendCanonicalJSON(nil, R)
		if err != nil || !bytes.Equal(again, R) {
			t.Fatalf("R %q is not canonical: %q, %v", R, again, err)
		}
	})
}

func TestFuzzCorpora(t *testing.T) {
	for _, name := range []string{"FuzzParseCheckpoint", "FuzzOpenCheckpoint", "FuzzCanonicalJSON", "FuzzRecordBytes"} {
		files, err := os.ReadDir(filepath.Join("testdata", "fuzz", name))
		if err != nil || len(files) == 0 {
			t.Errorf("no seed corpus for %s in testdata/fuzz/%s: %v", name, name, err)
		}
	}
}
