package redact

import (
	"strings"
	"unicode/utf8"

	"github.com/stormaudit/stormaudit/internal/jsonstr"
)

// maxDepth is encoding/json's nesting limit: JSON nested deeper is not
// valid to json.Valid, so it is not valid here either.
const maxDepth = 10000

// ScanJSON reports the hits in a JSON value, normally an object such as a
// record's extra or envelope; field is its column name, and the root of
// every hit's path. A member whose name is a credential key
// (IsCredentialKey) and whose value is a credential (not null, true,
// false, "", {}, [], a string of asterisks or a pseudonym) is one Password
// hit, and its value is not looked into; every other string, and every
// member name, is scanned for value patterns. A value that is not valid
// JSON (as json.Valid has it) is scanned as a plain string, with Scan.
// ScanJSON does not allocate unless it reports a hit or meets a string
// with escapes.
func ScanJSON(field, object string, fn func(Hit)) {
	// The first pass finds whether the text is valid and has a hit; only
	// then does a second report the hits, so that a text found invalid
	// half way is not reported twice.
	check := walker{src: object, field: field}
	if !check.root() {
		Scan(field, object, fn)
		return
	}
	if check.hit {
		w := walker{src: object, field: field, report: fn}
		w.root()
	}
}

// A step is one step of the path to where a walker is: a member, whose
// raw name is src[start:end], or an array element. The steps are kept as
// offsets, so that keeping them costs no allocation.
type step struct {
	start, end int32
	flags      uint8
}

const (
	stepElem    = 1 << iota // an array element: "[]"
	stepEscaped             // a member name with escapes
	stepStar                // a member name with a value-pattern match: "*"
)

// inlineSteps is how deep a path the walker keeps without allocating.
const inlineSteps = 16

// A walker reads one JSON text strictly, reporting the hits in it to
// report, or noting in hit that there is one, and, when emit is set (on
// a second pass over a text the first found valid), writing it compactly
// to out with every hit replaced, counting the replacements in counts.
type walker struct {
	src    string
	field  string
	pos    int
	report func(Hit)
	hit    bool
	skip   bool
	emit   bool
	out    []byte
	r      *Redactor
	counts []countKey

	steps [inlineSteps]step
	more  []step // the steps after the first inlineSteps
	depth int    // the number of steps
}

func (w *walker) push(s step) {
	if w.depth < inlineSteps {
		w.steps[w.depth] = s
	} else {
		w.more = append(w.more[:w.depth-inlineSteps], s)
	}
	w.depth++
}

func (w *walker) pop() { w.depth-- }

func (w *walker) step(i int) step {
	if i < inlineSteps {
		return w.steps[i]
	}
	return w.more[i-inlineSteps]
}

// maxPath bounds a path's length: a path is for a person and a count, and
// a hostile text could otherwise make each of many hits carry a path as
// long as the text.
const maxPath = 256

// path returns the path to where the walker is: the field, then ".NAME"
// for each member ("*" for a name with a value-pattern match) and "[]"
// for each array element; without the '.' before the first name when the
// field is "". A path longer than maxPath bytes is cut at a character
// boundary there and ends in "…".
func (w *walker) path() string {
	b := make([]byte, 0, min(maxPath+8, len(w.field)+16*w.depth))
	b = append(b, w.field...)
	cut := len(b) > maxPath
	for i := 0; i < w.depth && !cut; i++ {
		s := w.step(i)
		switch {
		case s.flags&stepElem != 0:
			b = append(b, "[]"...)
			cut = len(b) > maxPath
			continue
		case len(b) > 0:
			b = append(b, '.')
		}
		raw := w.src[s.start:s.end]
		name := cutRaw(raw, maxPath+8)
		switch {
		case s.flags&stepStar != 0:
			b = append(b, '*')
		case s.flags&stepEscaped != 0:
			b = append(b, unescape(name)...)
		default:
			b = append(b, name...)
		}
		cut = len(name) < len(raw) && s.flags&stepStar == 0 || len(b) > maxPath
	}
	if cut {
		n := min(len(b), maxPath)
		for n > 0 && n < len(b) && !utf8.RuneStart(b[n]) {
			n--
		}
		b = append(b[:n], "…"...)
	}
	return string(b)
}

// cutRaw returns at most the first limit bytes of raw, the contents of a
// valid JSON string, without cutting an escape.
func cutRaw(raw string, limit int) string {
	if len(raw) <= limit {
		return raw
	}
	i := 0
	for i < len(raw) {
		n := 1
		if raw[i] == '\\' {
			n = 2
			if raw[i+1] == 'u' {
				n = 6
			}
		}
		if i+n > limit {
			break
		}
		i += n
	}
	return raw[:i]
}

// root reads the whole text as one value under the name field, and
// reports whether it is valid JSON.
func (w *walker) root() bool {
	w.space()
	if !w.value(w.field, true, 0) {
		return false
	}
	w.space()
	return w.pos == len(w.src)
}

func (w *walker) space() {
	for w.pos < len(w.src) {
		switch w.src[w.pos] {
		case ' ', '\t', '\n', '\r':
			w.pos++
		default:
			return
		}
	}
}

// value reads one value, whose member name is key (keyed is false for
// array elements).
func (w *walker) value(key string, keyed bool, depth int) bool {
	if keyed && !w.skip && IsCredentialKey(key) {
		start := w.pos
		if !w.skipValue(depth) {
			return false
		}
		raw := w.src[start:w.pos]
		if !isCredentialValue(raw) {
			if w.emit {
				w.out = appendCompact(w.out, raw)
			}
			return true
		}
		w.found(Password)
		if w.emit {
			w.out = append(w.out, '"')
			w.out = append(w.out, w.r.pseudonym(Password, credentialText(raw))...)
			w.out = append(w.out, '"')
		}
		return true
	}
	if w.pos >= len(w.src) {
		return false
	}
	switch c := w.src[w.pos]; {
	case c == '{':
		return w.object(depth + 1)
	case c == '[':
		return w.array(depth + 1)
	case c == '"':
		raw, esc, ok := w.str()
		if !ok {
			return false
		}
		if w.scanning() {
			s := raw
			if esc {
				s = unescape(raw)
			}
			w.text(raw, s)
		}
		return true
	default:
		start := w.pos
		if !w.scalar() {
			return false
		}
		if w.emit {
			w.out = append(w.out, w.src[start:w.pos]...)
		}
		return true
	}
}

func (w *walker) object(depth int) bool {
	if depth > maxDepth {
		return false
	}
	if w.open('{', '}') {
		return true // empty
	}
	for {
		if w.pos >= len(w.src) || w.src[w.pos] != '"' {
			return false
		}
		start := w.pos + 1
		raw, esc, ok := w.str()
		if !ok {
			return false
		}
		name := raw
		s := step{start: int32(start), end: int32(start + len(raw))}
		if esc {
			name = unescape(raw)
			s.flags |= stepEscaped
		}
		if w.scanning() && hasSpan(name) {
			s.flags |= stepStar
		}
		w.push(s)
		if w.scanning() {
			w.text(raw, name)
		}
		w.space()
		if w.pos >= len(w.src) || w.src[w.pos] != ':' {
			return false
		}
		w.pos++
		if w.emit {
			w.out = append(w.out, ':')
		}
		w.space()
		if !w.value(name, true, depth) {
			return false
		}
		w.pop()
		if more, ok := w.next('}'); !more {
			return ok
		}
	}
}

func (w *walker) array(depth int) bool {
	if depth > maxDepth {
		return false
	}
	if w.open('[', ']') {
		return true // empty
	}
	w.push(step{flags: stepElem})
	for {
		if !w.value("", false, depth) {
			return false
		}
		if more, ok := w.next(']'); !more {
			w.pop()
			return ok
		}
	}
}

// open reads the opening byte o of an object or array, and reports
// whether its closing byte c follows at once (it is empty, and read).
func (w *walker) open(o, c byte) (empty bool) {
	w.pos++
	if w.emit {
		w.out = append(w.out, o)
	}
	w.space()
	if w.pos < len(w.src) && w.src[w.pos] == c {
		w.pos++
		if w.emit {
			w.out = append(w.out, c)
		}
		return true
	}
	return false
}

// next reads what follows a member or element: a comma (more to come),
// or the close of its object or array (ok, no more); anything else is
// not JSON (not ok).
func (w *walker) next(close byte) (more, ok bool) {
	w.space()
	if w.pos >= len(w.src) {
		return false, false
	}
	switch c := w.src[w.pos]; c {
	case ',', close:
		w.pos++
		if w.emit {
			w.out = append(w.out, c)
		}
		if c == close {
			return false, true
		}
		w.space()
		return true, true
	}
	return false, false
}

// scanning reports whether the walker looks at what it reads: it does
// not while it skips a credential's value.
func (w *walker) scanning() bool { return !w.skip }

// text handles a string (a value or a member name) read as raw and
// unescaped as s: reports its value-pattern hits and, when emitting,
// writes it with them replaced.
func (w *walker) text(raw, s string) {
	if !w.emit {
		if !w.hit || w.report != nil {
			eachSpan(s, func(sp span) { w.found(sp.kind) })
		}
		return
	}
	n := len(w.counts)
	var path string
	if hasSpan(s) {
		path = w.path()
	}
	s, w.counts = w.r.replace(path, s, w.counts)
	if len(w.counts) == n {
		w.out = append(append(append(w.out, '"'), raw...), '"')
	} else {
		w.out = jsonstr.AppendQuoted(w.out, s, 0)
	}
}

// hasSpan reports whether s has a value-pattern match.
func hasSpan(s string) bool {
	found := false
	eachSpan(s, func(span) { found = true })
	return found
}

func (w *walker) found(k Kind) {
	w.hit = true
	if w.report != nil {
		w.report(Hit{Field: w.path(), Kind: k})
	}
	if w.emit {
		w.counts = append(w.counts, countKey{w.path(), k})
	}
}

// str reads a string token, returning what is between its quotes and
// whether that has escapes. As json.Valid, it takes bytes that are not
// UTF-8 and lone surrogates.
func (w *walker) str() (raw string, esc, ok bool) {
	end, esc, err := jsonstr.Scan(w.src, w.pos, 0)
	if err != nil {
		return "", false, false
	}
	raw, w.pos = w.src[w.pos+1:end-1], end
	return raw, esc, true
}

// scalar reads a number, true, false or null.
func (w *walker) scalar() bool {
	s, i := w.src, w.pos
	for _, lit := range [...]string{"true", "false", "null"} {
		if strings.HasPrefix(s[i:], lit) {
			w.pos = i + len(lit)
			return true
		}
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || !isDigit(s[i]) {
			return false
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || !isDigit(s[i]) {
			return false
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	w.pos = i
	return true
}

// skipValue reads one value without looking into it (or writing it).
func (w *walker) skipValue(depth int) bool {
	emit := w.emit
	w.emit, w.skip = false, true
	ok := w.value("", false, depth)
	w.emit, w.skip = emit, false
	return ok
}

// isCredentialValue reports whether raw, the JSON text of a value under a
// credential key, is a credential: not null, true, false, {} or [], and
// not a string that isCredentialString rejects.
func isCredentialValue(raw string) bool {
	switch raw[0] {
	case '"':
		return isCredentialString(credentialText(raw))
	case 't', 'f', 'n':
		return false
	case '{', '[':
		return strings.TrimLeft(raw[1:], " \t\r\n")[0] != raw[len(raw)-1]
	}
	return true
}

// credentialText returns the text a credential's pseudonym is made from:
// a string's contents, unescaped, or any other value's compact text.
func credentialText(raw string) string {
	if raw[0] == '"' {
		s := raw[1 : len(raw)-1]
		if strings.IndexByte(s, '\\') >= 0 {
			s = unescape(s)
		}
		return s
	}
	if raw[0] == '{' || raw[0] == '[' {
		return string(appendCompact(nil, raw))
	}
	return raw
}

// appendCompact appends the valid JSON text raw without its insignificant
// white space.
func appendCompact(b []byte, raw string) []byte {
	in := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case in:
			if c == '\\' {
				b = append(b, c, raw[i+1])
				i++
				continue
			}
			in = c != '"'
		case c == '"':
			in = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		}
		b = append(b, c)
	}
	return b
}

// unescape returns the contents of a JSON string (valid, between its
// quotes) unescaped as encoding/json does it: a lone surrogate becomes
// U+FFFD. Other bytes, invalid UTF-8 included, are kept.
func unescape(raw string) string {
	return string(jsonstr.AppendUnescaped(make([]byte, 0, len(raw)), raw))
}
