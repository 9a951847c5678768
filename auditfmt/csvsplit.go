package auditfmt

import (
	"bytes"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// csvSplitter splits a row into fields, one physical line at a time.
type csvSplitter struct {
	buf   []byte      // the fields' contents, one after another
	ends  []int       // where each field ends in buf
	state uint8       // where the scan is within the current field
	bad   *FieldError // the first malformation found in the row
	names []string    // the header's column names, for messages
}

const (
	csvFieldStart = iota // before the first byte of a field
	csvUnquoted          // inside a field that is not quoted
	csvQuoted            // inside a quoted field
	csvQuoteSeen         // after a quote inside a quoted field: the end, or the first of ""
)

func (s *csvSplitter) reset() {
	s.buf, s.ends, s.state, s.bad = s.buf[:0], s.ends[:0], csvFieldStart, nil
}

func (s *csvSplitter) count() int { return len(s.ends) }

func (s *csvSplitter) field(i int) []byte {
	start := 0
	if i > 0 {
		start = s.ends[i-1]
	}
	return s.buf[start:s.ends[i]]
}

func (s *csvSplitter) endField() {
	s.ends = append(s.ends, len(s.buf))
	s.state = csvFieldStart
}

func (s *csvSplitter) err() error {
	if s.bad == nil {
		return nil
	}
	return s.bad
}

// scan splits one physical line, without its line break. It reports
// whether the line ends inside a quoted field, so that the row goes on.
func (s *csvSplitter) scan(line []byte) (open bool) {
	for i := 0; i < len(line); {
		switch s.state {
		case csvFieldStart:
			s.state = csvUnquoted
			if line[i] == '"' {
				s.state = csvQuoted
				i++
			}
		case csvUnquoted:
			i = s.scanUnquoted(line, i)
		case csvQuoted:
			j := bytes.IndexByte(line[i:], '"')
			if j < 0 {
				s.buf = append(s.buf, line[i:]...)
				return true
			}
			s.buf = append(s.buf, line[i:i+j]...)
			s.state = csvQuoteSeen
			i += j + 1
		case csvQuoteSeen:
			i = s.scanAfterQuote(line, i)
		}
	}
	if s.state == csvQuoted {
		return true
	}
	s.endField()
	return false
}

// scanUnquoted scans an unquoted field from line[i] up to and including
// the comma that ends it, and returns where to go on.
func (s *csvSplitter) scanUnquoted(line []byte, i int) int {
	for j := i; j < len(line); j++ {
		switch line[j] {
		case ',':
			s.buf = append(s.buf, line[i:j]...)
			s.endField()
			return j + 1
		case '"':
			s.malformed("quotes only around a whole field", "a quote inside unquoted "+s.where())
		}
	}
	s.buf = append(s.buf, line[i:]...)
	return len(line)
}

// scanAfterQuote handles the byte after a quote inside a quoted field.
func (s *csvSplitter) scanAfterQuote(line []byte, i int) int {
	switch line[i] {
	case '"':
		s.buf = append(s.buf, '"')
		s.state = csvQuoted
		return i + 1
	case ',':
		s.endField()
		return i + 1
	}
	r, _ := utf8.DecodeRune(line[i:])
	s.malformed("a comma or the end of the row after a closing quote", strconv.QuoteRune(r)+" in "+s.where())
	s.state = csvUnquoted
	return i
}

// unterminated ends a row whose last quoted field never closed.
func (s *csvSplitter) unterminated() {
	s.malformed("a closing quote", "the end of the input in "+s.where())
	s.endField()
}

func (s *csvSplitter) malformed(expected, found string) {
	if s.bad == nil {
		s.bad = &FieldError{Expected: expected, Found: found}
	}
}

// where names the field being scanned: "field 3 (attempt)".
func (s *csvSplitter) where() string {
	n := len(s.ends)
	if n < len(s.names) {
		return fmt.Sprintf("field %d (%s)", n+1, s.names[n])
	}
	return fmt.Sprintf("field %d", n+1)
}
