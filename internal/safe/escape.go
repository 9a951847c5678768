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
	whole := len(p)
	for k := len(p) - 1; k >= 0 && k >= len(p)-utf8.UTFMax; k-- {
		if utf8.RuneStart(p[k]) {
			if !utf8.FullRune(p[k:]) {
				whole = k // a character split across writes
			}
			break
		}
	}
	if whole < len(p) {
		e.carry = append([]byte(nil), p[whole:]...)
		p = p[:whole]
	}
	out := p
	if i := firstEscaped(p); i < len(p) {
		e.buf = AppendEscaped(append(e.buf[:0], p[:i]...), p[i:], e.format)
		out = e.buf
	}
	if _, err := e.w.Write(out); err != nil {
		return 0, err
	}
	return n, nil
}

// Escape returns p with the characters EscapeWriter escapes written in
// the notation of format: p itself when it holds none (as a report in
// any script mostly does), else a new slice. p holds whole characters,
// as for AppendEscaped.
func Escape(p []byte, format int) []byte {
	i := firstEscaped(p)
	if i == len(p) {
		return p
	}
	return AppendEscaped(append(make([]byte, 0, len(p)+len(p)/64), p[:i]...), p[i:], format)
}

// firstEscaped returns the index in p of the first character
// EscapeWriter escapes, len(p) if none.
func firstEscaped(p []byte) int {
	for i := 0; i < len(p); {
		if j := i + asciiPrefix(p[i:]); j > i {
			i = j
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		if r >= 0x80 && r < 0xa0 || bidi(r) {
			return i
		}
		i += size
	}
	return len(p)
}

// AppendEscaped appends p to dst with the characters EscapeWriter
// escapes written in the notation of format, and returns the result. p
// holds whole characters: a character cut at its end is appended as it
// is, as is invalid UTF-8.
func AppendEscaped(dst, p []byte, format int) []byte {
	for i := 0; i < len(p); {
		if j := i + asciiPrefix(p[i:]); j > i {
			dst = append(dst, p[i:j]...)
			i = j
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		if r >= 0x80 && r < 0xa0 || bidi(r) {
			if format == XMLEscape {
				dst = fmt.Appendf(dst, "&#x%04X;", r)
			} else {
				dst = fmt.Appendf(dst, `\u%04x`, r)
			}
		} else {
			dst = append(dst, p[i:i+size]...)
		}
		i += size
	}
	return dst
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
