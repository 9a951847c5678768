package auditfmt

import (
	"bytes"
	"strings"
)

// A keySet holds the member names of one object, to find duplicates. It
// compares linearly while it is small.
type keySet struct {
	buf  []byte // the names, one after another
	ends []int  // where each name in buf ends
	big  map[string]struct{}
}

// keySetSmall is how many names a keySet compares linearly.
const keySetSmall = 16

func (s *keySet) reset() {
	s.buf, s.ends = s.buf[:0], s.ends[:0]
	if len(s.big) > 0 {
		clear(s.big)
	}
}

// add adds name and reports whether it was there already.
func (s *keySet) add(name []byte) (dup bool) {
	if len(s.ends) < keySetSmall {
		start := 0
		for _, end := range s.ends {
			if bytes.Equal(s.buf[start:end], name) {
				return true
			}
			start = end
		}
		s.buf = append(s.buf, name...)
		s.ends = append(s.ends, len(s.buf))
		return false
	}
	if s.big == nil {
		s.big = make(map[string]struct{})
	}
	if len(s.big) == 0 {
		start := 0
		for _, end := range s.ends {
			s.big[string(s.buf[start:end])] = struct{}{}
			start = end
		}
	}
	if _, ok := s.big[string(name)]; ok {
		return true
	}
	s.big[string(name)] = struct{}{}
	return false
}

// appendMember appends `"raw":value` to an object under construction in
// dst ("{" or "{...,"), with the whitespace outside strings taken out of
// value.
func appendMember(dst, raw, value []byte) []byte {
	if len(dst) == 0 {
		dst = append(dst, '{')
	} else {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, raw...)
	dst = append(dst, '"', ':')
	return appendCompact(dst, value)
}

// appendCompact appends the JSON value v, which is known to be valid, with
// the whitespace outside its strings taken out.
func appendCompact(dst, v []byte) []byte {
	inString, start := false, 0
	for j := 0; j < len(v); j++ {
		c := v[j]
		switch {
		case inString && c == '\\':
			j++
		case inString:
			inString = c != '"'
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			dst = append(dst, v[start:j]...)
			start = j + 1
		}
	}
	return append(dst, v[start:]...)
}

// What the enum fields hold, worded as Record.Validate words it.
var (
	outcomeExpected = "one of " + strings.Join(outcomeNames[1:], ", ")
	failureExpected = "one of " + strings.Join(failureNames[1:], ", ")
)

const (
	timestampExpected   = "an RFC 3339 timestamp with a UTC offset, like 2026-11-30T14:17:34.979964+00:00"
	auditExpected       = "a JSON object (the record carried by a logging envelope)"
	nestedAuditExpected = "a record without an \"audit\" member (envelopes do not nest)"
)
