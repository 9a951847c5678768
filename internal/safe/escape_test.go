package safe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"unicode/utf8"
)

// TestEscapeWriter: C1 and bidirectional controls leave as escapes, a
// character split across writes is kept whole, and the JSON still decodes
// to the same text.
func TestEscapeWriter(t *testing.T) {
	doc, _ := json.Marshal(map[string]string{"m": "a\u202eb\u009bc é"})
	var out bytes.Buffer
	w := EscapeWriter(&out, JSONEscape)
	for i := range doc { // a byte at a time: every character split
		w.Write(doc[i : i+1])
	}
	w.Close()
	if bytes.Contains(out.Bytes(), []byte("\u202e")) || bytes.Contains(out.Bytes(), []byte("\u009b")) {
		t.Errorf("controls left raw: %q", out.String())
	}
	var back map[string]string
	if err := json.Unmarshal(out.Bytes(), &back); err != nil || back["m"] != "a\u202eb\u009bc é" {
		t.Errorf("%q decodes to %q, %v", out.String(), back["m"], err)
	}
	out.Reset()
	x := EscapeWriter(&out, XMLEscape)
	x.Write([]byte("<t n=\"a\u202eb\"/>"))
	x.Close()
	if out.String() != `<t n="a&#x202E;b"/>` {
		t.Errorf("XML: %q", out.String())
	}
}

// FuzzEscapeWriter: whatever the bytes and however they are split across
// writes, the output is the input with each control replaced by its
// escape, rune by rune, as a reference that looks at every byte writes it.
func FuzzEscapeWriter(f *testing.F) {
	f.Add([]byte("plain ASCII text, longer than eight bytes"), uint8(3))
	f.Add([]byte("a\u202eb\u009bc é and \u2066 after sixteen bytes"), uint8(5))
	f.Add([]byte("\xff\xfe broken \xc2"), uint8(1))
	f.Fuzz(func(t *testing.T, in []byte, split uint8) {
		var out bytes.Buffer
		w := EscapeWriter(&out, JSONEscape)
		step := int(split%16) + 1
		for i := 0; i < len(in); i += step {
			w.Write(in[i:min(i+step, len(in))])
		}
		w.Close()
		var want []byte
		for i := 0; i < len(in); {
			r, size := utf8.DecodeRune(in[i:])
			if r >= 0x80 && r < 0xa0 || bidi(r) {
				want = fmt.Appendf(want, `\u%04x`, r)
			} else {
				want = append(want, in[i:i+size]...)
			}
			i += size
		}
		if !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("%q in writes of %d: %q, want %q", in, step, out.Bytes(), want)
		}
		if got := Escape(in, JSONEscape); !bytes.Equal(got, want) {
			t.Fatalf("Escape(%q) = %q, want %q", in, got, want)
		} else if bytes.Equal(in, want) && len(in) > 0 && &got[0] != &in[0] {
			t.Fatalf("Escape(%q) copied what it did not change", in)
		}
	})
}

// Escape returns what needs no escape as it is, whatever its script, and
// escapes the rest from the first control on.
func TestEscape(t *testing.T) {
	clean := []byte("p50 ≤ 3 × the median, 東京 · é")
	if got := Escape(clean, JSONEscape); &got[0] != &clean[0] {
		t.Errorf("Escape copied %q, which holds nothing to escape", clean)
	}
	dirty := []byte("× then \u202e, then \u0085.")
	if got, want := string(Escape(dirty, JSONEscape)), `× then \u202e, then \u0085.`; got != want {
		t.Errorf("Escape(%q) = %q, want %q", dirty, got, want)
	}
}
