package jsonstr

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzScan holds Scan and AppendUnescaped to encoding/json: a string Scan
// accepts without flags is one json.Valid accepts and unescapes to what
// json.Unmarshal makes of it (where it is UTF-8), and where Scan finds no
// string, json.Valid finds none either. The flags only take away: UTF8
// exactly the strings that are not UTF-8, NoLoneSurrogates only strings
// with a surrogate that unescapes to U+FFFD. Neither panics on any input,
// and a string and a []byte give the same results. The seed corpus is in
// testdata/fuzz/FuzzScan.
func FuzzScan(f *testing.F) {
	seedCorpus(f, "FuzzScan")
	f.Fuzz(func(t *testing.T, text []byte) {
		tok := append([]byte{'"'}, text...) // a string token starts here
		end, escaped, err := Scan(tok, 0, 0)
		for _, fl := range []Flags{0, UTF8, NoLoneSurrogates, UTF8 | NoLoneSurrogates} {
			checkSame(t, tok, fl)
		}
		if err != nil {
			checkError(t, tok, err)
			for k := 2; k <= len(tok); k++ {
				if tok[k-1] == '"' && json.Valid(tok[:k]) {
					t.Fatalf("Scan(%q) = %v, but json.Valid accepts %q", tok, err, tok[:k])
				}
			}
			return
		}
		str, body := tok[:end], tok[1:end-1]
		if !json.Valid(str) {
			t.Fatalf("Scan(%q) accepts %q, json.Valid does not", tok, str)
		}
		if escaped != bytes.ContainsRune(body, '\\') {
			t.Fatalf("Scan(%q) says escaped %v", str, escaped)
		}
		got := AppendUnescaped(nil, body)
		if s := AppendUnescaped(nil, string(body)); !bytes.Equal(s, got) {
			t.Fatalf("AppendUnescaped(%q): %q from a []byte, %q from a string", body, got, s)
		}
		var want string
		if err := json.Unmarshal(str, &want); err != nil {
			t.Fatalf("json.Unmarshal(%q): %v", str, err)
		}
		valid := utf8.Valid(str)
		if valid && string(got) != want {
			t.Fatalf("AppendUnescaped(%q) = %q, json.Unmarshal makes %q", body, got, want)
		}

		uend, _, uerr := Scan(tok, 0, UTF8)
		if valid != (uerr == nil) || valid && uend != end {
			t.Fatalf("Scan(%q, UTF8) = %d, %v; the string is UTF-8: %v", tok, uend, uerr, valid)
		}
		send, _, serr := Scan(tok, 0, NoLoneSurrogates)
		switch {
		case serr == nil && send != end:
			t.Fatalf("Scan(%q, NoLoneSurrogates) ends at %d, not %d", tok, send, end)
		case serr != nil && serr.Kind != LoneSurrogate:
			t.Fatalf("Scan(%q, NoLoneSurrogates) = %v on a string Scan accepts", tok, serr)
		case serr != nil:
			if u := AppendUnescaped(nil, tok[serr.Offset:serr.Offset+6]); string(u) != "\uFFFD" {
				t.Fatalf("Scan(%q, NoLoneSurrogates) = %v, but the escape there unescapes to %q", tok, serr, u)
			}
		case valid && !spellsFFFD(body) && strings.ContainsRune(want, utf8.RuneError):
			t.Fatalf("Scan(%q, NoLoneSurrogates) accepts a string that json.Unmarshal makes %q", tok, want)
		}
	})
}

// checkSame: Scan gives the same in a []byte and in a string.
func checkSame(t *testing.T, tok []byte, fl Flags) {
	t.Helper()
	end, escaped, err := Scan(tok, 0, fl)
	send, sescaped, serr := Scan(string(tok), 0, fl)
	if send != end || sescaped != escaped || (serr == nil) != (err == nil) || err != nil && *serr != *err {
		t.Fatalf("Scan(%q, %b) = %d, %v, %v; from a string %d, %v, %v", tok, fl, end, escaped, err, send, sescaped, serr)
	}
	if err != nil {
		checkError(t, tok, err)
	}
}

// checkError: an error's offsets are in the text, and where they say.
func checkError(t *testing.T, tok []byte, err *Error) {
	t.Helper()
	if err.Offset < 1 || err.Offset > len(tok) {
		t.Fatalf("Scan(%q): %+v, offset out of range", tok, err)
	}
	switch err.Kind {
	case BadEscape, BadHex, LoneSurrogate:
		if tok[err.Escape] != '\\' {
			t.Fatalf("Scan(%q): %+v, no backslash at Escape", tok, err)
		}
	case Unterminated:
		if err.Offset != len(tok) {
			t.Fatalf("Scan(%q): %+v, not at the end", tok, err)
		}
	case Control:
		if tok[err.Offset] >= 0x20 {
			t.Fatalf("Scan(%q): %+v, no control character there", tok, err)
		}
	case BadUTF8:
		if r, n := utf8.DecodeRune(tok[err.Offset:]); r != utf8.RuneError || n != 1 {
			t.Fatalf("Scan(%q): %+v, but %q is UTF-8", tok, err, r)
		}
	default:
		t.Fatalf("Scan(%q): %+v, no such kind", tok, err)
	}
}

// spellsFFFD reports whether body might spell U+FFFD itself, as the
// character or as an escape, so that a U+FFFD in its value need not come
// from a lone surrogate.
func spellsFFFD(body []byte) bool {
	return bytes.ContainsRune(body, utf8.RuneError) || bytes.Contains(bytes.ToLower(body), []byte("fffd"))
}

// seedCorpus fails f when the committed seed corpus of target is
// missing, so that its seeds are not silently skipped.
func seedCorpus(f *testing.F, target string) {
	f.Helper()
	if files, _ := filepath.Glob(filepath.Join("testdata", "fuzz", target, "*")); len(files) == 0 {
		f.Fatalf("no seed corpus in testdata/fuzz/%s", target)
	}
}
