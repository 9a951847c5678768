// Package auditfmt is the audit record format, schema version 1
// ([SchemaVersion]): the record a device writes each time its MQTT client
// connects, backs off, fails or gives up, how a line of NDJSON or a row of
// CSV holds one, and what makes a record valid. docs/format.md is the
// format's full text, for the people who write the records; this is its
// Go side.
//
// # The record
//
// A [Record] has six required fields, client_id (or its alias
// device_id), attempt, backoff_delay_s, outcome, clean_session and
// recorded_at, and optional ones: schema, host_id, stage, attempt_id,
// record_id, device_seq, failure_class, reason_code, ceiling_s,
// session_present, and the outbox and inbound counters. Each field's
// comment in Record names it as it is written and gives its rule; the
// table in docs/format.md gives them all. In short:
//
//   - ids are non-empty strings of at most [MaxIDBytes] bytes, MQTT's
//     limit on a client id;
//   - counts and attempt numbers are integers >= 0 (3.0 is not one);
//   - delays (backoff_delay_s, ceiling_s) are 0, or from [MinDelayS] (a
//     nanosecond) to [MaxDelayS] (30 days);
//   - outcome, stage and failure_class are names from fixed vocabularies
//     ([Outcome], [Stage], [FailureClass]);
//   - recorded_at is RFC 3339 with a UTC offset, kept as Unix
//     nanoseconds and the offset it was written with ([ParseTimestamp],
//     [AppendTimestamp]).
//
// An optional field is absent when it is not written or is null: an
// absent string or enum is "" or zero, an absent number or boolean has
// its bit clear in Record.Has ([Presence]), so that a reason_code of 0 is
// told from none. Members the schema does not know are not rejected but
// kept, in Record.Extra, a JSON object of them in the order and the text
// the device wrote them.
//
// # Lines
//
// A [Decoder] reads NDJSON, one object a line, in either of two shapes:
// a flat record, or a structured-logging envelope whose "audit" member
// holds the record (the envelope's other members go to Record.Envelope).
// It accepts exactly the JSON json.Valid accepts, except that strings
// must be UTF-8, Python's NaN and Infinity are rejected by name, and a
// member may not be named twice. A line is at most [MaxLineBytes].
//
// A [CSVReader] reads CSV whose header names the columns; unknown columns
// go to Extra as strings. [Record.AppendJSON] and [CSVWriter] write
// records back, so that reading what they wrote gives equal records.
//
// # Identity and order
//
// Audit records travel at least once, so a record can arrive twice.
// [SameRecord] says when two are one: the same record_id (with client_id
// and recorded_at), or, without one, the same content, Envelope and where
// it was read aside. [Compare] is the order a dataset stores records in:
// client_id, then recorded_at, then content, so that duplicates are
// adjacent.
//
// # Errors
//
// What is wrong with a record is a [*FieldError] naming the field (by its
// written name, "" for the line as a whole), what the format expects there
// and what the line held:
//
//	backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found -1.5
//
// A [*LineError] places one at a line of an input. Decoders call
// [Record.Validate], which holds a record built in code to the same rules.
//
// # Example
//
//	var d auditfmt.Decoder
//	var rec auditfmt.Record
//	for n := 1; sc.Scan(); n++ {
//		if err := d.Decode(sc.Bytes(), &rec); err != nil {
//			return &auditfmt.LineError{File: name, Line: int64(n), Err: err}
//		}
//		fmt.Println(rec.ClientID, rec.Outcome, rec.Time())
//	}
package auditfmt
