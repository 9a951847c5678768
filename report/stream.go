package report

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
)

// jsonStream writes an indented JSON document piece by piece, as
// json.Encoder with SetIndent("", "  ") writes it whole, so that a list
// of findings is encoded one at a time: memory holds one, not them all.
type jsonStream struct {
	w   *bufio.Writer
	err error
}

func newJSONStream(w io.Writer) *jsonStream { return &jsonStream{w: bufio.NewWriterSize(w, 1<<16)} }

// raw writes s as it is.
func (s *jsonStream) raw(str string) {
	if s.err == nil {
		_, s.err = s.w.WriteString(str)
	}
}

// bytes writes b as it is.
func (s *jsonStream) bytes(b []byte) {
	if s.err == nil {
		_, s.err = s.w.Write(b)
	}
}

// value writes v indented for depth levels of nesting.
func (s *jsonStream) value(v any, depth int) {
	if s.err != nil {
		return
	}
	var b []byte
	b, s.err = json.MarshalIndent(v, strings.Repeat("  ", depth), "  ")
	if s.err == nil {
		_, s.err = s.w.Write(b)
	}
}

// list writes a JSON array of n elements at depth, element i written by
// each(i) at depth+1.
func (s *jsonStream) list(n, depth int, each func(i int)) {
	s.raw("[")
	for i := range n {
		if i > 0 {
			s.raw(",")
		}
		s.raw("\n" + strings.Repeat("  ", depth+1))
		each(i)
	}
	if n > 0 {
		s.raw("\n" + strings.Repeat("  ", depth))
	}
	s.raw("]")
}

// close flushes what was written and returns the first error.
func (s *jsonStream) close() error {
	if s.err == nil {
		s.err = s.w.Flush()
	}
	return s.err
}
