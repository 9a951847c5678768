package auditfmt

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// SchemaVersion is the version of the record schema this package reads and
// writes. A record that declares another version in its "schema" field is
// rejected.
const SchemaVersion = 1

// Outcome is what a record says happened. The zero value is not a valid
// outcome.
type Outcome uint8

// The outcome vocabulary. The first four are the ones the reference client
// writes; the rest are extensions of the schema.
const (
	Connected       Outcome = iota + 1 // CONNACK with return code 0; the counter is already reset
	BackoffWait                        // a delay was drawn; a socket-open follows after it
	RateLimitedWait                    // a wait imposed by the connect rate limit
	AttemptFailed                      // an attempt failed; the counter is already incremented
	Refused                            // CONNACK with a non-zero return code
	Disconnected                       // an established session was lost
	GaveUp                             // the client stopped retrying on its own
	Stopped                            // a graceful stop asked for by the application
)

var outcomeNames = [...]string{
	Connected:       "connected",
	BackoffWait:     "backoff_wait",
	RateLimitedWait: "rate_limited_wait",
	AttemptFailed:   "attempt_failed",
	Refused:         "refused",
	Disconnected:    "disconnected",
	GaveUp:          "gave_up",
	Stopped:         "stopped",
}

// String returns the outcome's name as it is written in a record.
func (o Outcome) String() string {
	if o == 0 || int(o) >= len(outcomeNames) {
		return fmt.Sprintf("Outcome(%d)", uint8(o))
	}
	return outcomeNames[o]
}

// ParseOutcome returns the outcome named s.
func ParseOutcome(s string) (Outcome, bool) {
	for o := Connected; int(o) < len(outcomeNames); o++ {
		if outcomeNames[o] == s {
			return o, true
		}
	}
	return 0, false
}

// Stage is the layer an attempt belongs to. The zero value means the record
// did not say; readers treat that as StageSession.
type Stage uint8

// The stages.
const (
	StageLink    Stage = iota + 1 // the network link (Wi-Fi association, modem attach)
	StageAddress                  // address assignment and name resolution
	StageSession                  // the MQTT session
	// StageService is the first useful exchange after a session: its
	// connected record is the first (subscriptions acknowledged, a first
	// publish acknowledged, or a first message received); its refused a
	// SUBACK failure, its attempt_failed a timeout (docs/format.md).
	StageService
)

var stageNames = [...]string{StageLink: "link", StageAddress: "address", StageSession: "session", StageService: "service"}

// String returns the stage's name, or "" for the zero value.
func (s Stage) String() string {
	if int(s) >= len(stageNames) {
		return fmt.Sprintf("Stage(%d)", uint8(s))
	}
	return stageNames[s]
}

// ParseStage returns the stage named s.
func ParseStage(s string) (Stage, bool) {
	for v := StageLink; int(v) < len(stageNames); v++ {
		if stageNames[v] == s {
			return v, true
		}
	}
	return 0, false
}

// FailureClass says why an attempt failed. The zero value means the record
// did not say.
type FailureClass uint8

// The failure classes.
const (
	FailTransient   FailureClass = iota + 1 // network errors, timeouts
	FailAuth                                // bad credentials, not authorised
	FailConfig                              // a client misconfiguration
	FailUnsupported                         // protocol version or feature refused
	FailOverload                            // the broker is busy or over quota
	FailUnknown                             // the client could not tell
)

var failureNames = [...]string{
	FailTransient:   "transient",
	FailAuth:        "auth",
	FailConfig:      "config",
	FailUnsupported: "unsupported",
	FailOverload:    "overload",
	FailUnknown:     "unknown",
}

// String returns the failure class's name, or "" for the zero value.
func (f FailureClass) String() string {
	if int(f) >= len(failureNames) {
		return fmt.Sprintf("FailureClass(%d)", uint8(f))
	}
	return failureNames[f]
}

// ParseFailureClass returns the failure class named s.
func ParseFailureClass(s string) (FailureClass, bool) {
	for v := FailTransient; int(v) < len(failureNames); v++ {
		if failureNames[v] == s {
			return v, true
		}
	}
	return 0, false
}

// Presence records which optional numeric and boolean fields a record
// carries. Optional strings and enums are absent when empty or zero.
type Presence uint16

// The presence bits.
const (
	HasSchema Presence = 1 << iota
	HasDeviceSeq
	HasReasonCode
	HasCeiling
	HasSessionPresent
	HasOutboxDepth
	HasOutboxFlushed
	HasInboundRedelivered
	HasInboundDuplicates
	HasOutboxDropped
	HasInboundExpired
)

// Record is one audit record, schema version 1. Field names in comments are
// the names written on the wire.
//
// A Record holds no pointers besides its strings, so large numbers of them
// can be sorted cheaply.
type Record struct {
	ClientID      string  // client_id (alias device_id): required, non-empty
	RecordedAt    int64   // recorded_at: required; Unix time in nanoseconds
	BackoffDelayS float64 // backoff_delay_s: required; finite and >= 0
	Attempt       int64   // attempt: required; >= 0
	OffsetMin     int16   // the UTC offset recorded_at was written with, in minutes
	Outcome       Outcome // outcome: required
	CleanSession  bool    // clean_session: required

	Has                Presence     // which optional numeric and boolean fields are set
	Stage              Stage        // stage: optional
	FailureClass       FailureClass // failure_class: optional
	SessionPresent     bool         // session_present: optional (HasSessionPresent)
	Schema             int64        // schema: optional (HasSchema); always SchemaVersion when set
	DeviceSeq          int64        // device_seq: optional (HasDeviceSeq); >= 0
	ReasonCode         int64        // reason_code: optional (HasReasonCode); 0..255
	CeilingS           float64      // ceiling_s: optional (HasCeiling); finite and >= 0
	OutboxDepth        int64        // outbox_depth: optional (HasOutboxDepth); >= 0
	OutboxFlushed      int64        // outbox_flushed: optional (HasOutboxFlushed); >= 0
	InboundRedelivered int64        // inbound_redelivered: optional (HasInboundRedelivered); >= 0
	InboundDuplicates  int64        // inbound_duplicates: optional (HasInboundDuplicates); 0..InboundRedelivered
	OutboxDropped      int64        // outbox_dropped: optional (HasOutboxDropped); >= 0
	InboundExpired     int64        // inbound_expired: optional (HasInboundExpired); 0..InboundRedelivered
	HostID             string       // host_id: optional, non-empty when set
	AttemptID          string       // attempt_id: optional, non-empty when set
	RecordID           string       // record_id: optional, non-empty when set

	// Extra holds the members the schema does not know, as a JSON object
	// ("" when there are none). Values keep the text the device wrote.
	Extra string
	// Envelope holds the members of a structured-logging envelope other
	// than "audit", as a JSON object ("" for a flat record). It is not part
	// of the record's identity.
	Envelope string

	// Source and Line say where the record was read: an index into the
	// list of inputs and the 1-based line (or row) within it. They are not
	// part of the record's identity.
	Source uint32
	Line   int64
}

// MaxIDBytes bounds client_id, host_id, attempt_id and record_id: MQTT
// allows a client id of at most 65,535 bytes (a UTF-8 string's length is
// two bytes), and a longer one is no device's; 1,000 records of 1 MB
// client ids took 11 GB to ingest.
const MaxIDBytes = 65535

const idExpected = "at most 65535 bytes (MQTT's limit on a client id)"

// MaxLineBytes is the default limit on the length of one input line.
const MaxLineBytes = 1 << 20

// Validate checks the invariants a decoded record must hold. Decoders call
// it; it is exported for records built in code.
func (r *Record) Validate() error {
	switch {
	case r.ClientID == "":
		return &FieldError{Field: "client_id", Expected: "a non-empty string", Found: "an empty string"}
	case len(r.ClientID) > MaxIDBytes:
		return &FieldError{Field: "client_id", Expected: idExpected, Found: fmt.Sprintf("%d bytes", len(r.ClientID))}
	case len(r.HostID) > MaxIDBytes:
		return &FieldError{Field: "host_id", Expected: idExpected, Found: fmt.Sprintf("%d bytes", len(r.HostID))}
	case len(r.AttemptID) > MaxIDBytes:
		return &FieldError{Field: "attempt_id", Expected: idExpected, Found: fmt.Sprintf("%d bytes", len(r.AttemptID))}
	case len(r.RecordID) > MaxIDBytes:
		return &FieldError{Field: "record_id", Expected: idExpected, Found: fmt.Sprintf("%d bytes", len(r.RecordID))}
	case r.Attempt < 0:
		return &FieldError{Field: "attempt", Expected: "an integer >= 0", Found: fmt.Sprint(r.Attempt)}
	case !validDelay(r.BackoffDelayS):
		return &FieldError{Field: "backoff_delay_s", Expected: delayExpected, Found: formatFloat(r.BackoffDelayS)}
	case r.Outcome == 0 || int(r.Outcome) >= len(outcomeNames):
		return &FieldError{Field: "outcome", Expected: "one of " + strings.Join(outcomeNames[1:], ", "), Found: r.Outcome.String()}
	case r.OffsetMin <= -24*60 || r.OffsetMin >= 24*60:
		return &FieldError{Field: "recorded_at", Expected: "a UTC offset within ±23:59", Found: fmt.Sprintf("%d minutes", r.OffsetMin)}
	case int(r.Stage) >= len(stageNames):
		return &FieldError{Field: "stage", Expected: "link, address or session", Found: r.Stage.String()}
	case int(r.FailureClass) >= len(failureNames):
		return &FieldError{Field: "failure_class", Expected: "one of " + strings.Join(failureNames[1:], ", "), Found: r.FailureClass.String()}
	case r.Has&HasSchema != 0 && r.Schema != SchemaVersion:
		return &FieldError{Field: "schema", Expected: fmt.Sprint(SchemaVersion), Found: fmt.Sprint(r.Schema)}
	case r.Has&HasDeviceSeq != 0 && r.DeviceSeq < 0:
		return &FieldError{Field: "device_seq", Expected: "an integer >= 0", Found: fmt.Sprint(r.DeviceSeq)}
	case r.Has&HasReasonCode != 0 && (r.ReasonCode < 0 || r.ReasonCode > 255):
		return &FieldError{Field: "reason_code", Expected: "an integer in 0..255", Found: fmt.Sprint(r.ReasonCode)}
	case r.Has&HasCeiling != 0 && !validDelay(r.CeilingS):
		return &FieldError{Field: "ceiling_s", Expected: delayExpected, Found: formatFloat(r.CeilingS)}
	case r.Has&HasOutboxDepth != 0 && r.OutboxDepth < 0:
		return &FieldError{Field: "outbox_depth", Expected: "an integer >= 0", Found: fmt.Sprint(r.OutboxDepth)}
	case r.Has&HasOutboxFlushed != 0 && r.OutboxFlushed < 0:
		return &FieldError{Field: "outbox_flushed", Expected: "an integer >= 0", Found: fmt.Sprint(r.OutboxFlushed)}
	case r.Has&HasInboundRedelivered != 0 && r.InboundRedelivered < 0:
		return &FieldError{Field: "inbound_redelivered", Expected: "an integer >= 0", Found: fmt.Sprint(r.InboundRedelivered)}
	case r.Has&HasInboundDuplicates != 0 && r.InboundDuplicates < 0:
		return &FieldError{Field: "inbound_duplicates", Expected: "an integer >= 0", Found: fmt.Sprint(r.InboundDuplicates)}
	case r.Has&HasInboundDuplicates != 0 && r.Has&HasInboundRedelivered != 0 && r.InboundDuplicates > r.InboundRedelivered:
		return &FieldError{Field: "inbound_duplicates", Expected: fmt.Sprintf("at most inbound_redelivered (%d)", r.InboundRedelivered),
			Found: fmt.Sprint(r.InboundDuplicates)}
	case r.Has&HasOutboxDropped != 0 && r.OutboxDropped < 0:
		return &FieldError{Field: "outbox_dropped", Expected: "an integer >= 0", Found: fmt.Sprint(r.OutboxDropped)}
	case r.Has&HasInboundExpired != 0 && r.InboundExpired < 0:
		return &FieldError{Field: "inbound_expired", Expected: "an integer >= 0", Found: fmt.Sprint(r.InboundExpired)}
	case r.Has&HasInboundExpired != 0 && r.Has&HasInboundRedelivered != 0 && r.InboundExpired > r.InboundRedelivered:
		return &FieldError{Field: "inbound_expired", Expected: fmt.Sprintf("at most inbound_redelivered (%d)", r.InboundRedelivered),
			Found: fmt.Sprint(r.InboundExpired)}
	}
	return nil
}

// The plausible delays (backoff_delay_s, ceiling_s): 0, or from MinDelayS
// to MaxDelayS. A negative zero is a negative delay rounded (a client
// computing its delay from two clock readings); a number too small to be
// anything but 0 is below any clock's precision; a delay beyond 30 days is
// no retry timer but a unit or encoding error, and would place the
// socket-open it implies in another decade.
const (
	MinDelayS     = 1e-9              // a nanosecond, the precision of timestamps
	MaxDelayS     = 30 * 24 * 60 * 60 // 30 days
	delayExpected = "0, or a number from 1e-9 to 2592000 (30 days)"
)

func validDelay(f float64) bool {
	return f == 0 && !math.Signbit(f) || f >= MinDelayS && f <= MaxDelayS
}

// parseDelay parses the text of a delay and reports whether it is
// plausible: a value that is 0 only because it underflowed (1e-400) is
// not.
func parseDelay(text []byte) (float64, bool) {
	if bytes.IndexByte(text, '_') >= 0 { // ParseFloat reads "1_0" as 10; no log means that
		return math.NaN(), false
	}
	v, err := strconv.ParseFloat(string(text), 64)
	if err != nil || !validDelay(v) {
		return v, false
	}
	return v, v != 0 || zeroMantissa(text)
}

// zeroMantissa reports whether every digit of a number's text before its
// exponent is 0.
func zeroMantissa(text []byte) bool {
	for _, c := range text {
		switch {
		case c == 'e' || c == 'E':
			return true
		case c >= '1' && c <= '9':
			return false
		}
	}
	return true
}

// FieldError says what is wrong with one field of a record.
type FieldError struct {
	Field    string // the field's wire name, or "" for the line as a whole
	Expected string // what the schema expects, for example "an integer >= 0"
	Found    string // what the line held, for example "-1" or "a string"
}

func (e *FieldError) Error() string {
	msg := "expected " + e.Expected
	if e.Found != "" {
		msg += ", found " + e.Found
	}
	if e.Field == "" {
		return msg
	}
	return e.Field + ": " + msg
}

// LineError places an error at a line (or row) of an input.
type LineError struct {
	File string // the input's name as the user gave it; "-" for stdin
	Line int64  // 1-based line or row number
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }

// Unwrap returns the underlying error.
func (e *LineError) Unwrap() error { return e.Err }
