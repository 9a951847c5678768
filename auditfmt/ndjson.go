package auditfmt

import (
	"bytes"
	"errors"
	"hash/maphash"
	"strconv"
	"unicode/utf8"

	"github.com/stormaudit/stormaudit/internal/jsonstr"
)

// maxNesting is how deeply objects and arrays may nest, counting the line's
// own object: the limit json.Valid applies.
const maxNesting = 10000

// internSlots is the size of the Decoder's cache of interned strings: a
// direct-mapped table, where a string stays until another one hashes to
// its slot. A fleet's ids mostly repeat within a device's run of lines; a
// map over every id cost a cache miss a line on large fleets.
const internSlots = 1 << 12

// maxFoundBytes bounds how much of a value an error message quotes.
const maxFoundBytes = 64

// Decoder decodes NDJSON audit lines. It interns client ids so that a
// fleet's records share their strings. The zero value is ready to use. Not
// safe for concurrent use (one per goroutine).
//
// A line holds one JSON object: a flat record, or a structured-logging
// envelope, an object whose "audit" member is an object holding the
// record. The decoder is a single pass over the line's bytes. It accepts
// exactly the objects encoding/json's json.Valid accepts (at most 10000
// levels of nesting), except that strings must be valid UTF-8, and it
// rejects Python's NaN, Infinity and -Infinity by name. A member name may
// appear only once in the record and once in the envelope.
//
// Members the schema does not know are kept in Record.Extra, and the
// members of an envelope other than "audit" in Record.Envelope, each as a
// JSON object that holds them in their order and as written, with the
// whitespace outside strings removed. An "audit" member inside the record
// of an envelope is rejected: envelopes do not nest.
type Decoder struct {
	// Borrow lets the strings of a decoded record that had no escapes
	// (client_id, host_id, attempt_id, record_id) be the line's own
	// bytes, valid only until the caller changes the line: for a caller
	// that copies them before it does, saving an allocation a string.
	Borrow bool

	line  []byte // the line being decoded, without a trailing \r
	hard  bool   // the error being returned is final: a syntax error, or a line that is no object
	probe bool   // a first member that is not a record field makes decodeFlat return errFirstUnknown

	seen     uint32 // one bit per known record field read so far
	deviceID string // the device_id member, when there is one
	extra    []byte // the record's unknown members, compacted: `{"k":v,...` without the '}'
	envelope []byte // the envelope's other members, compacted likewise
	recKeys  keySet // the names of the record's unknown members
	envKeys  keySet // the names of the envelope's members
	keyBuf   []byte // the current member name, unescaped (when it has escapes)
	valBuf   []byte // the current string value, unescaped (when it has escapes)
	stack    []byte // the closing brackets of the containers a skipped value has open
	interned *[internSlots]string
	seed     maphash.Seed
	day      dayCache
}

// These errors steer the decoder between the two shapes of a line. They
// are never returned to a caller.
var (
	// errEnvelope: the line has an "audit" member that is an object.
	errEnvelope = errors.New("auditfmt: line is an envelope")
	// errFirstUnknown: the line's first member is not a record field, so
	// it is most likely an envelope.
	errFirstUnknown = errors.New("auditfmt: line starts with an unknown member")
	// errNoAudit: the line has no "audit" member, so it is no envelope.
	errNoAudit = errors.New("auditfmt: line has no audit member")
)

// Decode decodes one line (without its newline; a trailing \r is allowed and
// ignored) into rec, which it resets first (rec.Source and rec.Line are left
// as they were). Every error is a *FieldError naming the field ("" for the
// line as a whole) with what was expected and what was found; positions in
// it count the line's bytes from 1. After an error rec holds what was read
// before it. The record keeps no reference to line.
func (d *Decoder) Decode(line []byte, rec *Record) error {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	err := d.decode(line, rec)
	d.line = nil // do not keep the caller's buffer alive
	return err
}

// decode is Decode once a trailing \r is gone.
//
// Errors come in two kinds. A syntax error means the line is not JSON; it
// is final. A field error (wrong type, out of range, duplicate member) is
// only final once the rest of the line is known to be JSON and known not to
// be an envelope whose record comes later on the line: members of an
// envelope can look like record fields. So after a field error the decoder
// skims the whole line once more, checking syntax only.
func (d *Decoder) decode(line []byte, rec *Record) error {
	d.line, d.hard, d.probe = line, false, true
	d.resetRecord(rec)
	if len(line) > MaxLineBytes {
		d.hard = true
		return &FieldError{
			Expected: "a line of at most " + strconv.Itoa(MaxLineBytes) + " bytes",
			Found:    "a line of " + strconv.Itoa(len(line)) + " bytes",
		}
	}
	err := d.decodeFlat(rec)
	if err == errFirstUnknown { // most likely an envelope: try that first
		if err = d.decodeEnvelope(rec); err != errNoAudit {
			return err
		}
		d.probe = false
		d.resetRecord(rec)
		err = d.decodeFlat(rec)
	}
	switch {
	case err == nil:
		return d.finish(rec)
	case err == errEnvelope:
		return d.decodeEnvelope(rec)
	case d.hard:
		return err
	}
	isEnvelope, serr := d.skim()
	switch {
	case serr != nil:
		return serr
	case isEnvelope:
		return d.decodeEnvelope(rec)
	}
	return err
}

// resetRecord forgets what the decoder has read into rec.
func (d *Decoder) resetRecord(rec *Record) {
	*rec = Record{Source: rec.Source, Line: rec.Line}
	d.seen, d.deviceID = 0, ""
	d.extra, d.envelope = d.extra[:0], d.envelope[:0]
	d.recKeys.reset()
	d.envKeys.reset()
}

// decodeFlat decodes the line as a flat record. It returns errEnvelope when
// it meets an "audit" member whose value is an object, and errFirstUnknown
// as said at Decoder.probe.
func (d *Decoder) decodeFlat(rec *Record) error {
	b := d.line
	i := skipSpace(b, 0)
	if i == len(b) {
		d.hard = true
		return &FieldError{Expected: "a JSON object", Found: "an empty line"}
	}
	if b[i] != '{' {
		// Maybe JSON, but not an object: final all the same.
		err := d.typeError("", "a JSON object", i)
		d.hard = true
		return err
	}
	i, err := d.members(rec, i+1, 1, false)
	if err != nil {
		return err
	}
	return d.end(i)
}

// decodeEnvelope decodes the line as an envelope, from the start. It
// returns errNoAudit if the line is an object without an "audit" member.
func (d *Decoder) decodeEnvelope(rec *Record) error {
	d.resetRecord(rec)
	err := d.envelopeMembers(rec)
	switch {
	case err == nil:
		return d.finish(rec)
	case err == errNoAudit:
		return err
	}
	if !d.hard {
		if _, serr := d.skim(); serr != nil {
			return serr
		}
	}
	return err
}

// end checks that nothing but whitespace follows the object that ended
// just before i.
func (d *Decoder) end(i int) error {
	if i = skipSpace(d.line, i); i != len(d.line) {
		return d.syntaxError(nil, "nothing after the JSON object", i)
	}
	return nil
}

// A memberHead is a member's name and where its value starts.
type memberHead struct {
	name []byte // unescaped; valid until the next member name is read
	raw  []byte // as written, without the quotes
	at   int    // the index of the name's opening quote
	val  int    // the index of the value, whitespace skipped
}

// memberName reads a member name at i (whitespace skipped) and the ':'
// after it into m. first says whether it is the first member of its
// object, which might be empty instead.
func (d *Decoder) memberName(m *memberHead, i int, first bool) error {
	b := d.line
	m.at = i
	if i >= len(b) || b[i] != '"' {
		if first {
			return d.syntaxError(nil, "a member name (a string) or '}'", i)
		}
		return d.syntaxError(nil, "a member name (a string)", i)
	}
	end, escaped, err := d.scanString(i, nil)
	if err != nil {
		return err
	}
	m.raw, m.name = b[i+1:end-1], b[i+1:end-1]
	if escaped {
		d.keyBuf = jsonstr.AppendUnescaped(d.keyBuf[:0], m.raw)
		m.name = d.keyBuf
	}
	return d.colon(m, end)
}

// colon reads the ':' after a member name that ends before i, and sets
// m.val to the index of the value.
func (d *Decoder) colon(m *memberHead, i int) error {
	b := d.line
	if i < len(b) && b[i] == ':' { // the compact form
		m.val = skipSpace(b, i+1)
		return nil
	}
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return d.syntaxError(m.name, "':' after the member name", i)
	}
	m.val = skipSpace(b, i+1)
	return nil
}

// recordMemberName is memberName for the members of a record. It returns
// the field the member is. It first tries whether the name is the one
// expected, that of the field written after the previous one in the
// canonical order.
func (d *Decoder) recordMemberName(m *memberHead, i int, first bool, expected wireField) (wireField, error) {
	b := d.line
	if q := quotedFieldNames[expected]; len(b)-i >= len(q) && string(b[i:i+len(q)]) == q {
		m.at = i
		m.raw, m.name = b[i+1:i+len(q)-1], b[i+1:i+len(q)-1]
		return expected, d.colon(m, i+len(q))
	}
	if err := d.memberName(m, i, first); err != nil {
		return fieldUnknown, err
	}
	return wireFieldOf(m.name), nil
}

// nextMember reads what follows the value of member name, which ends just
// before i: a ',' (it returns the index of the next member name) or the '}'
// that closes the object (it returns the index after it, and done).
func (d *Decoder) nextMember(i int, name []byte) (next int, done bool, err error) {
	b := d.line
	i = skipSpace(b, i)
	if i < len(b) {
		switch b[i] {
		case ',':
			return skipSpace(b, i+1), false, nil
		case '}':
			return i + 1, true, nil
		}
	}
	return i, false, d.syntaxError(nil, "',' or '}' after member "+quoteClipped(name), i)
}

// members decodes the members of a record object at nesting depth depth,
// starting at i, just after its '{'. It returns the index after the '}'.
// inner says whether the record is the one an envelope carries.
func (d *Decoder) members(rec *Record, i, depth int, inner bool) (int, error) {
	b := d.line
	i = skipSpace(b, i)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	var m memberHead
	expected := fieldClientID
	for first := true; ; first = false {
		f, err := d.recordMemberName(&m, i, first, expected)
		if err != nil {
			return i, err
		}
		if first && f == fieldUnknown && d.probe && !inner {
			return i, errFirstUnknown
		}
		if f < fieldAudit {
			if d.seen&(1<<f) != 0 {
				return m.val, d.duplicate(&m)
			}
			d.seen |= 1 << f
			i, err = d.field(rec, f, m.name, m.val)
			expected = fieldAfter[f]
		} else {
			i, err = d.otherMember(rec, &m, f, depth, inner)
		}
		if err != nil {
			return i, err
		}
		done := false
		if i, done, err = d.nextMember(i, m.name); done || err != nil {
			return i, err
		}
	}
}

// otherMember decodes a member of a record that is not a record field and
// returns the index after its value.
func (d *Decoder) otherMember(rec *Record, m *memberHead, f wireField, depth int, inner bool) (int, error) {
	switch {
	case f == fieldAudit && !inner:
		if m.val < len(d.line) && d.line[m.val] == '{' {
			return m.val, errEnvelope
		}
		return m.val, d.typeError("audit", auditExpected, m.val)
	case f == fieldAudit:
		return m.val, d.typeError("audit", nestedAuditExpected, m.val)
	}
	if d.recKeys.add(m.name) {
		return m.val, d.duplicate(m)
	}
	end, err := d.skipValue(m.val, m.name, depth)
	if err != nil {
		return end, err
	}
	d.extra = appendMember(d.extra, m.raw, d.line[m.val:end])
	return end, nil
}

// envelopeMembers decodes the line as an envelope: an object with an
// "audit" member holding the record.
func (d *Decoder) envelopeMembers(rec *Record) error {
	b := d.line
	i := skipSpace(b, skipSpace(b, 0)+1) // the line starts with '{'
	carries := false
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		var err error
		if i, carries, err = d.envelopeLoop(rec, i); err != nil {
			return err
		}
	}
	if err := d.end(i); err != nil {
		return err
	}
	if !carries {
		return errNoAudit
	}
	if len(d.envelope) > 0 {
		d.envelope = append(d.envelope, '}')
		rec.Envelope = string(d.envelope)
	}
	return nil
}

// envelopeLoop decodes the members of an envelope, the first at i, and
// returns the index after the '}' that closes it, and whether there was an
// "audit" member.
func (d *Decoder) envelopeLoop(rec *Record, i int) (end int, carries bool, err error) {
	var m memberHead
	for first := true; ; first = false {
		if err := d.memberName(&m, i, first); err != nil {
			return i, carries, err
		}
		if d.envKeys.add(m.name) {
			return i, carries, d.duplicate(&m)
		}
		if string(m.name) == "audit" {
			i, err = d.carried(rec, m.val)
			m.name, carries = auditName, true // the record's members have overwritten the name
		} else {
			i, err = d.envelopeMember(&m)
		}
		if err != nil {
			return i, carries, err
		}
		done := false
		if i, done, err = d.nextMember(i, m.name); done || err != nil {
			return i, carries, err
		}
	}
}

var auditName = []byte("audit")

// carried decodes the record an envelope carries, the object at i.
func (d *Decoder) carried(rec *Record, i int) (int, error) {
	if i >= len(d.line) || d.line[i] != '{' {
		return i, d.typeError("audit", auditExpected, i)
	}
	return d.members(rec, i+1, 2, true)
}

// envelopeMember checks the value of a member of an envelope other than
// "audit" and keeps it in d.envelope.
func (d *Decoder) envelopeMember(m *memberHead) (int, error) {
	end, err := d.skipMember(m)
	if err != nil {
		return end, err
	}
	d.envelope = appendMember(d.envelope, m.raw, d.line[m.val:end])
	return end, nil
}

// skipMember checks the value of a member of the line's object and returns
// the index after it. It names NaN and Infinity in the value of a member
// named like a record field as the decoder of that field would.
func (d *Decoder) skipMember(m *memberHead) (int, error) {
	if f := wireFieldOf(m.name); f < fieldAudit && nonFinite(d.line, m.val) != "" {
		return m.val, d.wrongType(f, m.val)
	}
	return d.skipValue(m.val, m.name, 1)
}

// skim checks the syntax of the whole line, which starts with '{', and
// reports whether the object has an "audit" member whose value is an
// object.
func (d *Decoder) skim() (isEnvelope bool, err error) {
	b := d.line
	i := skipSpace(b, skipSpace(b, 0)+1)
	if i < len(b) && b[i] == '}' {
		return false, d.end(i + 1)
	}
	var m memberHead
	for first := true; ; first = false {
		if err := d.memberName(&m, i, first); err != nil {
			return false, err
		}
		if string(m.name) == "audit" && m.val < len(b) && b[m.val] == '{' {
			isEnvelope = true
		}
		if i, err = d.skipMember(&m); err != nil {
			return false, err
		}
		done := false
		if i, done, err = d.nextMember(i, m.name); err != nil {
			return false, err
		} else if done {
			return isEnvelope, d.end(i)
		}
	}
}

// finish checks what can only be checked once the whole line is read.
func (d *Decoder) finish(rec *Record) error {
	if d.seen&requiredFields != requiredFields || d.seen&(1<<fieldClientID|1<<fieldDeviceID) == 0 {
		if err := d.missing(); err != nil {
			return err
		}
	}
	if d.seen&(1<<fieldDeviceID) != 0 {
		if d.seen&(1<<fieldClientID) == 0 {
			rec.ClientID = d.deviceID
		} else if d.deviceID != rec.ClientID {
			return &FieldError{
				Field:    "device_id",
				Expected: "the same value as client_id, " + quoteClipped([]byte(rec.ClientID)),
				Found:    quoteClipped([]byte(d.deviceID)),
			}
		}
	}
	if len(d.extra) > 0 {
		d.extra = append(d.extra, '}')
		rec.Extra = string(d.extra)
	}
	return rec.Validate()
}

// missing returns the error for the first required field the record lacks.
func (d *Decoder) missing() error {
	for _, f := range [...]wireField{fieldClientID, fieldAttempt, fieldBackoffDelay, fieldOutcome, fieldCleanSession, fieldRecordedAt} {
		if d.seen&(1<<f) == 0 && (f != fieldClientID || d.seen&(1<<fieldDeviceID) == 0) {
			return &FieldError{Field: wireFieldNames[f], Expected: requiredKinds[f] + " (required field)", Found: "nothing"}
		}
	}
	return nil
}

// duplicate returns the error for a member whose name appeared before.
func (d *Decoder) duplicate(m *memberHead) error {
	name := string(m.name)
	return &FieldError{Field: name, Expected: "each member once", Found: "a second " + quoteClipped(m.name) + " at byte " + strconv.Itoa(m.at+1)}
}

// syntaxError returns the error for a line that is not JSON: field is the
// member being read, if any, and i the index of the offending byte.
func (d *Decoder) syntaxError(field []byte, expected string, i int) error {
	d.hard = true
	return &FieldError{Field: string(field), Expected: expected, Found: d.foundAt(i)}
}

// foundAt describes the byte at index i of the line for an error message.
func (d *Decoder) foundAt(i int) string {
	b := d.line
	if i >= len(b) {
		return "end of line"
	}
	_, n := utf8.DecodeRune(b[i:])
	return strconv.Quote(string(b[i:i+n])) + " at byte " + strconv.Itoa(i+1)
}

// typeError returns the error for a value at i that is not what field
// holds. It is a syntax error if the value is not JSON at all.
func (d *Decoder) typeError(field, expected string, i int) error {
	if tok := nonFinite(d.line, i); tok != "" {
		d.hard = true
		return &FieldError{Field: field, Expected: expected, Found: tok}
	}
	kind := valueKindAt(d.line, i)
	if kind == "" {
		d.hard = true
		return &FieldError{Field: field, Expected: expected, Found: d.foundAt(i)}
	}
	return &FieldError{Field: field, Expected: expected, Found: kind}
}

// valueKindAt names the kind of JSON value that starts at i, or returns ""
// if no value starts there. It looks at literals in full and at other
// values only at their first byte.
func valueKindAt(b []byte, i int) string {
	if i >= len(b) {
		return ""
	}
	switch c := b[i]; {
	case c == '"':
		return "a string"
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '-' || isDigit(c):
		return "a number"
	case bytes.HasPrefix(b[i:], literalTrue) || bytes.HasPrefix(b[i:], literalFalse):
		return "a boolean"
	case bytes.HasPrefix(b[i:], literalNull):
		return "null"
	}
	return ""
}

var (
	literalTrue  = []byte("true")
	literalFalse = []byte("false")
	literalNull  = []byte("null")
)

// nonFinite returns the Python token NaN, Infinity or -Infinity if one
// starts at i, or "".
func nonFinite(b []byte, i int) string {
	if i >= len(b) {
		return ""
	}
	switch s := b[i:]; s[0] {
	case 'N':
		if bytes.HasPrefix(s, []byte("NaN")) {
			return "NaN"
		}
	case 'I':
		if bytes.HasPrefix(s, []byte("Infinity")) {
			return "Infinity"
		}
	case '-':
		if bytes.HasPrefix(s, []byte("-Infinity")) {
			return "-Infinity"
		}
	}
	return ""
}

// quoteClipped quotes s for an error message, shortened if it is long.
func quoteClipped(s []byte) string {
	if len(s) <= maxFoundBytes {
		return strconv.Quote(string(s))
	}
	return strconv.Quote(string(s[:runeCut(s, maxFoundBytes)])) + "..."
}

// clipped returns text as written on the line for an error message,
// shortened if it is long.
func clipped(s []byte) string {
	if len(s) <= maxFoundBytes {
		return string(s)
	}
	return string(s[:runeCut(s, maxFoundBytes)]) + "..."
}

// runeCut returns the largest n <= max that does not split a UTF-8
// sequence of s.
func runeCut(s []byte, max int) int {
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
