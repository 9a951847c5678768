package safe

import (
	"bytes"
	"encoding/json"
	"testing"
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
