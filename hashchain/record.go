package hashchain

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// AppendRecordBytes appends R, the canonical bytes of r, to dst: the
// RFC 8785 serialisation of
//
//	{"envelope": {...}, "record": {...}}
//
// where "record" holds every field r carries under its wire name and the
// members of r.Extra, and "envelope" (present only when r.Envelope is not
// "") the members of r.Envelope. recorded_at is written as
// [auditfmt.AppendTimestamp] writes it. Source and Line are not part of R.
//
// It fails, with an *auditfmt.FieldError naming the field (or the member of
// Extra or Envelope) and leaving dst as it was, when r has no canonical
// bytes: an integer beyond ±2^53, a number that is not finite, a string
// that is not UTF-8, an enum value outside the vocabulary, a UTC offset
// beyond ±23:59; in Extra or Envelope, text that RFC 8785 rejects (see
// [AppendCanonicalJSON]), a number that a double does not hold exactly
// (12345678901234567890, 0.1000000000000000055511151231257827), or, in
// Extra, a member named like a schema field (but see [addedFields]: a
// member named like a field added to the schema later is allowed in a
// record that lacks the field).
func AppendRecordBytes(dst []byte, r *auditfmt.Record) ([]byte, error) {
	w := recordWriter{b: dst}
	if r.Extra != "" || r.Envelope != "" {
		w.c = getCanonicalizer(nil, true)
		defer putCanonicalizer(w.c)
	}
	w.b = append(w.b, '{')
	if r.Envelope != "" {
		w.b = append(w.b, `"envelope":`...)
		if err := w.envelope(r.Envelope); err != nil {
			return dst, err
		}
		w.b = append(w.b, ',')
	}
	w.b = append(w.b, `"record":{`...)
	if r.Extra != "" {
		if err := w.extra(r.Extra, r.Has); err != nil {
			return dst, err
		}
	}
	if err := w.fields(r); err != nil {
		return dst, err
	}
	w.rest()
	return append(w.b, '}', '}'), nil
}

// CheckRecord reports whether r has canonical bytes, failing exactly as
// AppendRecordBytes does, without writing them: the numbers, strings and
// timestamp of a record are checked, not formatted (Extra and Envelope,
// rare, are canonicalised as AppendRecordBytes does).
func CheckRecord(r *auditfmt.Record) error {
	if r.Extra != "" || r.Envelope != "" {
		_, err := AppendRecordBytes(nil, r)
		return err
	}
	w := recordWriter{dry: true}
	return w.fields(r)
}

// AppendSourcedRecordBytes appends R for a row of a dataset chained at
// ingest: the object of AppendRecordBytes with a third member,
//
//	"source": {"file": SOURCE, "line": LINE}
//
// saying where the record was read (rec.Line; the input's name as given).
// It binds a row's provenance into its chain link, so that an edit of the
// source or line columns is caught at that row. Invalid UTF-8 in source
// is written as U+FFFD, byte by byte.
func AppendSourcedRecordBytes(dst []byte, r *auditfmt.Record, source string) ([]byte, error) {
	b, err := AppendRecordBytes(dst, r)
	if err != nil {
		return dst, err
	}
	b = append(b[:len(b)-1], `,"source":{"file":`...)
	b, _ = appendJSONString(b, source)
	b = append(b, `,"line":`...)
	b = appendRowInt(b, r.Line)
	return append(b, '}', '}'), nil
}

// A recordWriter writes the members of "record" in canonical order,
// merging the schema's fields with the members of Extra.
type recordWriter struct {
	b   []byte
	dry bool           // check the fields only, write nothing (CheckRecord)
	n   int            // members written
	c   *canonicalizer // for Extra and Envelope; nil when there are none
	ext []byte         // the canonical members of Extra
	ms  []member       // Extra's members not yet written, sorted
}

// envelope writes the canonical form of the envelope's members.
func (w *recordWriter) envelope(text string) error {
	c := w.c
	c.src = append(c.src[:0], text...)
	c.in, c.member = c.src, c.member[:0]
	i := skipSpace(c.in, 0)
	if i >= len(c.in) || c.in[i] != '{' {
		return &auditfmt.FieldError{Field: "envelope", Expected: "a JSON object", Found: describeAt(c.in, i)}
	}
	var err error
	w.b, i, err = c.object(w.b, i)
	if err == nil && skipSpace(c.in, i) != len(c.in) {
		err = c.errorAt(skipSpace(c.in, i), "the end of the object")
	}
	return c.fieldError(err, "envelope")
}

// extra reads Extra's members, canonical and sorted, for merging. has
// is the record's presence bits (see addedFields).
func (w *recordWriter) extra(text string, has auditfmt.Presence) error {
	c := w.c
	c.src = append(c.src[:0], text...)
	c.in, c.member = c.src, c.member[:0]
	i := skipSpace(c.in, 0)
	if i >= len(c.in) || c.in[i] != '{' {
		return &auditfmt.FieldError{Field: "extra", Expected: "a JSON object", Found: describeAt(c.in, i)}
	}
	c.depth = 0
	err := c.enter(i)
	if err == nil {
		c.ext, i, err = c.members(c.ext[:0], i+1)
	}
	if err == nil && skipSpace(c.in, i) != len(c.in) {
		err = c.errorAt(skipSpace(c.in, i), "the end of the object")
	}
	if err != nil {
		return c.fieldError(err, "extra")
	}
	w.ext, w.ms = c.ext, c.open
	for _, m := range w.ms {
		if name := c.names[m.nameStart:m.nameEnd]; isFieldName(name) && !addedFieldAbsent(name, has) {
			return &auditfmt.FieldError{Field: string(name), Expected: "no unknown member named like a field of the schema", Found: "one in extra"}
		}
	}
	return nil
}

// fieldError turns an error of the canonicalizer into an
// *auditfmt.FieldError naming the member it is in.
func (c *canonicalizer) fieldError(err error, whole string) error {
	var je *JSONError
	if !errors.As(err, &je) {
		return err
	}
	field := string(c.member)
	if field == "" {
		field = whole
	}
	return &auditfmt.FieldError{Field: field, Expected: je.Expected, Found: je.Found}
}

// key starts the member k, after the members of Extra that sort before it.
// Field names are ASCII, so comparing bytes gives the UTF-16 order.
func (w *recordWriter) key(k *fieldKey) {
	if w.dry {
		return
	}
	for len(w.ms) > 0 && string(w.c.names[w.ms[0].nameStart:w.ms[0].nameEnd]) < k.name {
		w.member(w.ms[0])
		w.ms = w.ms[1:]
	}
	if w.n > 0 {
		w.b = append(w.b, ',')
	}
	w.b = append(w.b, k.quoted...)
	w.n++
}

// rest writes the members of Extra that sort after every field.
func (w *recordWriter) rest() {
	for _, m := range w.ms {
		w.member(m)
	}
	w.ms = nil
}

func (w *recordWriter) member(m member) {
	if w.n > 0 {
		w.b = append(w.b, ',')
	}
	w.b = append(w.b, w.ext[m.start:m.end]...)
	w.n++
}

// fields writes the fields r carries, in canonical order.
func (w *recordWriter) fields(r *auditfmt.Record) error {
	if err := w.int(&keyAttempt, r.Attempt); err != nil {
		return err
	}
	if err := w.optString(&keyAttemptID, r.AttemptID); err != nil {
		return err
	}
	if err := w.float(&keyBackoffDelay, r.BackoffDelayS); err != nil {
		return err
	}
	if r.Has&auditfmt.HasCeiling != 0 {
		if err := w.float(&keyCeiling, r.CeilingS); err != nil {
			return err
		}
	}
	w.bool(&keyCleanSession, r.CleanSession)
	if err := w.string(&keyClientID, r.ClientID); err != nil {
		return err
	}
	if r.Has&auditfmt.HasDeviceSeq != 0 {
		if err := w.int(&keyDeviceSeq, r.DeviceSeq); err != nil {
			return err
		}
	}
	if err := w.enum(&keyFailureClass, failureNames[r.FailureClass], r.FailureClass != 0, r.FailureClass.String()); err != nil {
		return err
	}
	if err := w.optString(&keyHostID, r.HostID); err != nil {
		return err
	}
	if r.Has&auditfmt.HasInboundDuplicates != 0 {
		if err := w.int(&keyInboundDuplicates, r.InboundDuplicates); err != nil {
			return err
		}
	}
	if r.Has&auditfmt.HasInboundExpired != 0 {
		if err := w.int(&keyInboundExpired, r.InboundExpired); err != nil {
			return err
		}
	}
	if r.Has&auditfmt.HasInboundRedelivered != 0 {
		if err := w.int(&keyInboundRedelivered, r.InboundRedelivered); err != nil {
			return err
		}
	}
	if r.Has&auditfmt.HasOutboxDepth != 0 {
		if err := w.int(&keyOutboxDepth, r.OutboxDepth); err != nil {
			return err
		}
	}
	if r.Has&auditfmt.HasOutboxDropped != 0 {
		if err := w.int(&keyOutboxDropped, r.OutboxDropped); err != nil {
			return err
		}
	}
	if r.Has&auditfmt.HasOutboxFlushed != 0 {
		if err := w.int(&keyOutboxFlushed, r.OutboxFlushed); err != nil {
			return err
		}
	}
	return w.laterFields(r)
}

// laterFields writes the fields from outcome on.
func (w *recordWriter) laterFields(r *auditfmt.Record) error {
	if err := w.enum(&keyOutcome, outcomeNames[r.Outcome], true, r.Outcome.String()); err != nil {
		return err
	}
	if r.Has&auditfmt.HasReasonCode != 0 {
		if err := w.int(&keyReasonCode, r.ReasonCode); err != nil {
			return err
		}
	}
	if err := w.optString(&keyRecordID, r.RecordID); err != nil {
		return err
	}
	if err := w.timestamp(r.RecordedAt, r.OffsetMin); err != nil {
		return err
	}
	if r.Has&auditfmt.HasSchema != 0 {
		if err := w.int(&keySchema, r.Schema); err != nil {
			return err
		}
	}
	if r.Has&auditfmt.HasSessionPresent != 0 {
		w.bool(&keySessionPresent, r.SessionPresent)
	}
	return w.enum(&keyStage, stageNames[r.Stage], r.Stage != 0, r.Stage.String())
}

// maxExactInt is 2^53: every integer of at most this magnitude is a double.
const maxExactInt = 1 << 53

func (w *recordWriter) int(k *fieldKey, v int64) error {
	if v > maxExactInt || v < -maxExactInt {
		return &auditfmt.FieldError{Field: k.name, Expected: "an integer within ±2^53 (9007199254740992), exact in RFC 8785 JSON", Found: strconv.FormatInt(v, 10)}
	}
	if !w.dry {
		w.key(k)
		w.b = strconv.AppendInt(w.b, v, 10)
	}
	return nil
}

func (w *recordWriter) float(k *fieldKey, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return &auditfmt.FieldError{Field: k.name, Expected: "a finite number", Found: strconv.FormatFloat(v, 'g', -1, 64)}
	}
	if !w.dry {
		w.key(k)
		w.b = appendES6(w.b, v)
	}
	return nil
}

func (w *recordWriter) bool(k *fieldKey, v bool) {
	if w.dry {
		return
	}
	w.key(k)
	w.b = strconv.AppendBool(w.b, v)
}

func (w *recordWriter) string(k *fieldKey, v string) error {
	w.key(k)
	ok := w.dry && utf8.ValidString(v)
	if !w.dry {
		w.b, ok = appendJSONString(w.b, v)
	}
	if !ok {
		return &auditfmt.FieldError{Field: k.name, Expected: "a UTF-8 string", Found: strconv.Quote(v)}
	}
	return nil
}

// optString writes an optional string field, absent when "".
func (w *recordWriter) optString(k *fieldKey, v string) error {
	if v == "" {
		return nil
	}
	return w.string(k, v)
}

// enum writes an enum field whose value has the given name ("" when the
// value is outside the vocabulary); present says whether it is set.
func (w *recordWriter) enum(k *fieldKey, name string, present bool, found string) error {
	switch {
	case !present:
		return nil
	case name == "":
		return &auditfmt.FieldError{Field: k.name, Expected: "a value of its vocabulary", Found: found}
	case w.dry:
		return nil
	}
	w.key(k)
	w.b = append(w.b, '"')
	w.b = append(w.b, name...)
	w.b = append(w.b, '"')
	return nil
}

func (w *recordWriter) timestamp(ns int64, offsetMin int16) error {
	if offsetMin <= -24*60 || offsetMin >= 24*60 {
		return &auditfmt.FieldError{Field: keyRecordedAt.name, Expected: "a UTC offset within ±23:59", Found: strconv.Itoa(int(offsetMin)) + " minutes"}
	}
	if w.dry {
		return nil
	}
	w.key(&keyRecordedAt)
	w.b = append(w.b, '"')
	w.b = auditfmt.AppendTimestamp(w.b, ns, offsetMin)
	w.b = append(w.b, '"')
	return nil
}

// A fieldKey is a field's wire name, and the name quoted with the colon
// after it.
type fieldKey struct{ name, quoted string }

func newKey(name string) fieldKey { return fieldKey{name, strconv.Quote(name) + ":"} }

// The fields of a record. recordKeys lists them in canonical order, the
// order fields writes them in.
var (
	keyAttempt            = newKey("attempt")
	keyAttemptID          = newKey("attempt_id")
	keyBackoffDelay       = newKey("backoff_delay_s")
	keyCeiling            = newKey("ceiling_s")
	keyCleanSession       = newKey("clean_session")
	keyClientID           = newKey("client_id")
	keyDeviceSeq          = newKey("device_seq")
	keyFailureClass       = newKey("failure_class")
	keyHostID             = newKey("host_id")
	keyInboundDuplicates  = newKey("inbound_duplicates")
	keyInboundExpired     = newKey("inbound_expired")
	keyInboundRedelivered = newKey("inbound_redelivered")
	keyOutboxDepth        = newKey("outbox_depth")
	keyOutboxDropped      = newKey("outbox_dropped")
	keyOutboxFlushed      = newKey("outbox_flushed")
	keyOutcome            = newKey("outcome")
	keyReasonCode         = newKey("reason_code")
	keyRecordID           = newKey("record_id")
	keyRecordedAt         = newKey("recorded_at")
	keySchema             = newKey("schema")
	keySessionPresent     = newKey("session_present")
	keyStage              = newKey("stage")

	recordKeys = []*fieldKey{
		&keyAttempt, &keyAttemptID, &keyBackoffDelay, &keyCeiling, &keyCleanSession,
		&keyClientID, &keyDeviceSeq, &keyFailureClass, &keyHostID, &keyInboundDuplicates,
		&keyInboundExpired, &keyInboundRedelivered, &keyOutboxDepth, &keyOutboxDropped,
		&keyOutboxFlushed, &keyOutcome, &keyReasonCode, &keyRecordID, &keyRecordedAt,
		&keySchema, &keySessionPresent, &keyStage,
	}

	// addedFields are the fields added to the schema (version 1) after
	// datasets were written without them. Those datasets keep such a
	// member, as the device wrote it, in extra, and their rows' R holds it
	// there, where the field sorts too. So an unknown member of such a name
	// is allowed in a record that lacks the field: the dataset still
	// verifies, and R is the one the field would give (the same name, the
	// value in its canonical form). A record that has the field and the
	// member has none, like any other with a member named twice.
	addedFields = []struct {
		key *fieldKey
		has auditfmt.Presence
	}{
		{&keyOutboxDepth, auditfmt.HasOutboxDepth},
		{&keyOutboxFlushed, auditfmt.HasOutboxFlushed},
		{&keyInboundRedelivered, auditfmt.HasInboundRedelivered},
		{&keyInboundDuplicates, auditfmt.HasInboundDuplicates},
		{&keyOutboxDropped, auditfmt.HasOutboxDropped},
		{&keyInboundExpired, auditfmt.HasInboundExpired},
	}
)

// addedFieldAbsent reports whether name is that of one of addedFields
// which has says the record lacks.
func addedFieldAbsent(name []byte, has auditfmt.Presence) bool {
	for _, f := range addedFields {
		if string(name) == f.key.name {
			return has&f.has == 0
		}
	}
	return false
}

// isFieldName reports whether an unknown member may not have this name:
// the name of a field, of the device_id alias, or "audit".
func isFieldName(name []byte) bool {
	switch string(name) {
	case "device_id", "audit":
		return true
	}
	for _, k := range recordKeys {
		if string(name) == k.name {
			return true
		}
	}
	return false
}

// The names of the enum values, indexed by value; "" outside the vocabulary.
var (
	outcomeNames = enumNames(func(v uint8) (string, bool) {
		s := auditfmt.Outcome(v).String()
		_, ok := auditfmt.ParseOutcome(s)
		return s, ok
	})
	stageNames = enumNames(func(v uint8) (string, bool) {
		s := auditfmt.Stage(v).String()
		_, ok := auditfmt.ParseStage(s)
		return s, ok
	})
	failureNames = enumNames(func(v uint8) (string, bool) {
		s := auditfmt.FailureClass(v).String()
		_, ok := auditfmt.ParseFailureClass(s)
		return s, ok
	})
)

func enumNames(name func(uint8) (string, bool)) (names [256]string) {
	for v := 1; v < len(names); v++ {
		if s, ok := name(uint8(v)); ok && !strings.ContainsAny(s, "\"\\") {
			names[v] = s
		}
	}
	return names
}
