package redact

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzSeeds are the JSON texts every fuzz target starts from, besides
// the corpus in testdata/fuzz.
var fuzzSeeds = []string{
	`{"fw":"1.4.2","rssi":-71}`,
	`{"mqtt":{"password":"hunter2","url":"mqtt://dev:s3cr3t@broker:1883"}}`,
	`{"mac":"aa:bb:cc:dd:ee:ff","alt":"AA-BB-CC-DD-EE-FF","cisco":"aabb.ccdd.eeff"}`,
	`{"auth":"Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJkZXYtMSJ9.c2lnbmF0dXJlLWJ5dGVz"}`,
	`{"hdr":"Basic dXNlcjpwYXNzd29yZA=="}`,
	`{"cert":"-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUW1\n-----END CERTIFICATE-----"}`,
	`{"pass\u0077ord":5,"list":[{"token":{"a":1}},"aa:bb:cc:dd:ee:ff"]}`,
	`{"devices":{"aa:bb:cc:dd:ee:ff":"online"},"ts":"15:17:10","ip":"fe80::1"}`,
	`{"x":"\u0000\ud800\"\\","y":[1,2.5e3,-0,true,false,null,{},[]]}`,
	`{"api_key":"","secret":null,"token":true,"pwd":"***"}`,
	`"dev-aa:bb:cc:dd:ee:ff"`,
	`{"a":"mqtt://aa:bb:cc:dd:ee:ff:pw@h"}`,
	`not json: password mqtt://u:p@h`,
}

func FuzzScanJSON(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w := walker{src: s}
		if got, want := w.root(), json.Valid([]byte(s)); got != want {
			t.Fatalf("valid = %v, json.Valid = %v", got, want)
		}
		ScanJSON("extra", s, func(h Hit) {
			if h.Kind < Password || h.Kind > MAC {
				t.Fatalf("hit of kind %v", h.Kind)
			}
		})
	})
}

func FuzzRedactJSON(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	r := New([]byte("fuzz"))
	f.Fuzz(func(t *testing.T, s string) {
		hits := 0
		ScanJSON("extra", s, func(Hit) { hits++ })
		before := total(r)
		out := r.JSON("extra", s)
		// A replacement can expose a new match, which is replaced and
		// counted too (see the package documentation).
		if n := total(r) - before; n < hits || hits == 0 && n != 0 {
			t.Errorf("counted %d replacements, ScanJSON reports %d hits", n, hits)
		}
		if hits == 0 && out != s {
			t.Errorf("nothing to replace, but output %q differs", out)
		}
		valid := json.Valid([]byte(s))
		if valid && !json.Valid([]byte(out)) {
			t.Fatalf("invalid output %q", out)
		}
		rescan := func(h Hit) { t.Errorf("redacted %q still has %v at %s", out, h.Kind, h.Field) }
		if valid {
			ScanJSON("extra", out, rescan)
		} else {
			Scan("extra", out, rescan)
		}
		if again := r.JSON("extra", out); valid && again != out {
			t.Errorf("redacting twice: %q, then %q", out, again)
		}
	})
}

func FuzzRedactText(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	r := New([]byte("fuzz"))
	f.Fuzz(func(t *testing.T, s string) {
		out := r.Text(s)
		Scan("", out, func(h Hit) { t.Errorf("redacted %q still has %v", out, h.Kind) })
		if again := r.Text(out); again != out {
			t.Errorf("redacting twice: %q, then %q", out, again)
		}
	})
}

func total(r *Redactor) int {
	n := 0
	for _, c := range r.Replaced() {
		n += c.Values
	}
	return n
}

// fragments are the pieces of TestRedactComposed's values: the shapes, the
// bytes at their edges, and pseudonyms, which together make the
// neighbourhoods random mutation seldom finds.
var fragments = []string{
	"aa:bb:cc:dd:ee:ff", "AA-BB-CC-DD-EE-FF", "aabb.ccdd.eeff", "00:11:22:33:44:55",
	":", "-", ".", " ", "@", "/", "//", "://", "mqtt://", "u", "user", "pw", "cafe",
	"dev", "mac", "ff", "12", "Bearer ", "Basic ", "bearer", "dXNlcjpwYXNz",
	"abcdEFGH12345678xyz", "eyJhbGciOiJIUzI1NiJ9", "eyJzdWIiOiIxIn0",
	"c2lnbmF0dXJlLWJ5dGVz", "eyJ", "-----BEGIN CERTIFICATE-----",
	"-----END CERTIFICATE-----", "MIIBszCCAVmgAwIBAgIUW1", "\n", "\\", "=", "==",
	"secret-0123456789abcdef", "mac-0123456789012345", "_", "x", "0", "a", "-----",
	"BEGIN ", "END ", "password", "?", "#", "\"", "+", "~", "jwt-", "pem-",
}

// TestRedactComposed redacts values made of random fragments, as free
// text and in JSON, and checks that nothing is left to find and that
// redacting again changes nothing.
func TestRedactComposed(t *testing.T) {
	n := 100000
	if testing.Short() {
		n = 10000
	}
	rng := rand.New(rand.NewPCG(7, 9))
	r := New([]byte("composed"))
	for range n {
		var b strings.Builder
		for range 1 + rng.IntN(8) {
			b.WriteString(fragments[rng.IntN(len(fragments))])
		}
		s := b.String()
		out := r.Text(s)
		Scan("", out, func(h Hit) { t.Fatalf("Text(%q) = %q still has %v", s, out, h.Kind) })
		if again := r.Text(out); again != out {
			t.Fatalf("Text twice: %q, then %q, then %q", s, out, again)
		}
		js, _ := json.Marshal(map[string]string{s: s, "password": s})
		jo := r.JSON("extra", string(js))
		if !json.Valid([]byte(jo)) {
			t.Fatalf("JSON(%s) = %s is not valid", js, jo)
		}
		ScanJSON("extra", jo, func(h Hit) { t.Fatalf("JSON(%s) = %s still has %v at %s", js, jo, h.Kind, h.Field) })
	}
}

// TestFuzzCorpusLoads fails when a fuzz target's committed corpus is
// missing, so that the regression seeds are not silently skipped.
func TestFuzzCorpusLoads(t *testing.T) {
	for _, target := range []string{"FuzzScanJSON", "FuzzRedactJSON", "FuzzRedactText"} {
		files, err := filepath.Glob(filepath.Join("testdata", "fuzz", target, "*"))
		if err != nil || len(files) == 0 {
			t.Errorf("%s: no corpus in testdata/fuzz (%v)", target, err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil || !strings.HasPrefix(string(b), "go test fuzz v1\n") {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
}
