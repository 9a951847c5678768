package safe

import (
	"encoding/binary"
	"fmt"
	"io"
	"unicode/utf8"
)

// The notations EscapeWriter writes a character in.
const (
	JSONEscape = iota // \uHHHH, inside a JSON string
	XMLEscape         // &#xHHHH;, in XML text or an attribute
)

// EscapeWriter returns a writer that passes what it is given on to w with
// every C1 control (U+0080 to U+009F) and bidirectional control
// (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069) written
// in the notation of format: the same text to a parser, but nothing a
// viewer of the file (a terminal, an editor, GitHub's code view) acts on.
// Those characters occur only inside the strings of a JSON or XML
// document, so the document stays what it was. Close flushes a character
// split across writes.
func EscapeWriter(w io.Writer, format int) io.WriteCloser {
	return &escaper{w: w, format: format}
}

type escaper struct {
	w      io.Writer
	format int
	carry  []byte // the start of a character the last write split
	buf    []byte
}

func (e *escaper) Write(p []byte) (int, error) {
	n := len(p)
	if len(e.carry) > 0 {
		p = append(e.carry, p...)
		e.carry = nil
	}
	out := e.buf[:0]
	for i := 0; i < len(p); {
		if j := i + asciiPrefix(p[i:]); j > i {
			out = append(out, p[i:j]...)
			i = j
			continue
		}
		if !utf8.FullRune(p[i:]) {
			e.carry = append([]byte(nil), p[i:]...)
			break
		}
		r, size := utf8.DecodeRune(p[i:])
		if r >= 0x80 && r < 0xa0 || bidi(r) {
			if e.format == XMLEscape {
				out = fmt.Appendf(out, "&#x%04X;", r)
			} else {
				out = fmt.Appendf(out, `\u%04x`, r)
			}
		} else {
			out = append(out, p[i:i+size]...)
		}
		i += size
	}
	e.buf = out
	if _, err := e.w.Write(out); err != nil {
		return 0, err
	}
	return n, nil
}

// asciiPrefix returns the length of the ASCII bytes p begins with, eight
// at a time: most of a report is ASCII.
func asciiPrefix(p []byte) int {
	i := 0
	for ; i+8 <= len(p); i += 8 {
		if binary.LittleEndian.Uint64(p[i:])&0x8080808080808080 != 0 {
			break
		}
	}
	for i < len(p) && p[i] < utf8.RuneSelf {
		i++
	}
	return i
}

// Close writes what is left of a split character as it was.
func (e *escaper) Close() error {
	if len(e.carry) == 0 {
		return nil
	}
	_, err := e.w.Write(e.carry)
	e.carry = nil
	return err
}
