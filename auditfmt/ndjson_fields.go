package auditfmt

import (
	"bytes"
	"hash/maphash"
	"strconv"
	"time"
	"unsafe"

	"github.com/stormaudit/stormaudit/internal/jsonstr"
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
	fieldOutboxDepth
	fieldOutboxFlushed
	fieldInboundRedelivered
	fieldInboundDuplicates
	fieldOutboxDropped
	fieldInboundExpired
	fieldAudit   // not a record field: the record an envelope carries
	fieldUnknown // kept in Extra
)

// requiredFields has the bits of the required fields but client_id, for
// which device_id may stand in.
const requiredFields = 1<<fieldAttempt | 1<<fieldBackoffDelay | 1<<fieldOutcome |
	1<<fieldCleanSession | 1<<fieldRecordedAt

var wireFieldNames = [...]string{
	fieldClientID:           "client_id",
	fieldDeviceID:           "device_id",
	fieldAttempt:            "attempt",
	fieldBackoffDelay:       "backoff_delay_s",
	fieldOutcome:            "outcome",
	fieldCleanSession:       "clean_session",
	fieldRecordedAt:         "recorded_at",
	fieldSchema:             "schema",
	fieldHostID:             "host_id",
	fieldStage:              "stage",
	fieldAttemptID:          "attempt_id",
	fieldRecordID:           "record_id",
	fieldDeviceSeq:          "device_seq",
	fieldFailureClass:       "failure_class",
	fieldReasonCode:         "reason_code",
	fieldCeiling:            "ceiling_s",
	fieldSessionPresent:     "session_present",
	fieldOutboxDepth:        "outbox_depth",
	fieldOutboxFlushed:      "outbox_flushed",
	fieldInboundRedelivered: "inbound_redelivered",
	fieldInboundDuplicates:  "inbound_duplicates",
	fieldOutboxDropped:      "outbox_dropped",
	fieldInboundExpired:     "inbound_expired",
}

// wireFieldExpected says what each field holds, for error messages.
var wireFieldExpected = [...]string{
	fieldClientID:           "a non-empty string",
	fieldDeviceID:           "a non-empty string",
	fieldAttempt:            "an integer >= 0",
	fieldBackoffDelay:       delayExpected,
	fieldOutcome:            outcomeExpected,
	fieldCleanSession:       "true or false",
	fieldRecordedAt:         timestampExpected,
	fieldSchema:             strconv.Itoa(SchemaVersion),
	fieldHostID:             "a non-empty string",
	fieldStage:              "link, address or session",
	fieldAttemptID:          "a non-empty string",
	fieldRecordID:           "a non-empty string",
	fieldDeviceSeq:          "an integer >= 0",
	fieldFailureClass:       failureExpected,
	fieldReasonCode:         "an integer in 0..255",
	fieldCeiling:            delayExpected,
	fieldSessionPresent:     "true or false",
	fieldOutboxDepth:        "an integer >= 0",
	fieldOutboxFlushed:      "an integer >= 0",
	fieldInboundRedelivered: "an integer >= 0",
	fieldInboundDuplicates:  "an integer >= 0",
	fieldOutboxDropped:      "an integer >= 0",
	fieldInboundExpired:     "an integer >= 0",
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
	next[fieldInboundExpired] = fieldClientID
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
	case "outbox_depth":
		return fieldOutboxDepth
	case "outbox_flushed":
		return fieldOutboxFlushed
	case "inbound_redelivered":
		return fieldInboundRedelivered
	case "inbound_duplicates":
		return fieldInboundDuplicates
	case "outbox_dropped":
		return fieldOutboxDropped
	case "inbound_expired":
		return fieldInboundExpired
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
	case fieldAttempt, fieldSchema, fieldDeviceSeq, fieldReasonCode, fieldOutboxDepth, fieldOutboxFlushed,
		fieldInboundRedelivered, fieldInboundDuplicates, fieldOutboxDropped, fieldInboundExpired:
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
	d.valBuf = jsonstr.AppendUnescaped(d.valBuf[:0], b[i+1:end-1])
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
		rec.ClientID = d.str(s, true)
	case fieldDeviceID:
		d.deviceID = d.intern(s)
	case fieldHostID:
		rec.HostID = d.str(s, true)
	case fieldAttemptID:
		rec.AttemptID = d.str(s, false)
	case fieldRecordID:
		rec.RecordID = d.str(s, false)
	}
	return end, nil
}

// str returns s, a string value, as a string: the line's own bytes when
// the Decoder borrows and s is in the line (it had no escapes), else
// interned or copied.
func (d *Decoder) str(s []byte, intern bool) string {
	switch {
	case d.Borrow && (len(d.valBuf) == 0 || unsafe.SliceData(s) != unsafe.SliceData(d.valBuf)):
		return unsafe.String(unsafe.SliceData(s), len(s))
	case intern:
		return d.intern(s)
	}
	return string(s)
}

// intern returns s as a string, the same string for the same bytes while
// it stays in the cache (see internSlots).
func (d *Decoder) intern(s []byte) string {
	if d.interned == nil {
		d.interned, d.seed = new([internSlots]string), maphash.MakeSeed()
	}
	slot := &d.interned[maphash.Bytes(d.seed, s)&(internSlots-1)]
	if *slot == string(s) {
		return *slot
	}
	*slot = string(s)
	return *slot
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
	case !fits && f != fieldSchema && f != fieldReasonCode && text[0] != '-':
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
	case fieldOutboxDepth:
		rec.OutboxDepth = v
		rec.Has |= HasOutboxDepth
	case fieldOutboxFlushed:
		rec.OutboxFlushed = v
		rec.Has |= HasOutboxFlushed
	case fieldInboundRedelivered:
		rec.InboundRedelivered = v
		rec.Has |= HasInboundRedelivered
	case fieldInboundDuplicates:
		rec.InboundDuplicates = v
		rec.Has |= HasInboundDuplicates
	case fieldOutboxDropped:
		rec.OutboxDropped = v
		rec.Has |= HasOutboxDropped
	case fieldInboundExpired:
		rec.InboundExpired = v
		rec.Has |= HasInboundExpired
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
	if ok {
		ok = validDelay(v)
	} else {
		v, ok = parseDelay(b[i:end])
	}
	if !ok {
		return end, outOfRange(f, clipped(b[i:end]))
	}
	if f == fieldBackoffDelay {
		rec.BackoffDelayS = v
	} else {
		rec.CeilingS = v
		rec.Has |= HasCeiling
	}
	return end, nil
}
