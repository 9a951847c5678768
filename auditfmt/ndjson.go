package auditfmt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/bits"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// maxNesting is how deeply objects and arrays may nest, counting the line's
// own object: the limit json.Valid applies.
const maxNesting = 10000

// maxInterned bounds the Decoder's table of interned strings; the table is
// emptied when it is full.
const maxInterned = 1 << 16

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
	interned map[string]string
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
		d.keyBuf = unescapeJSON(d.keyBuf[:0], m.raw)
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

// A wireField is a member of a record the schema knows.
type wireField uint8

// The known members. The order is that of Decoder.seen's bits.
const (
	fieldClientID wireField = iota
	fieldDeviceID
	fieldAttempt
	fieldBackoffDelay
	fieldOutcome
	fieldCleanSession
	fieldRecordedAt
	fieldSchema
	fieldHostID
	fieldStage
	fieldAttemptID
	fieldRecordID
	fieldDeviceSeq
	fieldFailureClass
	fieldReasonCode
	fieldCeiling
	fieldSessionPresent
	fieldAudit   // not a record field: the record an envelope carries
	fieldUnknown // kept in Extra
)

// requiredFields has the bits of the required fields but client_id, for
// which device_id may stand in.
const requiredFields = 1<<fieldAttempt | 1<<fieldBackoffDelay | 1<<fieldOutcome |
	1<<fieldCleanSession | 1<<fieldRecordedAt

var wireFieldNames = [...]string{
	fieldClientID:       "client_id",
	fieldDeviceID:       "device_id",
	fieldAttempt:        "attempt",
	fieldBackoffDelay:   "backoff_delay_s",
	fieldOutcome:        "outcome",
	fieldCleanSession:   "clean_session",
	fieldRecordedAt:     "recorded_at",
	fieldSchema:         "schema",
	fieldHostID:         "host_id",
	fieldStage:          "stage",
	fieldAttemptID:      "attempt_id",
	fieldRecordID:       "record_id",
	fieldDeviceSeq:      "device_seq",
	fieldFailureClass:   "failure_class",
	fieldReasonCode:     "reason_code",
	fieldCeiling:        "ceiling_s",
	fieldSessionPresent: "session_present",
}

// wireFieldExpected says what each field holds, for error messages.
var wireFieldExpected = [...]string{
	fieldClientID:       "a non-empty string",
	fieldDeviceID:       "a non-empty string",
	fieldAttempt:        "an integer >= 0",
	fieldBackoffDelay:   "a finite number >= 0",
	fieldOutcome:        outcomeExpected,
	fieldCleanSession:   "true or false",
	fieldRecordedAt:     timestampExpected,
	fieldSchema:         strconv.Itoa(SchemaVersion),
	fieldHostID:         "a non-empty string",
	fieldStage:          "link, address or session",
	fieldAttemptID:      "a non-empty string",
	fieldRecordID:       "a non-empty string",
	fieldDeviceSeq:      "an integer >= 0",
	fieldFailureClass:   failureExpected,
	fieldReasonCode:     "an integer in 0..255",
	fieldCeiling:        "a finite number >= 0",
	fieldSessionPresent: "true or false",
}

// quotedFieldNames holds the names of the fields as JSON strings.
var quotedFieldNames = func() (q [len(wireFieldNames)]string) {
	for f, name := range wireFieldNames {
		q[f] = strconv.Quote(name)
	}
	return q
}()

// fieldAfter says which field follows each in the canonical order, the
// order Record.AppendJSON writes.
var fieldAfter = func() (next [len(wireFieldNames)]wireField) {
	for f := range next {
		next[f] = wireField(f + 1)
	}
	next[fieldClientID] = fieldAttempt // device_id is an alias
	next[fieldSessionPresent] = fieldClientID
	return next
}()

// requiredKinds names the JSON type of each required field, for the error
// that says it is missing.
var requiredKinds = [...]string{
	fieldClientID:     "a string",
	fieldAttempt:      "an integer",
	fieldBackoffDelay: "a number",
	fieldOutcome:      "a string",
	fieldCleanSession: "a boolean",
	fieldRecordedAt:   "a string",
}

func (f wireField) required() bool { return f <= fieldRecordedAt }

func wireFieldOf(name []byte) wireField {
	switch string(name) {
	case "client_id":
		return fieldClientID
	case "device_id":
		return fieldDeviceID
	case "attempt":
		return fieldAttempt
	case "backoff_delay_s":
		return fieldBackoffDelay
	case "outcome":
		return fieldOutcome
	case "clean_session":
		return fieldCleanSession
	case "recorded_at":
		return fieldRecordedAt
	case "schema":
		return fieldSchema
	case "host_id":
		return fieldHostID
	case "stage":
		return fieldStage
	case "attempt_id":
		return fieldAttemptID
	case "record_id":
		return fieldRecordID
	case "device_seq":
		return fieldDeviceSeq
	case "failure_class":
		return fieldFailureClass
	case "reason_code":
		return fieldReasonCode
	case "ceiling_s":
		return fieldCeiling
	case "session_present":
		return fieldSessionPresent
	case "audit":
		return fieldAudit
	}
	return fieldUnknown
}

// field decodes the value at i of the known field f, whose name as read is
// name, into rec, and returns the index after the value.
func (d *Decoder) field(rec *Record, f wireField, name []byte, i int) (int, error) {
	if i < len(d.line) && d.line[i] == 'n' && bytes.HasPrefix(d.line[i:], literalNull) {
		if f.required() {
			return i, d.wrongType(f, i)
		}
		return i + len(literalNull), nil // null: an optional field is absent
	}
	switch f {
	case fieldClientID, fieldDeviceID, fieldHostID, fieldAttemptID, fieldRecordID:
		return d.stringField(rec, f, name, i)
	case fieldAttempt, fieldSchema, fieldDeviceSeq, fieldReasonCode:
		return d.intField(rec, f, name, i)
	case fieldBackoffDelay, fieldCeiling:
		return d.floatField(rec, f, name, i)
	case fieldOutcome, fieldStage, fieldFailureClass:
		return d.enumField(rec, f, name, i)
	case fieldCleanSession, fieldSessionPresent:
		return d.boolField(rec, f, i)
	}
	return d.timeField(rec, name, i)
}

// wrongType returns the error for a value at i that is not what f holds.
func (d *Decoder) wrongType(f wireField, i int) error {
	return d.typeError(wireFieldNames[f], wireFieldExpected[f], i)
}

// outOfRange returns the error for a value of f that has the right type but
// not an allowed value; found is how the line wrote it.
func outOfRange(f wireField, found string) error {
	return &FieldError{Field: wireFieldNames[f], Expected: wireFieldExpected[f], Found: found}
}

// stringValue reads the string at i and returns it unescaped (valid until
// the next string value is read), and the index after it.
func (d *Decoder) stringValue(f wireField, name []byte, i int) (s []byte, next int, err error) {
	b := d.line
	if i >= len(b) || b[i] != '"' {
		return nil, i, d.wrongType(f, i)
	}
	end, escaped, err := d.scanString(i, name)
	if err != nil {
		return nil, end, err
	}
	if !escaped {
		return b[i+1 : end-1], end, nil
	}
	d.valBuf = unescapeJSON(d.valBuf[:0], b[i+1:end-1])
	return d.valBuf, end, nil
}

func (d *Decoder) stringField(rec *Record, f wireField, name []byte, i int) (int, error) {
	s, end, err := d.stringValue(f, name, i)
	if err != nil {
		return end, err
	}
	if len(s) == 0 {
		return end, outOfRange(f, "an empty string")
	}
	switch f {
	case fieldClientID:
		rec.ClientID = d.intern(s)
	case fieldDeviceID:
		d.deviceID = d.intern(s)
	case fieldHostID:
		rec.HostID = d.intern(s)
	case fieldAttemptID:
		rec.AttemptID = string(s)
	case fieldRecordID:
		rec.RecordID = string(s)
	}
	return end, nil
}

// intern returns s as a string, the same string for the same bytes.
func (d *Decoder) intern(s []byte) string {
	if v, ok := d.interned[string(s)]; ok {
		return v
	}
	if d.interned == nil {
		d.interned = make(map[string]string)
	} else if len(d.interned) >= maxInterned {
		clear(d.interned)
	}
	v := string(s)
	d.interned[v] = v
	return v
}

func (d *Decoder) enumField(rec *Record, f wireField, name []byte, i int) (int, error) {
	s, end, err := d.stringValue(f, name, i)
	if err != nil {
		return end, err
	}
	ok := false
	switch f {
	case fieldOutcome:
		rec.Outcome = outcomeOf(s)
		ok = rec.Outcome != 0
	case fieldStage:
		rec.Stage, ok = ParseStage(string(s))
	case fieldFailureClass:
		rec.FailureClass, ok = ParseFailureClass(string(s))
	}
	if !ok {
		return end, outOfRange(f, clipped(d.line[i:end]))
	}
	return end, nil
}

// outcomeOf returns the outcome named s, or 0.
func outcomeOf(s []byte) Outcome {
	switch string(s) {
	case "connected":
		return Connected
	case "backoff_wait":
		return BackoffWait
	case "rate_limited_wait":
		return RateLimitedWait
	case "attempt_failed":
		return AttemptFailed
	case "refused":
		return Refused
	case "disconnected":
		return Disconnected
	case "gave_up":
		return GaveUp
	case "stopped":
		return Stopped
	}
	return 0
}

func (d *Decoder) boolField(rec *Record, f wireField, i int) (int, error) {
	var v bool
	switch rest := d.line[min(i, len(d.line)):]; {
	case bytes.HasPrefix(rest, literalTrue):
		v, i = true, i+len(literalTrue)
	case bytes.HasPrefix(rest, literalFalse):
		v, i = false, i+len(literalFalse)
	default:
		return i, d.wrongType(f, i)
	}
	if f == fieldCleanSession {
		rec.CleanSession = v
	} else {
		rec.SessionPresent = v
		rec.Has |= HasSessionPresent
	}
	return i, nil
}

func (d *Decoder) timeField(rec *Record, name []byte, i int) (int, error) {
	s, end, err := d.stringValue(fieldRecordedAt, name, i)
	if err != nil {
		return end, err
	}
	if len(s) > maxFoundBytes { // far too long to be a timestamp
		return end, outOfRange(fieldRecordedAt, quoteClipped(s))
	}
	rec.RecordedAt, rec.OffsetMin, err = d.timestamp(s)
	return end, err
}

// A dayCache remembers the date of the last timestamp, so that the
// timestamps of one day skip the calendar arithmetic.
type dayCache struct {
	date  [10]byte // "2026-11-30", as ParseTimestamp accepted it
	start int64    // Unix nanoseconds of the date's midnight, taken as UTC
	ok    bool
}

// timestamp is ParseTimestamp, faster for a timestamp in the form Python
// writes on the date of the one before.
func (d *Decoder) timestamp(s []byte) (int64, int16, error) {
	clock, offsetMin, ok := clockOf(s)
	if ok && d.day.ok && string(s[:len(d.day.date)]) == string(d.day.date[:]) {
		return d.day.start + clock - int64(offsetMin)*int64(time.Minute), offsetMin, nil
	}
	ns, offsetMin, err := ParseTimestamp(s)
	if err == nil && ok {
		copy(d.day.date[:], s)
		d.day.start, d.day.ok = ns+int64(offsetMin)*int64(time.Minute)-clock, true
	}
	return ns, offsetMin, err
}

// clockOf reads the part of a timestamp after its date, like
// "T14:17:34.979964+00:00" or "T14:17:34Z", and returns the nanoseconds since
// midnight and the UTC offset in minutes. It reports false for anything
// ParseTimestamp might not accept in the same way; ParseTimestamp then
// decides.
func clockOf(s []byte) (clock int64, offsetMin int16, ok bool) {
	if len(s) < 20 || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return 0, 0, false
	}
	hour, min, sec := twoDigits(s[11:]), twoDigits(s[14:]), twoDigits(s[17:])
	if hour < 0 || hour > 23 || min < 0 || min > 59 || sec < 0 || sec > 59 {
		return 0, 0, false
	}
	i, frac := 19, int64(0)
	if s[i] == '.' {
		start := i + 1
		for i = start; i < len(s) && i-start < 10 && isDigit(s[i]); i++ {
			frac = frac*10 + int64(s[i]-'0')
		}
		n := i - start
		if n == 0 || n > 9 {
			return 0, 0, false
		}
		for ; n < 9; n++ {
			frac *= 10
		}
	}
	switch zone := s[i:]; {
	case len(zone) == 1 && zone[0] == 'Z':
	case len(zone) == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':':
		h, m := twoDigits(zone[1:]), twoDigits(zone[4:])
		if h < 0 || h > 23 || m < 0 || m > 59 {
			return 0, 0, false
		}
		offsetMin = int16(h*60 + m)
		if zone[0] == '-' {
			offsetMin = -offsetMin
		}
	default:
		return 0, 0, false
	}
	return int64(hour*3600+min*60+sec)*int64(time.Second) + frac, offsetMin, true
}

// twoDigits returns the number s starts with, two decimal digits, or -1.
func twoDigits(s []byte) int {
	if !isDigit(s[0]) || !isDigit(s[1]) {
		return -1
	}
	return int(s[0]-'0')*10 + int(s[1]-'0')
}

// numberAt reports whether a JSON number (or something that is meant to be
// one and is malformed) starts at i. The Python tokens are not numbers.
func numberAt(b []byte, i int) bool {
	if i >= len(b) {
		return false
	}
	c := b[i]
	return isDigit(c) || c == '-' && (i+1 >= len(b) || b[i+1] != 'I')
}

func (d *Decoder) intField(rec *Record, f wireField, name []byte, i int) (int, error) {
	b := d.line
	if !numberAt(b, i) {
		return i, d.wrongType(f, i)
	}
	end, isInt, err := d.scanNumber(i, name)
	if err != nil {
		return end, err
	}
	text := b[i:end]
	v, fits := parseInt(text)
	switch {
	case !isInt:
		return end, outOfRange(f, clipped(text))
	case !fits && (f == fieldAttempt || f == fieldDeviceSeq) && text[0] != '-':
		return end, &FieldError{Field: wireFieldNames[f], Expected: "an integer >= 0 that fits in 64 bits", Found: clipped(text)}
	case !fits || v < 0 || f == fieldReasonCode && v > 255 || f == fieldSchema && v != SchemaVersion:
		return end, outOfRange(f, clipped(text))
	}
	switch f {
	case fieldAttempt:
		rec.Attempt = v
	case fieldSchema:
		rec.Schema = v
		rec.Has |= HasSchema
	case fieldDeviceSeq:
		rec.DeviceSeq = v
		rec.Has |= HasDeviceSeq
	case fieldReasonCode:
		rec.ReasonCode = v
		rec.Has |= HasReasonCode
	}
	return end, nil
}

// parseInt parses a JSON number without fraction or exponent and reports
// whether it fits in an int64.
func parseInt(s []byte) (int64, bool) {
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	if len(s) > 19 { // JSON has no leading zeros: at least 10^19
		return 0, false
	}
	var u uint64
	for _, c := range s {
		u = u*10 + uint64(c-'0')
	}
	switch {
	case neg && u <= 1<<63:
		return -int64(u), true
	case !neg && u < 1<<63:
		return int64(u), true
	}
	return 0, false
}

func (d *Decoder) floatField(rec *Record, f wireField, name []byte, i int) (int, error) {
	b := d.line
	if !numberAt(b, i) {
		return i, d.wrongType(f, i)
	}
	end, _, err := d.scanNumber(i, name)
	if err != nil {
		return end, err
	}
	v, ok := decimalFloat(b[i:end])
	if !ok {
		v, err = strconv.ParseFloat(string(b[i:end]), 64)
	}
	if err != nil || !validDelay(v) {
		return end, outOfRange(f, clipped(b[i:end]))
	}
	if v == 0 {
		v = 0 // not -0
	}
	if f == fieldBackoffDelay {
		rec.BackoffDelayS = v
	} else {
		rec.CeilingS = v
		rec.Has |= HasCeiling
	}
	return end, nil
}

// plainString marks the bytes that stand for themselves in a JSON string:
// printable ASCII other than '"' and '\\'.
var plainString = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// skipPlain returns the index of the first byte at or after i that does not
// stand for itself in a JSON string, or len(b). It looks at eight bytes at
// a time.
func skipPlain(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		q := x ^ (ones * '"')
		e := x ^ (ones * '\\')
		// A high bit marks a byte that is '"' or '\\' (zero after the
		// xor), a control character (< 0x20), or not ASCII. Only the
		// lowest mark is exact, and that is the one used.
		if m := ((q-ones)&^q | (e-ones)&^e | (x-ones*0x20)&^x | x) & highs; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for i < len(b) && plainString[b[i]] {
		i++
	}
	return i
}

// scanString checks the string whose opening quote is at i and returns the
// index after its closing quote and whether it has escapes. field names the
// member being read, if any.
func (d *Decoder) scanString(i int, field []byte) (end int, escaped bool, err error) {
	b := d.line
	j := i + 1
	for j < len(b) {
		j = skipPlain(b, j)
		if j == len(b) {
			break
		}
		switch c := b[j]; {
		case c == '"':
			return j + 1, escaped, nil
		case c == '\\':
			n, err := d.escapeLen(j, field)
			if err != nil {
				return j, false, err
			}
			j, escaped = j+n, true
		case c < 0x20:
			return j, false, d.syntaxError(field, "a string character (control characters must be escaped)", j)
		default:
			r, n := utf8.DecodeRune(b[j:])
			if r == utf8.RuneError && n == 1 {
				return j, false, d.syntaxError(field, "valid UTF-8", j)
			}
			j += n
		}
	}
	return j, false, d.syntaxError(field, "'\"' to end the string", j)
}

// escapeLen checks the escape sequence whose backslash is at i and returns
// its length.
func (d *Decoder) escapeLen(i int, field []byte) (int, error) {
	b := d.line
	if i+1 < len(b) {
		switch b[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			return 2, nil
		case 'u':
			for k := i + 2; k < i+6; k++ {
				if k >= len(b) || hexValue(b[k]) < 0 {
					return 0, d.syntaxError(field, `four hex digits after \u`, k)
				}
			}
			return 6, nil
		}
	}
	return 0, d.syntaxError(field, `an escape sequence (\" \\ \/ \b \f \n \r \t or \uXXXX) after \`, i+1)
}

func hexValue(c byte) rune {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0')
	case 'a' <= c && c <= 'f':
		return rune(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return rune(c - 'A' + 10)
	}
	return -1
}

// hex4 returns the value of the four hex digits s starts with.
func hex4(s []byte) rune {
	return hexValue(s[0])<<12 | hexValue(s[1])<<8 | hexValue(s[2])<<4 | hexValue(s[3])
}

// unescapeJSON appends the body of a JSON string whose escapes are known to
// be valid to dst, unescaped as encoding/json does it: a \u escape of a
// surrogate that is not half of a pair becomes U+FFFD.
func unescapeJSON(dst, s []byte) []byte {
	for len(s) > 0 {
		k := bytes.IndexByte(s, '\\')
		if k < 0 {
			return append(dst, s...)
		}
		dst, s = append(dst, s[:k]...), s[k:]
		if s[1] != 'u' {
			dst, s = append(dst, unescapedByte(s[1])), s[2:]
			continue
		}
		r := hex4(s[2:])
		s = s[6:]
		if utf16.IsSurrogate(r) {
			r2 := utf8.RuneError
			if len(s) >= 6 && s[0] == '\\' && s[1] == 'u' {
				r2 = utf16.DecodeRune(r, hex4(s[2:]))
			}
			if r2 != utf8.RuneError {
				s = s[6:]
			}
			r = r2
		}
		dst = utf8.AppendRune(dst, r)
	}
	return dst
}

func unescapedByte(c byte) byte {
	switch c {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return c // '"', '\\' and '/'
}

// scanNumber checks the JSON number at i and returns the index after it and
// whether it is an integer (no fraction, no exponent).
func (d *Decoder) scanNumber(i int, field []byte) (end int, isInt bool, err error) {
	b := d.line
	j := i
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case j < len(b) && isDigit(b[j]):
		j = skipDigits(b, j+1)
	default:
		return j, false, d.syntaxError(field, "a digit", j)
	}
	isInt = true
	if j < len(b) && b[j] == '.' {
		isInt = false
		if j++; j >= len(b) || !isDigit(b[j]) {
			return j, false, d.syntaxError(field, "a digit after the decimal point", j)
		}
		j = skipDigits(b, j+1)
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		isInt = false
		if j++; j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if j >= len(b) || !isDigit(b[j]) {
			return j, false, d.syntaxError(field, "a digit in the exponent", j)
		}
		j = skipDigits(b, j+1)
	}
	return j, isInt, nil
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

// skipValue checks the JSON value at i, the value of member field of an
// object at nesting depth depth, and returns the index after it.
func (d *Decoder) skipValue(i int, field []byte, depth int) (int, error) {
	b := d.line
	stack := d.stack[:0]
	defer func() { d.stack = stack }()
	var err error
	for {
		// A value starts at i.
		if i < len(b) && (b[i] == '{' || b[i] == '[') {
			if depth+len(stack) >= maxNesting {
				return i, d.syntaxError(field, "at most "+strconv.Itoa(maxNesting)+" levels of nesting", i)
			}
			stack = append(stack, b[i]+2) // '}' or ']'
			empty := false
			if i, empty, err = d.openContainer(i, field, stack[len(stack)-1]); err != nil {
				return i, err
			} else if !empty {
				continue // the container's first element
			}
			stack, i = stack[:len(stack)-1], i+1
		} else if i, err = d.scalar(i, field); err != nil {
			return i, err
		}
		// A value ends before i: close what it completes.
		more := false
		for !more && len(stack) > 0 {
			if i, more, err = d.afterElement(i, field, stack[len(stack)-1]); err != nil {
				return i, err
			} else if !more {
				stack, i = stack[:len(stack)-1], i+1
			}
		}
		if !more {
			return i, nil
		}
	}
}

// openContainer reads past the '{' or '[' at i and, for a non-empty object,
// past its first member name. It returns the index of the first element,
// or of the closing bracket and empty.
func (d *Decoder) openContainer(i int, field []byte, closer byte) (next int, empty bool, err error) {
	b := d.line
	i = skipSpace(b, i+1)
	switch {
	case i < len(b) && b[i] == closer:
		return i, true, nil
	case closer == ']':
		return i, false, nil
	}
	i, err = d.nestedName(i, field, true)
	return i, false, err
}

// afterElement reads what follows an element of a container whose closing
// bracket is closer: a ',' (it returns the index of the next element, and
// more) or the closing bracket (it returns its index).
func (d *Decoder) afterElement(i int, field []byte, closer byte) (int, bool, error) {
	b := d.line
	i = skipSpace(b, i)
	switch {
	case i < len(b) && b[i] == closer:
		return i, false, nil
	case i < len(b) && b[i] == ',' && closer == ']':
		return skipSpace(b, i+1), true, nil
	case i < len(b) && b[i] == ',':
		i, err := d.nestedName(skipSpace(b, i+1), field, false)
		return i, true, err
	case closer == ']':
		return i, false, d.syntaxError(field, "',' or ']' in an array", i)
	}
	return i, false, d.syntaxError(field, "',' or '}' in an object", i)
}

// nestedName reads a member name of an object inside the value of member
// field, and the ':' after it, and returns the index of the member's value.
func (d *Decoder) nestedName(i int, field []byte, first bool) (int, error) {
	b := d.line
	if i >= len(b) || b[i] != '"' {
		if first {
			return i, d.syntaxError(field, "a member name (a string) or '}'", i)
		}
		return i, d.syntaxError(field, "a member name (a string)", i)
	}
	end, _, err := d.scanString(i, field)
	if err != nil {
		return end, err
	}
	j := skipSpace(b, end)
	if j >= len(b) || b[j] != ':' {
		return j, d.syntaxError(field, "':' after a member name", j)
	}
	return skipSpace(b, j+1), nil
}

// scalar checks the string, number or literal at i and returns the index
// after it.
func (d *Decoder) scalar(i int, field []byte) (int, error) {
	b := d.line
	if tok := nonFinite(b, i); tok != "" {
		d.hard = true
		return i, &FieldError{Field: string(field), Expected: "a JSON value", Found: tok}
	}
	if i >= len(b) {
		return i, d.syntaxError(field, "a JSON value", i)
	}
	switch c := b[i]; {
	case c == '"':
		end, _, err := d.scanString(i, field)
		return end, err
	case c == '-' || isDigit(c):
		end, _, err := d.scanNumber(i, field)
		return end, err
	}
	for _, lit := range [...][]byte{literalTrue, literalFalse, literalNull} {
		if bytes.HasPrefix(b[i:], lit) {
			return i + len(lit), nil
		}
	}
	return i, d.syntaxError(field, "a JSON value", i)
}

// decimalFloat parses the common numbers quickly: no sign, no exponent, at
// most 15 digits and so exactly a float64 once the point is dropped, at
// most 22 of them after the point, so that the result is that integer
// divided by an exact power of ten, correctly rounded (as strconv does it).
// It reports false for other numbers.
func decimalFloat(s []byte) (float64, bool) {
	var mant uint64
	digits, point := 0, -1
	for k, c := range s {
		switch {
		case isDigit(c):
			mant = mant*10 + uint64(c-'0')
			digits++
		case c == '.':
			point = k
		default:
			return 0, false
		}
	}
	if digits > 15 {
		return 0, false
	}
	if point < 0 {
		return float64(mant), true
	}
	return float64(mant) / exactPowersOfTen[len(s)-point-1], true
}

// exactPowersOfTen are the powers of ten a float64 holds exactly.
var exactPowersOfTen = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}
