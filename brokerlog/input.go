package brokerlog

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
)

// A record is one unit of the input: a line, or an element of a JSON
// array.
type record struct {
	line   int    // 1-based line it starts on
	text   []byte // its bytes (a line without its newline and trailing \r), at most MaxLineBytes
	length int    // its full length in bytes
	fault  string // set when the reader itself rejects it (too long, cut short)
	blank  bool   // a line holding only white space
}

// source yields an input's records in order.
type source interface {
	// next returns the next record, or ok false at the end of the input
	// (err says why, when it is not the end).
	next() (rec record, ok bool, err error)
	// where returns the line being read.
	where() int
}

// lineSource yields the lines of r.
type lineSource struct {
	r    *bufio.Reader
	line int
	err  error
}

func (s *lineSource) where() int { return s.line + 1 }

func (s *lineSource) next() (record, bool, error) {
	if s.err != nil {
		return record{}, false, ignoreEOF(s.err)
	}
	text, full, err := readLine(s.r)
	if err != nil {
		s.err = err
		if len(text) == 0 && full == 0 {
			return record{}, false, ignoreEOF(err)
		}
	}
	s.line++
	rec := record{line: s.line, text: text, length: full}
	switch {
	case full > MaxLineBytes:
		rec.fault = "expected a line of at most " + strconv.Itoa(MaxLineBytes) + " bytes, found " + strconv.Itoa(full)
	case len(bytes.TrimSpace(text)) == 0:
		rec.blank = true
	}
	return rec, true, nil
}

func ignoreEOF(err error) error {
	if err == io.EOF {
		return nil
	}
	return err
}

// readLine returns the next line without its newline (\n or \r\n), and
// its full length (without it). A line longer than MaxLineBytes is
// cut there; the rest of it is read and counted, never taken for another
// line. At the end of the input err is io.EOF (with the last line, if it
// had no newline).
func readLine(r *bufio.Reader) (line []byte, full int, err error) {
	var last, beforeLast byte // the last two bytes read
	for {
		s, e := r.ReadSlice('\n')
		if keep := MaxLineBytes + 2 - len(line); keep > 0 { // room for a \r\n after a line at the limit
			line = append(line, s[:min(len(s), keep)]...)
		}
		full += len(s)
		switch len(s) {
		case 0:
		case 1:
			beforeLast, last = last, s[0]
		default:
			beforeLast, last = s[len(s)-2], s[len(s)-1]
		}
		if !errors.Is(e, bufio.ErrBufferFull) {
			err = e
			break
		}
	}
	if err == nil { // the line ends with its newline, and perhaps \r\n
		full--
		if full > 0 && beforeLast == '\r' {
			full--
		}
	}
	return line[:min(len(line), full, MaxLineBytes)], full, err
}

// arraySource yields the elements of a JSON array, one record each. It
// does not check their syntax (the decoder does): it follows strings and
// brackets only to find where each element ends, so that a bad element
// is one reject and the next one is still read.
type arraySource struct {
	r    *bufio.Reader
	line int  // line of the next byte
	open bool // the array's '[' has been read
	done bool
	err  error
}

func (s *arraySource) where() int { return s.line }

func (s *arraySource) next() (record, bool, error) {
	if s.done {
		return record{}, false, ignoreEOF(s.err)
	}
	if !s.open {
		if c, ok := s.skipSpace(false); !ok || c != '[' {
			s.done = true
			return record{line: s.line, fault: "expected a JSON array"}, true, nil
		}
		s.open = true
	}
	c, ok := s.skipSpace(true)
	if !ok {
		s.done = true
		if s.err != io.EOF {
			return record{}, false, s.err
		}
		return record{line: s.line, fault: "expected ']' to close the JSON array, found the end of the input"}, true, nil
	}
	if c == ']' {
		s.done = true
		if c, ok := s.skipSpace(false); ok {
			// anything after the array is one reject
			rec := record{line: s.line}
			rec.text = append(rec.text, c)
			rec.length = 1
			s.rest(&rec)
			rec.fault = "expected nothing after the JSON array"
			return rec, true, nil
		}
		if s.err != io.EOF {
			return record{}, false, s.err
		}
		return record{}, false, nil
	}
	rec := record{line: s.line}
	s.element(c, &rec)
	if s.err != nil && s.err != io.EOF {
		return record{}, false, s.err
	}
	return rec, true, nil
}

// readByte reads one byte, counting lines.
func (s *arraySource) readByte() (byte, bool) {
	c, err := s.r.ReadByte()
	if err != nil {
		s.err = err
		return 0, false
	}
	if c == '\n' {
		s.line++
	}
	return c, true
}

// skipSpace returns the next byte that is not JSON white space (nor a
// comma, when commas is set).
func (s *arraySource) skipSpace(commas bool) (byte, bool) {
	for {
		c, ok := s.readByte()
		if !ok {
			return 0, false
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case ',':
			if commas {
				continue
			}
		}
		return c, true
	}
}

// element reads the element that starts with c.
func (s *arraySource) element(c byte, rec *record) {
	add := func(c byte) {
		rec.length++
		if len(rec.text) < MaxLineBytes {
			rec.text = append(rec.text, c)
		}
	}
	add(c)
	if c != '{' && c != '[' && c != '"' { // a scalar: up to the next separator
		for {
			c, err := s.r.ReadByte()
			if err != nil {
				s.err = err
				break
			}
			if c == ',' || c == ']' || c == ' ' || c == '\t' || c == '\r' || c == '\n' {
				_ = s.r.UnreadByte()
				break
			}
			add(c)
		}
		s.check(rec)
		return
	}
	depth, inString, escaped := 1, c == '"', false
	if inString {
		depth = 0
	}
	for depth > 0 || inString {
		c, ok := s.readByte()
		if !ok {
			rec.fault = "expected the element to end, found the end of the input"
			s.done = true
			return
		}
		add(c)
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		}
	}
	s.check(rec)
}

// check sets the fault of a record over the length limit.
func (s *arraySource) check(rec *record) {
	if rec.length > MaxLineBytes {
		rec.fault = "expected an element of at most " + strconv.Itoa(MaxLineBytes) + " bytes, found " + strconv.Itoa(rec.length)
	}
}

// rest reads the rest of the input into rec.
func (s *arraySource) rest(rec *record) {
	for {
		c, ok := s.readByte()
		if !ok {
			return
		}
		rec.length++
		if len(rec.text) < MaxLineBytes {
			rec.text = append(rec.text, c)
		}
	}
}

// firstByte returns the first byte of r's content that is not white
// space, looking no further than r's buffer can hold; 0 if there is none
// there. It asks r for no more than it needs, so that a slow stream is
// not waited on for a whole buffer.
func firstByte(r *bufio.Reader) byte {
	seen := 0
	for {
		b, err := r.Peek(min(max(r.Buffered(), seen+1), r.Size()))
		for ; seen < len(b); seen++ {
			switch b[seen] {
			case ' ', '\t', '\r', '\n':
				continue
			}
			return b[seen]
		}
		if err != nil || seen >= r.Size() {
			return 0
		}
	}
}
