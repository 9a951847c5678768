package auditfmt_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
)

const csvHeader = "client_id,attempt,backoff_delay_s,outcome,clean_session,recorded_at"

const csvTimestamp = "2026-11-30T14:17:34.979964+00:00"

func TestCSVHeaderErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
		field          string
	}{
		{"empty input", "", "expected a header row naming the columns, found an empty input", ""},
		{"empty line", "\nclient_id", "expected a header row naming the columns, found an empty line", ""},
		{"empty CRLF line", "\r\n", "expected a header row naming the columns, found an empty line", ""},
		{"only a BOM", "\xef\xbb\xbf", "expected a header row naming the columns, found an empty input", ""},
		{"empty name", "client_id,,attempt", "expected a name for every column, found an empty name for column 2", ""},
		{"trailing comma", csvHeader + ",", "expected a name for every column, found an empty name for column 7", ""},
		{"duplicate", csvHeader + ",attempt", "attempt: expected one column of each name, found columns 2 and 7", "attempt"},
		{"duplicate unknown", csvHeader + ",note,x,note", "note: expected one column of each name, found columns 7 and 9", "note"},
		{"alias and name", csvHeader + ",device_id", "device_id: expected either client_id or its alias device_id, found both (columns 1 and 7)", "device_id"},
		{"missing client_id", "attempt,backoff_delay_s,outcome,clean_session,recorded_at",
			"client_id: expected a header column, or its alias device_id (required), found no such column", "client_id"},
		{"missing attempt", "client_id,backoff_delay_s,outcome,clean_session,recorded_at",
			"attempt: expected a header column (required), found no such column", "attempt"},
		{"missing recorded_at", "device_id,attempt,backoff_delay_s,outcome,clean_session,note",
			"recorded_at: expected a header column (required), found no such column", "recorded_at"},
		{"near name", "client_id,Attempt,backoff_delay_s,outcome,clean_session,recorded_at",
			`attempt: expected a header column (required), found no such column (there is "Attempt")`, "attempt"},
		{"near name with spaces", "client_id, attempt,backoff_delay_s,outcome,clean_session,recorded_at",
			`attempt: expected a header column (required), found no such column (there is " attempt")`, "attempt"},
		{"bad quote", `client_id,att"empt`, "expected quotes only around a whole field, found a quote inside unquoted field 2", ""},
		{"text after quote", `"client_id"x,attempt`, "expected a comma or the end of the row after a closing quote, found 'x' in field 1", ""},
		{"unterminated", `client_id,"attempt`, "expected a closing quote, found the end of the input in field 2", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := auditfmt.NewCSVReader(strings.NewReader(tt.in))
			var fe *auditfmt.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("NewCSVReader(%q) = %v, want a *FieldError", tt.in, err)
			}
			if err.Error() != tt.want || fe.Field != tt.field {
				t.Errorf("NewCSVReader(%q):\n got %q (field %q)\nwant %q (field %q)", tt.in, err, fe.Field, tt.want, tt.field)
			}
		})
	}
}

func TestCSVHeaderTooLong(t *testing.T) {
	in := strings.Repeat("x", auditfmt.MaxLineBytes+1) + "\n"
	_, err := auditfmt.NewCSVReader(strings.NewReader(in))
	want := fmt.Sprintf("expected a row of at most %d bytes, found a longer row", auditfmt.MaxLineBytes)
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestCSVHeaderColumns(t *testing.T) {
	in := "\xef\xbb\xbf\"recorded_at\",device_id,attempt,backoff_delay_s,outcome,clean_session,\"a,b\",\"line\nbreak\",stage,\xffbad\n"
	c, err := auditfmt.NewCSVReader(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	cols := []string{"recorded_at", "device_id", "attempt", "backoff_delay_s", "outcome", "clean_session", "a,b", "line\nbreak", "stage", "\uFFFDbad"}
	if got := c.Columns(); !reflect.DeepEqual(got, cols) {
		t.Errorf("Columns() = %q, want %q", got, cols)
	}
	extra := []string{"a,b", "line\nbreak", "\uFFFDbad"}
	if got := c.ExtraColumns(); !reflect.DeepEqual(got, extra) {
		t.Errorf("ExtraColumns() = %q, want %q", got, extra)
	}
}

func TestCSVRowErrors(t *testing.T) {
	const ts = csvTimestamp
	tests := []struct {
		name, header, row, want string
		field                   string
	}{
		{"blank line", csvHeader, "", "expected a CSV row, found an empty line", ""},
		{"too many fields", csvHeader, "d,1,0.5,backoff_wait,true," + ts + ",x", "expected 6 fields as in the header, found 7", ""},
		{"too few fields", csvHeader, "d,1,0.5,backoff_wait,true", "expected 6 fields as in the header, found 5", ""},
		{"blank-looking row", csvHeader, " ", "expected 6 fields as in the header, found 1", ""},
		{"quote inside field", csvHeader, `d,1,0.5,back"off_wait,true,` + ts,
			"expected quotes only around a whole field, found a quote inside unquoted field 4 (outcome)", ""},
		{"text after quote", csvHeader, `d,"1"2,0.5,backoff_wait,true,` + ts,
			"expected a comma or the end of the row after a closing quote, found '2' in field 2 (attempt)", ""},
		{"unterminated quote", csvHeader, `d,1,0.5,backoff_wait,true,"` + ts,
			"expected a closing quote, found the end of the input in field 6 (recorded_at)", ""},
		{"quote error beats count", csvHeader, `d,1,0.5,backoff_wait,true,x"`,
			"expected quotes only around a whole field, found a quote inside unquoted field 6 (recorded_at)", ""},

		{"missing client_id", csvHeader, ",1,0.5,backoff_wait,true," + ts,
			"client_id: expected a non-empty string (required), found an empty cell", "client_id"},
		{"missing device_id", "device_id,attempt,backoff_delay_s,outcome,clean_session,recorded_at", ",1,0.5,backoff_wait,true," + ts,
			"device_id: expected a non-empty string (required), found an empty cell", "device_id"},
		{"missing attempt", csvHeader, "d,,0.5,backoff_wait,true," + ts,
			"attempt: expected an integer >= 0 (required), found an empty cell", "attempt"},
		{"missing delay", csvHeader, `d,1,"",backoff_wait,true,` + ts,
			"backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days) (required), found an empty cell", "backoff_delay_s"},
		{"missing outcome", csvHeader, "d,1,0.5,,true," + ts,
			"outcome: expected one of connected, backoff_wait, rate_limited_wait, attempt_failed, refused, disconnected, gave_up, stopped (required), found an empty cell", "outcome"},
		{"missing clean_session", csvHeader, "d,1,0.5,backoff_wait,," + ts,
			"clean_session: expected true or false (required), found an empty cell", "clean_session"},
		{"missing recorded_at", csvHeader, "d,1,0.5,backoff_wait,true,",
			"recorded_at: expected an RFC 3339 timestamp with a UTC offset, like 2026-11-30T14:17:34.979964+00:00 (required), found an empty cell", "recorded_at"},

		{"negative attempt", csvHeader, "d,-1,0.5,backoff_wait,true," + ts, "attempt: expected an integer >= 0, found -1", "attempt"},
		{"text attempt", csvHeader, "d,one,0.5,backoff_wait,true," + ts, `attempt: expected an integer >= 0, found "one"`, "attempt"},
		{"float attempt", csvHeader, "d,1.0,0.5,backoff_wait,true," + ts, `attempt: expected an integer >= 0, found "1.0"`, "attempt"},
		{"huge attempt", csvHeader, "d,99999999999999999999,0.5,backoff_wait,true," + ts,
			`attempt: expected an integer >= 0, found "99999999999999999999" (out of range)`, "attempt"},
		{"NaN delay", csvHeader, "d,1,NaN,backoff_wait,true," + ts, "backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found NaN", "backoff_delay_s"},
		{"nan delay", csvHeader, "d,1,nan,backoff_wait,true," + ts, "backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found NaN", "backoff_delay_s"},
		{"Inf delay", csvHeader, "d,1,Inf,backoff_wait,true," + ts, "backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found Infinity", "backoff_delay_s"},
		{"-Infinity delay", csvHeader, "d,1,-Infinity,backoff_wait,true," + ts, "backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found -Infinity", "backoff_delay_s"},
		{"negative delay", csvHeader, "d,1,-0.25,backoff_wait,true," + ts, "backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found -0.25", "backoff_delay_s"},
		{"negative zero delay", csvHeader, "d,1,-0,backoff_wait,true," + ts, "backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found \"-0\"", "backoff_delay_s"},
		{"underflowing delay", csvHeader, "d,1,1e-400,backoff_wait,true," + ts, "backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found \"1e-400\"", "backoff_delay_s"},
		{"implausible delay", csvHeader, "d,1,1e308,backoff_wait,true," + ts, "backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found 1e+308", "backoff_delay_s"},
		{"overflowing delay", csvHeader, "d,1,1e400,backoff_wait,true," + ts,
			`backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found "1e400" (out of range)`, "backoff_delay_s"},
		{"underscored delay", csvHeader, "d,1,1_0,backoff_wait,true," + ts, `backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found "1_0"`, "backoff_delay_s"},
		{"text delay", csvHeader, "d,1,0.5s,backoff_wait,true," + ts, `backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found "0.5s"`, "backoff_delay_s"},
		{"unknown outcome", csvHeader, "d,1,0.5,reconnecting,true," + ts,
			`outcome: expected one of connected, backoff_wait, rate_limited_wait, attempt_failed, refused, disconnected, gave_up, stopped, found "reconnecting"`, "outcome"},
		{"bad bool", csvHeader, "d,1,0.5,backoff_wait,yes," + ts, `clean_session: expected true or false, found "yes"`, "clean_session"},
		{"TRUE", csvHeader, "d,1,0.5,backoff_wait,TRUE," + ts, `clean_session: expected true or false, found "TRUE"`, "clean_session"},
		{"bad timestamp", csvHeader, "d,1,0.5,backoff_wait,true,2026-11-30 14:17:34",
			`recorded_at: expected an RFC 3339 timestamp with a UTC offset, like 2026-11-30T14:17:34.979964+00:00, found "2026-11-30 14:17:34"`, "recorded_at"},
		{"no offset", csvHeader, "d,1,0.5,backoff_wait,true,2026-11-30T14:17:34.5",
			`recorded_at: expected an RFC 3339 timestamp with a UTC offset, like 2026-11-30T14:17:34.979964+00:00, found "2026-11-30T14:17:34.5" (no UTC offset)`, "recorded_at"},
		{"long timestamp", csvHeader, "d,1,0.5,backoff_wait,true," + strings.Repeat("9", 100),
			`recorded_at: expected an RFC 3339 timestamp with a UTC offset, like 2026-11-30T14:17:34.979964+00:00, found "` + strings.Repeat("9", 64) + `"... (100 bytes)`, "recorded_at"},

		{"schema 2", csvHeader + ",schema", "d,1,0.5,backoff_wait,true," + ts + ",2", "schema: expected 1, found 2", "schema"},
		{"schema text", csvHeader + ",schema", "d,1,0.5,backoff_wait,true," + ts + ",v1", `schema: expected 1, found "v1"`, "schema"},
		{"bad stage", csvHeader + ",stage", "d,1,0.5,backoff_wait,true," + ts + ",tcp", `stage: expected link, address or session, found "tcp"`, "stage"},
		{"negative device_seq", csvHeader + ",device_seq", "d,1,0.5,backoff_wait,true," + ts + ",-3", "device_seq: expected an integer >= 0, found -3", "device_seq"},
		{"bad failure_class", csvHeader + ",failure_class", "d,1,0.5,attempt_failed,true," + ts + ",Auth",
			`failure_class: expected one of transient, auth, config, unsupported, overload, unknown, found "Auth"`, "failure_class"},
		{"reason_code 256", csvHeader + ",reason_code", "d,1,0.5,refused,true," + ts + ",256", "reason_code: expected an integer in 0..255, found 256", "reason_code"},
		{"reason_code hex", csvHeader + ",reason_code", "d,1,0.5,refused,true," + ts + ",0x87", `reason_code: expected an integer in 0..255, found "0x87"`, "reason_code"},
		{"NaN ceiling", csvHeader + ",ceiling_s", "d,1,0.5,backoff_wait,true," + ts + ",NaN", "ceiling_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found NaN", "ceiling_s"},
		{"bad session_present", csvHeader + ",session_present", "d,1,0.5,connected,true," + ts + ",maybe",
			`session_present: expected true or false, found "maybe"`, "session_present"},
		{"negative outbox_depth", csvHeader + ",outbox_depth", "d,1,0.5,backoff_wait,true," + ts + ",-1", "outbox_depth: expected an integer >= 0, found -1", "outbox_depth"},
		{"fractional outbox_depth", csvHeader + ",outbox_depth", "d,1,0.5,backoff_wait,true," + ts + ",1.5", `outbox_depth: expected an integer >= 0, found "1.5"`, "outbox_depth"},
		{"huge outbox_depth", csvHeader + ",outbox_depth", "d,1,0.5,backoff_wait,true," + ts + ",9223372036854775808",
			`outbox_depth: expected an integer >= 0, found "9223372036854775808" (out of range)`, "outbox_depth"},
		{"negative outbox_flushed", csvHeader + ",outbox_flushed", "d,1,0.5,connected,true," + ts + ",-1", "outbox_flushed: expected an integer >= 0, found -1", "outbox_flushed"},
		{"fractional outbox_flushed", csvHeader + ",outbox_flushed", "d,1,0.5,connected,true," + ts + ",1.5", `outbox_flushed: expected an integer >= 0, found "1.5"`, "outbox_flushed"},
		{"text outbox_flushed", csvHeader + ",outbox_flushed", "d,1,0.5,connected,true," + ts + ",three", `outbox_flushed: expected an integer >= 0, found "three"`, "outbox_flushed"},
		{"negative inbound_redelivered", csvHeader + ",inbound_redelivered", "d,1,0.5,connected,true," + ts + ",-1", "inbound_redelivered: expected an integer >= 0, found -1", "inbound_redelivered"},
		{"fractional inbound_redelivered", csvHeader + ",inbound_redelivered", "d,1,0.5,connected,true," + ts + ",2.5", `inbound_redelivered: expected an integer >= 0, found "2.5"`, "inbound_redelivered"},
		{"negative inbound_duplicates", csvHeader + ",inbound_duplicates", "d,1,0.5,connected,true," + ts + ",-3", "inbound_duplicates: expected an integer >= 0, found -3", "inbound_duplicates"},
		{"text inbound_duplicates", csvHeader + ",inbound_duplicates", "d,1,0.5,connected,true," + ts + ",two", `inbound_duplicates: expected an integer >= 0, found "two"`, "inbound_duplicates"},
		{"inbound_duplicates beyond inbound_redelivered", csvHeader + ",inbound_redelivered,inbound_duplicates", "d,1,0.5,connected,true," + ts + ",3,4",
			"inbound_duplicates: expected at most inbound_redelivered (3), found 4", "inbound_duplicates"},
		{"negative outbox_dropped", csvHeader + ",outbox_dropped", "d,1,0.5,connected,true," + ts + ",-1", "outbox_dropped: expected an integer >= 0, found -1", "outbox_dropped"},
		{"text inbound_expired", csvHeader + ",inbound_expired", "d,1,0.5,connected,true," + ts + ",old", `inbound_expired: expected an integer >= 0, found "old"`, "inbound_expired"},
		{"inbound_expired beyond inbound_redelivered", csvHeader + ",inbound_redelivered,inbound_expired", "d,1,0.5,connected,true," + ts + ",3,5",
			"inbound_expired: expected at most inbound_redelivered (3), found 5", "inbound_expired"},
		{"first error in header order", "attempt,client_id,backoff_delay_s,outcome,clean_session,recorded_at", "x,,0.5,backoff_wait,true," + ts,
			`attempt: expected an integer >= 0, found "x"`, "attempt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := auditfmt.NewCSVReader(strings.NewReader(tt.header + "\n" + tt.row + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			rec := auditfmt.Record{Source: 3, ClientID: "stale"}
			raw, err := c.Next(&rec)
			var fe *auditfmt.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Next(%q) = %v, want a *FieldError", tt.row, err)
			}
			if err.Error() != tt.want || fe.Field != tt.field {
				t.Errorf("Next(%q):\n got %q (field %q)\nwant %q (field %q)", tt.row, err, fe.Field, tt.want, tt.field)
			}
			if string(raw) != tt.row {
				t.Errorf("raw = %q, want %q", raw, tt.row)
			}
			if want := (auditfmt.Record{Source: 3, Line: 2}); rec != want {
				t.Errorf("rejected row left rec = %+v, want %+v", rec, want)
			}
			if _, err := c.Next(&rec); err != io.EOF {
				t.Errorf("after the bad row: %v, want io.EOF", err)
			}
		})
	}
}

func TestCSVValues(t *testing.T) {
	in := "recorded_at,device_id,attempt,backoff_delay_s,outcome,clean_session,schema,host_id,stage,attempt_id,record_id,device_seq,failure_class,reason_code,ceiling_s,session_present,outbox_depth,outbox_flushed,firmware,note\n" +
		"2026-11-30T15:17:34.5+01:00,dev-1,3,0.25,refused,True,1,h1,session,a-3,r-9,42,auth,135,8.0,False,17,0,1.2.3,\"no, \"\"really\"\"\"\n" +
		"2026-11-30T14:17:35Z,dev-1,0,0x1p-2,connected,0,,,,,,,,,,1,,9007199254740992,,\n"
	c, err := auditfmt.NewCSVReader(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2026, 11, 30, 14, 17, 34, 5e8, time.UTC).UnixNano()
	want := []auditfmt.Record{{
		ClientID: "dev-1", RecordedAt: ts, OffsetMin: 60, Attempt: 3, BackoffDelayS: 0.25, Outcome: auditfmt.Refused, CleanSession: true,
		Has: auditfmt.HasSchema | auditfmt.HasDeviceSeq | auditfmt.HasReasonCode | auditfmt.HasCeiling | auditfmt.HasSessionPresent |
			auditfmt.HasOutboxDepth | auditfmt.HasOutboxFlushed,
		Schema: 1, HostID: "h1", Stage: auditfmt.StageSession, AttemptID: "a-3", RecordID: "r-9", DeviceSeq: 42,
		FailureClass: auditfmt.FailAuth, ReasonCode: 135, CeilingS: 8, SessionPresent: false, OutboxDepth: 17, OutboxFlushed: 0,
		Extra: `{"firmware":"1.2.3","note":"no, \"really\""}`, Source: 7, Line: 2,
	}, {
		ClientID: "dev-1", RecordedAt: ts + 5e8, Attempt: 0, BackoffDelayS: 0.25, Outcome: auditfmt.Connected,
		Has: auditfmt.HasSessionPresent | auditfmt.HasOutboxFlushed, SessionPresent: true, OutboxFlushed: 1 << 53, Source: 7, Line: 3,
	}}
	for i := range want {
		rec := auditfmt.Record{Source: 7}
		if _, err := c.Next(&rec); err != nil {
			t.Fatalf("row %d: %v", i+1, err)
		}
		if rec != want[i] {
			t.Errorf("row %d:\n got %+v\nwant %+v", i+1, rec, want[i])
		}
	}
}

func TestCSVRawAndLines(t *testing.T) {
	row := func(id, note string) string { return id + ",1,0.5,backoff_wait,true," + csvTimestamp + "," + note }
	in := csvHeader + ",note\r\n" +
		row("a", `"one`) + "\r\n" + "two\r\n" + `three"` + "\r\n" + // lines 2-4
		"\r\n" + // line 5
		row("b", `"x""y"`) + "\n" + // line 6
		row("c", "bare\r") // line 7, no final line break
	c, err := auditfmt.NewCSVReader(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		line        int64
		raw, extra  string
		wantErr     bool
		description string
	}{
		{2, row("a", `"one`) + "\r\n" + "two\r\n" + `three"`, `{"note":"one\r\ntwo\r\nthree"}`, false, "quoted line breaks kept as written"},
		{5, "", "", true, "blank line"},
		{6, row("b", `"x""y"`), `{"note":"x\"y"}`, false, "doubled quote"},
		{7, row("c", "bare\r"), `{"note":"bare\r"}`, false, "lone CR at the end of the input"},
	}
	for _, w := range want {
		var rec auditfmt.Record
		raw, err := c.Next(&rec)
		if (err != nil) != w.wantErr || rec.Line != w.line || string(raw) != w.raw || rec.Extra != w.extra {
			t.Errorf("%s: got line %d raw %q extra %q err %v\nwant line %d raw %q extra %q", w.description, rec.Line, raw, rec.Extra, err, w.line, w.raw, w.extra)
		}
	}
	if _, err := c.Next(new(auditfmt.Record)); err != io.EOF {
		t.Errorf("at the end: %v, want io.EOF", err)
	}
}

// TestCSVRowTooLong pins that an overlong row is a row error, quarantined
// cut to MaxLineBytes, and that reading goes on with the next line, even
// when the long row opened a quote it never closed.
func TestCSVRowTooLong(t *testing.T) {
	good := "d,1,0.5,backoff_wait,true," + csvTimestamp
	long := good + `,"` + strings.Repeat("x", auditfmt.MaxLineBytes)
	in := csvHeader + ",note\n" + long + "\n" + good + ",ok\n"
	c, err := auditfmt.NewCSVReader(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var rec auditfmt.Record
	raw, err := c.Next(&rec)
	want := fmt.Sprintf("expected a row of at most %d bytes, found a longer row", auditfmt.MaxLineBytes)
	if err == nil || err.Error() != want {
		t.Fatalf("long row: %v, want %s", err, want)
	}
	if len(raw) != auditfmt.MaxLineBytes || string(raw) != long[:auditfmt.MaxLineBytes] || rec.Line != 2 {
		t.Errorf("long row: raw of %d bytes, line %d; want the first %d bytes, line 2", len(raw), rec.Line, auditfmt.MaxLineBytes)
	}
	if _, err := c.Next(&rec); err != nil || rec.Line != 3 || rec.Extra != `{"note":"ok"}` {
		t.Errorf("row after the long one: %v, line %d, extra %q", err, rec.Line, rec.Extra)
	}
}

func TestCSVRowAtLimit(t *testing.T) {
	row := "d,1,0.5,backoff_wait,true," + csvTimestamp + ","
	row += strings.Repeat("x", auditfmt.MaxLineBytes-len(row))
	c, err := auditfmt.NewCSVReader(strings.NewReader(csvHeader + ",note\r\n" + row + "\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if raw, err := c.Next(new(auditfmt.Record)); err != nil || len(raw) != auditfmt.MaxLineBytes {
		t.Errorf("row of exactly MaxLineBytes: %v, raw of %d bytes", err, len(raw))
	}
}

type failingReader struct {
	data []byte
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestCSVIOErrors(t *testing.T) {
	boom := errors.New("boom")
	if _, err := auditfmt.NewCSVReader(&failingReader{err: boom}); err != boom {
		t.Errorf("NewCSVReader on a failing reader: %v, want boom", err)
	}
	if _, err := auditfmt.NewCSVReader(&failingReader{data: []byte("client_"), err: boom}); err != boom {
		t.Errorf("NewCSVReader failing in the header: %v, want boom", err)
	}
	in := csvHeader + "\nd,1,0.5,backoff_wait,true," + csvTimestamp + "\nd,2"
	c, err := auditfmt.NewCSVReader(&failingReader{data: []byte(in), err: boom})
	if err != nil {
		t.Fatal(err)
	}
	var rec auditfmt.Record
	if _, err := c.Next(&rec); err != nil {
		t.Fatalf("first row: %v", err)
	}
	for range 2 {
		if raw, err := c.Next(&rec); err != boom || raw != nil {
			t.Errorf("row cut by an I/O error: %q, %v; want nil, boom (every time)", raw, err)
		}
	}
}

type csvCounts struct {
	good     int
	badLines []int64
	errs     []string
	recs     []auditfmt.Record
}

func readCSVFile(t *testing.T, name string) csvCounts {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := auditfmt.NewCSVReader(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var n csvCounts
	for {
		var rec auditfmt.Record
		_, err := c.Next(&rec)
		var fe *auditfmt.FieldError
		switch {
		case err == io.EOF:
			return n
		case errors.As(err, &fe):
			n.badLines = append(n.badLines, rec.Line)
			n.errs = append(n.errs, fmt.Sprintf("%d: %v", rec.Line, err))
		case err != nil:
			t.Fatalf("%s: %v", name, err)
		default:
			n.good++
			n.recs = append(n.recs, rec)
		}
	}
}

func TestCSVIncidentFiles(t *testing.T) {
	lf := readCSVFile(t, "../testdata/csv/incident.csv")
	crlf := readCSVFile(t, "../testdata/csv/incident_crlf.csv")
	for name, n := range map[string]csvCounts{"incident.csv": lf, "incident_crlf.csv": crlf} {
		if n.good != 31 || len(n.badLines) != 0 {
			t.Errorf("%s: %d good rows, bad: %q; want 31 good, none bad", name, n.good, n.errs)
		}
	}
	if len(lf.recs) != len(crlf.recs) {
		t.FailNow()
	}
	devices := map[string]int{}
	for i := range lf.recs {
		a, b := &lf.recs[i], &crlf.recs[i]
		devices[a.ClientID]++
		if a.ClientID != b.ClientID || a.RecordedAt != b.RecordedAt || a.Outcome != b.Outcome ||
			a.BackoffDelayS != b.BackoffDelayS || a.Line != b.Line || a.CleanSession != b.CleanSession {
			t.Errorf("row %d differs between the files:\n%+v\n%+v", i+1, a, b)
		}
	}
	if want := map[string]int{"sensor-a01": 8, "sensor-a02": 6, "gw-b07": 7, "pump-c3": 10}; !reflect.DeepEqual(devices, want) {
		t.Errorf("rows per device = %v, want %v", devices, want)
	}
	gw := lf.recs[4]
	if gw.ClientID != "gw-b07" || gw.Line != 6 || gw.Extra != `{"firmware":"0.9.8-rc1","note":"gateway, field site 3\nsecond line: rotated creds on 2026-11-29"}` {
		t.Errorf("row with a quoted line break: line %d, %q", gw.Line, gw.Extra)
	}
	if next := lf.recs[5]; next.Line != 8 {
		t.Errorf("row after the quoted line break starts on line %d, want 8", next.Line)
	}
}

func TestCSVBadFile(t *testing.T) {
	n := readCSVFile(t, "../testdata/csv/bad.csv")
	const ts = "an RFC 3339 timestamp with a UTC offset, like 2026-11-30T14:17:34.979964+00:00"
	want := []string{
		"3: attempt: expected an integer >= 0, found -1",
		"5: backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found NaN",
		"6: expected a CSV row, found an empty line",
		"8: expected 9 fields as in the header, found 10",
		"9: expected quotes only around a whole field, found a quote inside unquoted field 9 (note)",
		`13: failure_class: expected one of transient, auth, config, unsupported, overload, unknown, found "credentials"`,
		"14: recorded_at: expected " + ts + " (required), found an empty cell",
		`15: recorded_at: expected ` + ts + `, found "2026-11-30 14:18:01"`,
		"16: client_id: expected a non-empty string (required), found an empty cell",
		`17: outcome: expected one of connected, backoff_wait, rate_limited_wait, attempt_failed, refused, disconnected, gave_up, stopped, found "reconnecting"`,
		`18: clean_session: expected true or false, found "yes"`,
		"19: expected a comma or the end of the row after a closing quote, found ' ' in field 9 (note)",
		`20: backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found "1e400" (out of range)`,
		"22: expected a closing quote, found the end of the input in field 9 (note)",
	}
	if n.good != 6 || !reflect.DeepEqual(n.errs, want) {
		t.Errorf("bad.csv: %d good rows, want 6; errors:\n%s\nwant:\n%s", n.good, strings.Join(n.errs, "\n"), strings.Join(want, "\n"))
	}
	var lines []int64
	for _, r := range n.recs {
		lines = append(lines, r.Line)
	}
	if want := []int64{2, 4, 7, 10, 12, 21}; !reflect.DeepEqual(lines, want) {
		t.Errorf("good rows on lines %v, want %v", lines, want)
	}
}

func TestCSVWriter(t *testing.T) {
	ts := time.Date(2026, 11, 30, 14, 17, 34, 979964000, time.UTC).UnixNano()
	recs := []auditfmt.Record{
		{ClientID: "dev,1", Attempt: 2, BackoffDelayS: 3, Outcome: auditfmt.BackoffWait, RecordedAt: ts,
			Has: auditfmt.HasCeiling | auditfmt.HasDeviceSeq | auditfmt.HasOutboxDepth, CeilingS: 4, DeviceSeq: 9, OutboxDepth: 0, Stage: auditfmt.StageLink,
			Extra: `{"note":"say \"hi\"\nbye","fw":"1.0"}`},
		{ClientID: "dev2", BackoffDelayS: 1e-9, Outcome: auditfmt.Refused, RecordedAt: ts, OffsetMin: -90, CleanSession: true,
			Has: auditfmt.HasSchema | auditfmt.HasReasonCode | auditfmt.HasSessionPresent | auditfmt.HasOutboxDepth | auditfmt.HasOutboxFlushed |
				auditfmt.HasInboundRedelivered | auditfmt.HasInboundDuplicates | auditfmt.HasOutboxDropped | auditfmt.HasInboundExpired,
			Schema: 1, ReasonCode: 135, OutboxDepth: 250, OutboxFlushed: 31, InboundRedelivered: 40, InboundDuplicates: 2, OutboxDropped: 7, InboundExpired: 3,
			FailureClass: auditfmt.FailAuth, HostID: "h", AttemptID: "a", RecordID: `r"`, Envelope: `{"levelname":"INFO"}`},
	}
	var buf bytes.Buffer
	w := auditfmt.NewCSVWriter(&buf, []string{"fw", "note"})
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "client_id,attempt,backoff_delay_s,outcome,clean_session,recorded_at,schema,host_id,stage,attempt_id,record_id,device_seq,failure_class,reason_code,ceiling_s,session_present,outbox_depth,outbox_flushed,inbound_redelivered,inbound_duplicates,outbox_dropped,inbound_expired,fw,note\n" +
		`"dev,1",2,3.0,backoff_wait,false,2026-11-30T14:17:34.979964+00:00,,,link,,,9,,,4.0,,0,,,,,,1.0,"say ""hi""` + "\nbye\"\n" +
		`dev2,0,0.000000001,refused,true,2026-11-30T12:47:34.979964-01:30,1,h,,a,"r""",,auth,135,,false,250,31,40,2,7,3,,` + "\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
	c, err := auditfmt.NewCSVReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	recs[0].Extra = `{"fw":"1.0","note":"say \"hi\"\nbye"}` // in column order
	recs[1].Envelope = ""
	for i := range recs {
		var rec auditfmt.Record
		if _, err := c.Next(&rec); err != nil {
			t.Fatalf("reading back row %d: %v", i+1, err)
		}
		rec.Line = 0
		if rec != recs[i] {
			t.Errorf("read back row %d:\n got %+v\nwant %+v", i+1, rec, recs[i])
		}
	}
}

func TestCSVWriterEmpty(t *testing.T) {
	var buf bytes.Buffer
	w := auditfmt.NewCSVWriter(&buf, []string{"a,b"})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "client_id,attempt,backoff_delay_s,outcome,clean_session,recorded_at,schema,host_id,stage,attempt_id,record_id,device_seq,failure_class,reason_code,ceiling_s,session_present,outbox_depth,outbox_flushed,inbound_redelivered,inbound_duplicates,outbox_dropped,inbound_expired,\"a,b\"\n"
	if buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}

func TestCSVWriterErrors(t *testing.T) {
	good := auditfmt.Record{ClientID: "d", Outcome: auditfmt.Connected}
	tests := []struct {
		name  string
		extra []string
		rec   auditfmt.Record
		want  string
	}{
		{"empty extra name", []string{"a", ""}, good, "expected a name for every extra column, found an empty name for extra column 2"},
		{"duplicate extra", []string{"a", "b", "a"}, good, "a: expected one column of each name, found extra columns 1 and 3"},
		{"schema field", []string{"outcome"}, good, "outcome: expected an extra column that is not a schema field, found a schema field"},
		{"alias", []string{"device_id"}, good, "device_id: expected an extra column that is not a schema field, found a schema field"},
		{"invalid record", nil, auditfmt.Record{ClientID: "d"}, "outcome: expected one of connected, backoff_wait, rate_limited_wait, attempt_failed, refused, disconnected, gave_up, stopped, found Outcome(0)"},
		{"number in Extra", []string{"n"}, withExtra(good, `{"n":1}`), "n: expected a string in Extra for an extra CSV column, found a number"},
		{"object in Extra", []string{"n"}, withExtra(good, `{"n":{"x":"y"}}`), "n: expected a string in Extra for an extra CSV column, found an object"},
		{"member without column", []string{"n"}, withExtra(good, `{"n":"1","m":"2"}`), "m: expected a member of Extra that has a column, found no extra column of this name"},
		{"no columns", nil, withExtra(good, `{"m":"2"}`), "m: expected a member of Extra that has a column, found no extra column of this name"},
		{"not an object", nil, withExtra(good, `["m"]`), `expected Extra holding a JSON object, found "[\"m\"]"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := auditfmt.NewCSVWriter(&buf, tt.extra)
			err := w.Write(&tt.rec)
			if err == nil || err.Error() != tt.want {
				t.Errorf("Write: %v\nwant %s", err, tt.want)
			}
		})
	}
}

func withExtra(r auditfmt.Record, extra string) auditfmt.Record {
	r.Extra = extra
	return r
}

// csvBenchInput returns a header and n rows of generated records from a
// few hundred devices, with an unknown column.
func csvBenchInput(n int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	b := []byte(csvHeader + ",host_id,device_seq,failure_class,ceiling_s,firmware\n")
	t0 := time.Date(2026, 11, 30, 14, 17, 30, 0, time.UTC).UnixNano()
	outcomes := []string{"backoff_wait", "attempt_failed", "connected"}
	for i := range n {
		dev := i / 8
		b = fmt.Appendf(b, "device-%05d,%d,", dev, i%8)
		b = strconv.AppendFloat(b, rng.Float64()*60, 'f', 6, 64)
		b = fmt.Appendf(b, ",%s,false,", outcomes[i%3])
		b = auditfmt.AppendTimestamp(b, t0+int64(rng.IntN(3600e6))*1000, 0)
		b = fmt.Appendf(b, ",host-%d,%d,transient,60.0,1.4.%d\n", dev%50, i, dev%4)
	}
	return b
}

func BenchmarkCSVReader(b *testing.B) {
	const rows = 10000
	in := csvBenchInput(rows)
	b.SetBytes(int64(len(in)))
	iters := 0
	for b.Loop() {
		c, err := auditfmt.NewCSVReader(bytes.NewReader(in))
		if err != nil {
			b.Fatal(err)
		}
		var rec auditfmt.Record
		for {
			if _, err := c.Next(&rec); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
		iters++
	}
	b.ReportMetric(float64(rows*iters)/b.Elapsed().Seconds(), "records/s")
}

func ExampleCSVReader() {
	in := "device_id,attempt,backoff_delay_s,outcome,clean_session,recorded_at,firmware\n" +
		"pump-7,2,3.5,backoff_wait,False,2026-11-30T14:17:34.979964+00:00,1.2.3\n" +
		"pump-7,3,NaN,backoff_wait,False,2026-11-30T14:17:38.5+00:00,\n"
	c, err := auditfmt.NewCSVReader(strings.NewReader(in))
	if err != nil {
		fmt.Println(err)
		return
	}
	for {
		var rec auditfmt.Record
		raw, err := c.Next(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(&auditfmt.LineError{File: "audit.csv", Line: rec.Line, Err: err})
			fmt.Printf("quarantined: %s\n", raw)
			continue
		}
		fmt.Printf("%s\n", rec.AppendJSON(nil))
	}
	// Output:
	// {"client_id":"pump-7","attempt":2,"backoff_delay_s":3.5,"outcome":"backoff_wait","clean_session":false,"recorded_at":"2026-11-30T14:17:34.979964+00:00","firmware":"1.2.3"}
	// audit.csv:3: backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found NaN
	// quarantined: pump-7,3,NaN,backoff_wait,False,2026-11-30T14:17:38.5+00:00,
}

// TestCSVUnclosedQuoteRecovers: a field whose quote never closes ends at
// the next line that is a row of its own, which is read as the next row
// (a regression: it swallowed about a megabyte of the valid rows after it
// into one reject). A quoted field that does span lines is still one row.
func TestCSVUnclosedQuoteRecovers(t *testing.T) {
	var b strings.Builder
	b.WriteString(csvHeader + ",note\n")
	for i := range 3000 {
		note := "ok"
		switch i {
		case 10:
			note = `"never closed`
		case 20:
			note = "\"two\nlines\""
		}
		fmt.Fprintf(&b, "dev-%d,1,0.5,backoff_wait,false,2026-11-30T14:17:34.979964+00:00,%s\n", i, note)
	}
	cr, err := auditfmt.NewCSVReader(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	var ok, bad int
	for {
		var rec auditfmt.Record
		raw, err := cr.Next(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			bad++
			if rec.Line != 12 || strings.Contains(string(raw), "\n") || !strings.Contains(err.Error(), "expected a closing quote, found none before line 13, which is a row of its own") {
				t.Errorf("line %d: %v (raw %q)", rec.Line, err, raw)
			}
			continue
		}
		ok++
		if rec.ClientID == "dev-11" && rec.Line != 13 || rec.ClientID == "dev-21" && rec.Line != 24 {
			t.Errorf("%s at line %d", rec.ClientID, rec.Line)
		}
	}
	if ok != 2999 || bad != 1 {
		t.Errorf("%d rows read, %d rejected; want 2999 and 1", ok, bad)
	}
}

// TestIDsBounded: a client id (or host, attempt or record id) longer than
// MQTT allows is rejected at decode, naming the field and its length, not
// echoing it (issue 25).
func TestIDsBounded(t *testing.T) {
	long := strings.Repeat("d", auditfmt.MaxIDBytes+1)
	line := `{"client_id":"` + long + `","attempt":0,"backoff_delay_s":0,"outcome":"connected","clean_session":false,"recorded_at":"2026-11-30T14:17:30Z"}`
	var d auditfmt.Decoder
	var rec auditfmt.Record
	err := d.Decode([]byte(line), &rec)
	if err == nil || !strings.Contains(err.Error(), "client_id: expected at most 65535 bytes") || strings.Contains(err.Error(), long) {
		t.Errorf("a client id of %d bytes: %.200v", len(long), err)
	}
}
