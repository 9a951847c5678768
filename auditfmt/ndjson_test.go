package auditfmt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// The two lines the reference client writes: a flat record and the same
// record in a structured-logging envelope.
const (
	realFlatLine     = `{"client_id": "dev-0001", "attempt": 0, "backoff_delay_s": 0.21, "outcome": "backoff_wait", "clean_session": false, "recorded_at": "2026-11-30T14:17:34.979964+00:00"}`
	realEnvelopeLine = `{"message": "mqtt_reconnect", "name": "incidentgis.mqtt.reconnect", "levelname": "INFO", "audit": {"client_id": "dev-0001", "attempt": 0, "backoff_delay_s": 0.21, "outcome": "backoff_wait", "clean_session": false, "recorded_at": "2026-11-30T14:17:34.979964+00:00"}}`
)

// required is a valid set of required members, compact, to build lines from.
const required = `"client_id":"dev-1","attempt":0,"backoff_delay_s":0.5,"outcome":"backoff_wait","clean_session":false,"recorded_at":"2026-11-30T14:17:34.979964+00:00"`

func decode(t *testing.T, line string) *Record {
	t.Helper()
	var d Decoder
	rec := new(Record)
	if err := d.Decode([]byte(line), rec); err != nil {
		t.Fatalf("Decode(%s): %v", line, err)
	}
	return rec
}

func TestDecodeRealLines(t *testing.T) {
	flat := decode(t, realFlatLine)
	want := Record{
		ClientID:      "dev-0001",
		RecordedAt:    time.Date(2026, 11, 30, 14, 17, 34, 979964000, time.UTC).UnixNano(),
		BackoffDelayS: 0.21,
		Attempt:       0,
		OffsetMin:     0,
		Outcome:       BackoffWait,
		CleanSession:  false,
	}
	if *flat != want {
		t.Errorf("flat line:\n got %+v\nwant %+v", *flat, want)
	}
	env := decode(t, realEnvelopeLine)
	want.Envelope = `{"message":"mqtt_reconnect","name":"incidentgis.mqtt.reconnect","levelname":"INFO"}`
	if *env != want {
		t.Errorf("envelope line:\n got %+v\nwant %+v", *env, want)
	}
	env.Envelope = ""
	if *env != *flat {
		t.Errorf("flat and envelope records differ:\n%+v\n%+v", *flat, *env)
	}
}

func TestDecodeAllFields(t *testing.T) {
	line := ` { "device_id" : "dev-7", "attempt" : 12, "backoff_delay_s" : 1e2, "outcome" : "refused",
		"clean_session" : true, "recorded_at" : "2026-11-30T14:17:34.5-05:30", "schema" : 1, "host_id" : "gw-1",
		"stage" : "link", "attempt_id" : "a-1", "record_id" : "r-1", "device_seq" : 99, "failure_class" : "auth",
		"reason_code" : 135, "ceiling_s" : 64.0, "session_present" : false, "outbox_depth" : 17,
		"outbox_flushed" : 0 } ` + "\r"
	got := decode(t, line)
	want := Record{
		ClientID:       "dev-7",
		RecordedAt:     time.Date(2026, 11, 30, 14, 17, 34, 5e8, time.FixedZone("", -330*60)).UnixNano(),
		BackoffDelayS:  100,
		Attempt:        12,
		OffsetMin:      -330,
		Outcome:        Refused,
		CleanSession:   true,
		Has:            HasSchema | HasDeviceSeq | HasReasonCode | HasCeiling | HasSessionPresent | HasOutboxDepth | HasOutboxFlushed,
		Stage:          StageLink,
		FailureClass:   FailAuth,
		SessionPresent: false,
		Schema:         1,
		DeviceSeq:      99,
		ReasonCode:     135,
		CeilingS:       64,
		OutboxDepth:    17,
		OutboxFlushed:  0,
		HostID:         "gw-1",
		AttemptID:      "a-1",
		RecordID:       "r-1",
	}
	if *got != want {
		t.Errorf("\n got %+v\nwant %+v", *got, want)
	}
}

func TestDecodeNullOptionalIsAbsent(t *testing.T) {
	got := decode(t, `{`+required+`,"schema":null,"host_id":null,"stage":null,"attempt_id":null,"record_id":null,"device_seq":null,"failure_class":null,"reason_code":null,"ceiling_s":null,"session_present":null,"outbox_depth":null,"outbox_flushed":null}`)
	want := decode(t, `{`+required+`}`)
	if *got != *want {
		t.Errorf("\n got %+v\nwant %+v", *got, *want)
	}
}

func TestDecodeResetsRecord(t *testing.T) {
	var d Decoder
	rec := Record{ClientID: "old", Extra: `{"x":1}`, Has: HasCeiling, Source: 3, Line: 42}
	if err := d.Decode([]byte(realFlatLine), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Extra != "" || rec.Has != 0 || rec.ClientID != "dev-0001" || rec.Source != 3 || rec.Line != 42 {
		t.Errorf("got %+v", rec)
	}
	rec = Record{ClientID: "old", Source: 3, Line: 42}
	if err := d.Decode([]byte("{}"), &rec); err == nil || rec.ClientID != "" || rec.Source != 3 || rec.Line != 42 {
		t.Errorf("got %+v, %v", rec, err)
	}
}

func TestDecodeExtra(t *testing.T) {
	a := decode(t, `{"z": 1, `+required+`, "nested": {"a" : [1, 2.5e3, "x y", true, null, {}], "b": "\u00e9\n"}, "a b": [ ] }`)
	b := decode(t, "{\"z\":1,"+required+",\"nested\":{\"a\":[1,2.5e3,\"x y\",true,null,{}],\t\"b\":\"\\u00e9\\n\"},\"a b\":[]}")
	want := `{"z":1,"nested":{"a":[1,2.5e3,"x y",true,null,{}],"b":"\u00e9\n"},"a b":[]}`
	if a.Extra != want || b.Extra != want {
		t.Errorf("Extra:\n got %s\n and %s\nwant %s", a.Extra, b.Extra, want)
	}
	if !json.Valid([]byte(a.Extra)) {
		t.Errorf("Extra is not JSON: %s", a.Extra)
	}
}

func TestDecodeEnvelopeVariants(t *testing.T) {
	for _, tc := range []struct{ line, envelope, extra string }{
		{`{"audit":{` + required + `}}`, "", ""},
		{`{"audit":{` + required + `},"levelname":"INFO"}`, `{"levelname":"INFO"}`, ""},
		// Envelope members may look like record fields; they are the envelope's.
		{`{"schema": 2, "attempt": "x", "client_id": null, "audit": {` + required + `, "x": 1}}`, `{"schema":2,"attempt":"x","client_id":null}`, `{"x":1}`},
		// An escaped member name is the name it spells.
		{`{"lvl":"I","\u0061udit":{` + required + `}}`, `{"lvl":"I"}`, ""},
	} {
		rec := decode(t, tc.line)
		if rec.Envelope != tc.envelope || rec.Extra != tc.extra || rec.ClientID != "dev-1" {
			t.Errorf("%s:\n got envelope %q extra %q\nwant envelope %q extra %q", tc.line, rec.Envelope, rec.Extra, tc.envelope, tc.extra)
		}
	}
}

func TestDecodeUnescapes(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`dev\u002d1`, "dev-1"},
		{`dev\/\"\\\b\f\n\r\t`, "dev/\"\\\b\f\n\r\t"},
		{`\ud83d\ude00`, "\U0001F600"},
		{`\uD83D\uDE00x`, "\U0001F600x"},
		{`\ud83d`, "\uFFFD"},
		{`\ude00\ud83d`, "\uFFFD\uFFFD"},
		{`\ud83dx`, "\uFFFDx"},
		{`\ud83d\u0041`, "\uFFFDA"},
		{`\ud83d\ud83d\ude00`, "\uFFFD\U0001F600"},
		{`\u0000`, "\x00"},
		{`é☃`, "é☃"},
	} {
		line := `{` + strings.Replace(required, `"dev-1"`, `"`+tc.in+`"`, 1) + `}`
		rec := decode(t, line)
		var std struct {
			ClientID string `json:"client_id"`
		}
		if err := json.Unmarshal([]byte(line), &std); err != nil {
			t.Fatal(err)
		}
		if rec.ClientID != tc.want || std.ClientID != tc.want {
			t.Errorf("%s: got %q, encoding/json %q, want %q", tc.in, rec.ClientID, std.ClientID, tc.want)
		}
	}
}

func TestDecodeInternsClientIDs(t *testing.T) {
	var d Decoder
	var a, b, c Record
	for _, step := range []struct {
		rec  *Record
		line string
	}{{&a, realFlatLine}, {&b, realEnvelopeLine}, {&c, strings.Replace(realFlatLine, `"dev-0001"`, `"dev\u002d0001"`, 1)}} {
		if err := d.Decode([]byte(step.line), step.rec); err != nil {
			t.Fatal(err)
		}
	}
	if unsafe.StringData(a.ClientID) != unsafe.StringData(b.ClientID) || unsafe.StringData(a.ClientID) != unsafe.StringData(c.ClientID) {
		t.Errorf("client ids not interned")
	}
	for i := range 2*internSlots + 10 {
		line := strings.Replace(realFlatLine, "dev-0001", "dev-"+strconv.Itoa(i), 1)
		if err := d.Decode([]byte(line), &a); err != nil {
			t.Fatal(err)
		}
	}
	// the table is a fixed array: after thousands of ids, a repeated one
	// is still the same string
	if err := d.Decode([]byte(realFlatLine), &a); err != nil {
		t.Fatal(err)
	}
	if err := d.Decode([]byte(realFlatLine), &b); err != nil {
		t.Fatal(err)
	}
	if unsafe.StringData(a.ClientID) != unsafe.StringData(b.ClientID) {
		t.Errorf("a repeated client id is not interned after %d others", 2*internSlots+10)
	}
}

func TestDecodeDoesNotAllocate(t *testing.T) {
	var d Decoder
	var rec Record
	line := []byte(realFlatLine)
	allocs := testing.AllocsPerRun(100, func() {
		if err := d.Decode(line, &rec); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Decode allocates %v times per line, want 0", allocs)
	}
}

func TestDecodeKeepsNoReferenceToLine(t *testing.T) {
	var d Decoder
	var rec Record
	line := []byte(`{` + required + `,"host_id":"gw-1","attempt_id":"a-1","record_id":"r-1","x":"y"}`)
	if err := d.Decode(line, &rec); err != nil {
		t.Fatal(err)
	}
	want := rec
	for i := range line {
		line[i] = 'X'
	}
	if rec != want {
		t.Errorf("record changed with the line: %+v", rec)
	}
}

// TestDecodeErrors pins the text of every error the decoder gives.
func TestDecodeErrors(t *testing.T) {
	long := `{` + required + `,"x":"` + strings.Repeat("a", MaxLineBytes) + `"}`
	deep := func(n int) string {
		return `{` + required + `,"x":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`
	}
	tests := []struct{ name, line, want string }{
		// The line as a whole.
		{"empty", ``, `expected a JSON object, found an empty line`},
		{"blank", " \t ", `expected a JSON object, found an empty line`},
		{"only CR", "\r", `expected a JSON object, found an empty line`},
		{"too long", long, `expected a line of at most 1048576 bytes, found a line of ` + strconv.Itoa(len(long)) + ` bytes`},
		{"array", `[1]`, `expected a JSON object, found an array`},
		{"string", ` "x"`, `expected a JSON object, found a string`},
		{"number", `-1`, `expected a JSON object, found a number`},
		{"garbage", `x{}`, `expected a JSON object, found "x" at byte 1`},
		{"bom", "\ufeff{}", `expected a JSON object, found "\ufeff" at byte 1`},
		{"after object", `{` + required + `} x`, `expected nothing after the JSON object, found "x" at byte 153`},
		{"two objects", `{` + required + `}{}`, `expected nothing after the JSON object, found "{" at byte 152`},
		{"unclosed", `{"client_id":"dev-1"`, `expected ',' or '}' after member "client_id", found end of line`},
		{"missing comma", `{"client_id":"dev-1" "attempt":0}`, `expected ',' or '}' after member "client_id", found "\"" at byte 22`},
		{"trailing comma", `{` + required + `,}`, `expected a member name (a string), found "}" at byte 152`},
		{"bare name", `{client_id:1}`, `expected a member name (a string) or '}', found "c" at byte 2`},
		{"missing colon", `{"client_id" "dev-1"}`, `client_id: expected ':' after the member name, found "\"" at byte 14`},
		{"open brace", `{`, `expected a member name (a string) or '}', found end of line`},
		{"no value", `{"client_id":`, `client_id: expected a non-empty string, found end of line`},
		{"single quotes", `{'client_id':1}`, `expected a member name (a string) or '}', found "'" at byte 2`},

		// Strings.
		{"unterminated", `{"client_id":"dev-1`, `client_id: expected '"' to end the string, found end of line`},
		{"bad escape", `{"client_id":"dev\q"}`, `client_id: expected an escape sequence (\" \\ \/ \b \f \n \r \t or \uXXXX) after \, found "q" at byte 19`},
		{"escape at end", `{"client_id":"dev\`, `client_id: expected an escape sequence (\" \\ \/ \b \f \n \r \t or \uXXXX) after \, found end of line`},
		{"short unicode escape", `{"client_id":"\u12x4"}`, `client_id: expected four hex digits after \u, found "x" at byte 19`},
		{"raw tab", "{\"client_id\":\"dev\t1\"}", `client_id: expected a string character (control characters must be escaped), found "\t" at byte 18`},
		{"invalid UTF-8", "{\"client_id\":\"dev\xff\"}", `client_id: expected valid UTF-8, found "\xff" at byte 18`},
		{"invalid UTF-8 in extra", "{" + required + ",\"x\":[\"\xc3\"]}", `x: expected valid UTF-8, found "\xc3" at byte 158`},
		{"invalid UTF-8 in name", "{\"\xed\xa0\x80\":1}", `expected valid UTF-8, found "\xed" at byte 3`},
		{"bad escape in name", `{"a\x":1}`, `expected an escape sequence (\" \\ \/ \b \f \n \r \t or \uXXXX) after \, found "x" at byte 5`},

		// Numbers.
		{"minus alone", `{"attempt":-}`, `attempt: expected a digit, found "}" at byte 13`},
		{"leading zero", `{"attempt":01}`, `expected ',' or '}' after member "attempt", found "1" at byte 13`},
		{"bare point", `{"attempt":1.}`, `attempt: expected a digit after the decimal point, found "}" at byte 14`},
		{"bare exponent", `{"backoff_delay_s":1e+}`, `backoff_delay_s: expected a digit in the exponent, found "}" at byte 23`},
		{"leading point", `{"backoff_delay_s":.5}`, `backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found "." at byte 20`},
		{"plus sign", `{"backoff_delay_s":+1}`, `backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found "+" at byte 20`},
		{"hex", `{"attempt":0x1}`, `expected ',' or '}' after member "attempt", found "x" at byte 13`},
		{"bad number in extra", `{"x":[1,-]}`, `x: expected a digit, found "]" at byte 10`},

		// Python's non-JSON numbers.
		{"NaN delay", `{` + required[:strings.Index(required, "0.5")] + `NaN}`, `backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found NaN`},
		{"Infinity delay", `{"backoff_delay_s": Infinity}`, `backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found Infinity`},
		{"-Infinity delay", `{"backoff_delay_s": -Infinity}`, `backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found -Infinity`},
		{"NaN ceiling", `{"ceiling_s":NaN}`, `ceiling_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found NaN`},
		{"NaN attempt", `{"attempt":NaN}`, `attempt: expected an integer >= 0, found NaN`},
		{"NaN string field", `{"client_id":NaN}`, `client_id: expected a non-empty string, found NaN`},
		{"NaN in extra", `{"x":NaN}`, `x: expected a JSON value, found NaN`},
		{"Infinity nested in extra", `{"x":{"y":[1,-Infinity]}}`, `x: expected a JSON value, found -Infinity`},
		{"NaN in envelope", `{"m":NaN,"audit":{` + required + `}}`, `m: expected a JSON value, found NaN`},
		{"NaN after an unknown member", `{"x":1,"backoff_delay_s":NaN}`, `backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found NaN`},
		{"field error after an unknown member", `{"x":1,` + with(required, "attempt", `-1`) + `}`, `attempt: expected an integer >= 0, found -1`},
		{"NaN after a field error", `{"attempt":"x","backoff_delay_s":NaN}`, `backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found NaN`},

		// Literals and nesting.
		{"bad literal", `{"clean_session":tru}`, `clean_session: expected true or false, found "t" at byte 18`},
		{"capital literal", `{"clean_session":True}`, `clean_session: expected true or false, found "T" at byte 18`},
		{"bad literal in extra", `{"x":nul}`, `x: expected a JSON value, found "n" at byte 6`},
		{"unclosed array", `{"x":[1,2}`, `x: expected ',' or ']' in an array, found "}" at byte 10`},
		{"unclosed object", `{"x":{"a":1]}`, `x: expected ',' or '}' in an object, found "]" at byte 12`},
		{"array trailing comma", `{"x":[1,]}`, `x: expected a JSON value, found "]" at byte 9`},
		{"object trailing comma", `{"x":{"a":1,}}`, `x: expected a member name (a string), found "}" at byte 13`},
		{"nested missing colon", `{"x":{"a" 1}}`, `x: expected ':' after a member name, found "1" at byte 11`},
		{"nested bare name", `{"x":{a:1}}`, `x: expected a member name (a string) or '}', found "a" at byte 7`},
		{"too deep", deep(maxNesting), `x: expected at most 10000 levels of nesting, found "[" at byte ` + strconv.Itoa(1+len(required)+5+maxNesting)},
		{"soft then syntax error", `{"attempt":"x","y":]}`, `y: expected a JSON value, found "]" at byte 20`},

		// Required fields.
		{"empty object", `{}`, `client_id: expected a string (required field), found nothing`},
		{"missing client_id", `{` + without(required, "client_id") + `}`, `client_id: expected a string (required field), found nothing`},
		{"missing attempt", `{` + without(required, "attempt") + `}`, `attempt: expected an integer (required field), found nothing`},
		{"missing backoff_delay_s", `{` + without(required, "backoff_delay_s") + `}`, `backoff_delay_s: expected a number (required field), found nothing`},
		{"missing outcome", `{` + without(required, "outcome") + `}`, `outcome: expected a string (required field), found nothing`},
		{"missing clean_session", `{` + without(required, "clean_session") + `}`, `clean_session: expected a boolean (required field), found nothing`},
		{"missing recorded_at", `{` + without(required, "recorded_at") + `}`, `recorded_at: expected a string (required field), found nothing`},
		{"missing in envelope", `{"m":1,"audit":{` + without(required, "attempt") + `}}`, `attempt: expected an integer (required field), found nothing`},

		// Types of required fields.
		{"client_id number", `{` + with(required, "client_id", `7`) + `}`, `client_id: expected a non-empty string, found a number`},
		{"client_id null", `{` + with(required, "client_id", `null`) + `}`, `client_id: expected a non-empty string, found null`},
		{"client_id empty", `{` + with(required, "client_id", `""`) + `}`, `client_id: expected a non-empty string, found an empty string`},
		{"device_id differs", `{"device_id":"dev-2",` + required + `}`, `device_id: expected the same value as client_id, "dev-1", found "dev-2"`},
		{"device_id empty", `{"device_id":"",` + required + `}`, `device_id: expected a non-empty string, found an empty string`},
		{"attempt string", `{` + with(required, "attempt", `"3"`) + `}`, `attempt: expected an integer >= 0, found a string`},
		{"attempt null", `{` + with(required, "attempt", `null`) + `}`, `attempt: expected an integer >= 0, found null`},
		{"attempt negative", `{` + with(required, "attempt", `-1`) + `}`, `attempt: expected an integer >= 0, found -1`},
		{"attempt fraction", `{` + with(required, "attempt", `3.0`) + `}`, `attempt: expected an integer >= 0, found 3.0`},
		{"attempt exponent", `{` + with(required, "attempt", `1e2`) + `}`, `attempt: expected an integer >= 0, found 1e2`},
		{"attempt too big", `{` + with(required, "attempt", `9223372036854775808`) + `}`, `attempt: expected an integer >= 0 that fits in 64 bits, found 9223372036854775808`},
		{"attempt far too big", `{` + with(required, "attempt", `123456789012345678901234567890`) + `}`, `attempt: expected an integer >= 0 that fits in 64 bits, found 123456789012345678901234567890`},
		{"attempt too small", `{` + with(required, "attempt", `-9223372036854775809`) + `}`, `attempt: expected an integer >= 0, found -9223372036854775809`},
		{"delay string", `{` + with(required, "backoff_delay_s", `"0.5"`) + `}`, `backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found a string`},
		{"delay negative", `{` + with(required, "backoff_delay_s", `-0.5`) + `}`, `backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found -0.5`},
		{"delay overflows", `{` + with(required, "backoff_delay_s", `1e400`) + `}`, `backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found 1e400`},
		// regressions: a negative zero, an underflow and an implausible
		// delay were accepted, as 0, 0 and 1e308 s
		{"delay negative zero", `{` + with(required, "backoff_delay_s", `-0`) + `}`, `backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found -0`},
		{"delay negative zero point", `{` + with(required, "backoff_delay_s", `-0.0`) + `}`, `backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found -0.0`},
		{"delay underflows", `{` + with(required, "backoff_delay_s", `1e-400`) + `}`, `backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found 1e-400`},
		{"delay below a nanosecond", `{` + with(required, "backoff_delay_s", `5e-10`) + `}`, `backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found 5e-10`},
		{"delay beyond 30 days", `{` + with(required, "backoff_delay_s", `1e308`) + `}`, `backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found 1e308`},
		{"ceiling beyond 30 days", `{` + required + `,"ceiling_s":2592000.5}`, `ceiling_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found 2592000.5`},
		{"delay bool", `{` + with(required, "backoff_delay_s", `true`) + `}`, `backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found a boolean`},
		{"outcome unknown", `{` + with(required, "outcome", `"reconnecting"`) + `}`, `outcome: expected one of connected, backoff_wait, rate_limited_wait, attempt_failed, refused, disconnected, gave_up, stopped, found "reconnecting"`},
		{"outcome case", `{` + with(required, "outcome", `"Connected"`) + `}`, `outcome: expected one of connected, backoff_wait, rate_limited_wait, attempt_failed, refused, disconnected, gave_up, stopped, found "Connected"`},
		{"outcome object", `{` + with(required, "outcome", `{}`) + `}`, `outcome: expected one of connected, backoff_wait, rate_limited_wait, attempt_failed, refused, disconnected, gave_up, stopped, found an object`},
		{"outcome long", `{` + with(required, "outcome", `"`+strings.Repeat("x", 100)+`"`) + `}`, `outcome: expected one of connected, backoff_wait, rate_limited_wait, attempt_failed, refused, disconnected, gave_up, stopped, found "` + strings.Repeat("x", 63) + `...`},
		{"clean_session string", `{` + with(required, "clean_session", `"false"`) + `}`, `clean_session: expected true or false, found a string`},
		{"clean_session number", `{` + with(required, "clean_session", `0`) + `}`, `clean_session: expected true or false, found a number`},
		{"recorded_at array", `{` + with(required, "recorded_at", `[]`) + `}`, `recorded_at: expected an RFC 3339 timestamp with a UTC offset, like 2026-11-30T14:17:34.979964+00:00, found an array`},
		{"recorded_at no offset", `{` + with(required, "recorded_at", `"2026-11-30T14:17:34.979964"`) + `}`, `recorded_at: expected an RFC 3339 timestamp with a UTC offset, like 2026-11-30T14:17:34.979964+00:00, found "2026-11-30T14:17:34.979964" (no UTC offset)`},
		{"recorded_at no day", `{` + with(required, "recorded_at", `"2026-02-30T14:17:34Z"`) + `}`, `recorded_at: expected an RFC 3339 timestamp with a UTC offset, like 2026-11-30T14:17:34.979964+00:00, found "2026-02-30T14:17:34Z" (no such day)`},
		{"recorded_at long", `{` + with(required, "recorded_at", `"`+strings.Repeat("2", 70)+`"`) + `}`, `recorded_at: expected an RFC 3339 timestamp with a UTC offset, like 2026-11-30T14:17:34.979964+00:00, found "` + strings.Repeat("2", 64) + `"...`},

		// Optional fields.
		{"schema 2", `{` + required + `,"schema":2}`, `schema: expected 1, found 2`},
		{"schema string", `{` + required + `,"schema":"1"}`, `schema: expected 1, found a string`},
		{"schema fraction", `{` + required + `,"schema":1.0}`, `schema: expected 1, found 1.0`},
		{"host_id empty", `{` + required + `,"host_id":""}`, `host_id: expected a non-empty string, found an empty string`},
		{"attempt_id number", `{` + required + `,"attempt_id":5}`, `attempt_id: expected a non-empty string, found a number`},
		{"record_id empty", `{` + required + `,"record_id":""}`, `record_id: expected a non-empty string, found an empty string`},
		{"stage unknown", `{` + required + `,"stage":"transport"}`, `stage: expected link, address or session, found "transport"`},
		{"stage escaped", `{` + required + `,"stage":"l\u0069nk\n"}`, `stage: expected link, address or session, found "l\u0069nk\n"`},
		{"device_seq negative", `{` + required + `,"device_seq":-1}`, `device_seq: expected an integer >= 0, found -1`},
		{"device_seq too big", `{` + required + `,"device_seq":99999999999999999999}`, `device_seq: expected an integer >= 0 that fits in 64 bits, found 99999999999999999999`},
		{"failure_class unknown", `{` + required + `,"failure_class":"network"}`, `failure_class: expected one of transient, auth, config, unsupported, overload, unknown, found "network"`},
		{"reason_code 256", `{` + required + `,"reason_code":256}`, `reason_code: expected an integer in 0..255, found 256`},
		{"reason_code negative", `{` + required + `,"reason_code":-1}`, `reason_code: expected an integer in 0..255, found -1`},
		{"reason_code huge", `{` + required + `,"reason_code":1e999}`, `reason_code: expected an integer in 0..255, found 1e999`},
		{"ceiling_s negative", `{` + required + `,"ceiling_s":-1}`, `ceiling_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found -1`},
		{"session_present string", `{` + required + `,"session_present":"yes"}`, `session_present: expected true or false, found a string`},
		{"outbox_depth negative", `{` + required + `,"outbox_depth":-1}`, `outbox_depth: expected an integer >= 0, found -1`},
		{"outbox_depth fraction", `{` + required + `,"outbox_depth":1.5}`, `outbox_depth: expected an integer >= 0, found 1.5`},
		{"outbox_depth whole fraction", `{` + required + `,"outbox_depth":3.0}`, `outbox_depth: expected an integer >= 0, found 3.0`},
		{"outbox_depth string", `{` + required + `,"outbox_depth":"3"}`, `outbox_depth: expected an integer >= 0, found a string`},
		{"outbox_depth too big", `{` + required + `,"outbox_depth":9223372036854775808}`, `outbox_depth: expected an integer >= 0 that fits in 64 bits, found 9223372036854775808`},
		{"outbox_flushed negative", `{` + required + `,"outbox_flushed":-1}`, `outbox_flushed: expected an integer >= 0, found -1`},
		{"outbox_flushed fraction", `{` + required + `,"outbox_flushed":1.5}`, `outbox_flushed: expected an integer >= 0, found 1.5`},
		{"outbox_flushed exponent", `{` + required + `,"outbox_flushed":1e3}`, `outbox_flushed: expected an integer >= 0, found 1e3`},
		{"outbox_flushed string", `{` + required + `,"outbox_flushed":"3"}`, `outbox_flushed: expected an integer >= 0, found a string`},
		{"outbox_flushed bool", `{` + required + `,"outbox_flushed":true}`, `outbox_flushed: expected an integer >= 0, found a boolean`},
		{"outbox_flushed too big", `{` + required + `,"outbox_flushed":99999999999999999999}`, `outbox_flushed: expected an integer >= 0 that fits in 64 bits, found 99999999999999999999`},
		{"inbound_redelivered negative", `{` + required + `,"inbound_redelivered":-2}`, `inbound_redelivered: expected an integer >= 0, found -2`},
		{"inbound_redelivered fraction", `{` + required + `,"inbound_redelivered":2.5}`, `inbound_redelivered: expected an integer >= 0, found 2.5`},
		{"inbound_redelivered string", `{` + required + `,"inbound_redelivered":"2"}`, `inbound_redelivered: expected an integer >= 0, found a string`},
		{"inbound_duplicates negative", `{` + required + `,"inbound_duplicates":-1}`, `inbound_duplicates: expected an integer >= 0, found -1`},
		{"inbound_duplicates whole fraction", `{` + required + `,"inbound_duplicates":1.0}`, `inbound_duplicates: expected an integer >= 0, found 1.0`},
		{"inbound_duplicates too big", `{` + required + `,"inbound_duplicates":99999999999999999999}`, `inbound_duplicates: expected an integer >= 0 that fits in 64 bits, found 99999999999999999999`},
		{"inbound_duplicates beyond inbound_redelivered", `{` + required + `,"inbound_duplicates":5,"inbound_redelivered":4}`, `inbound_duplicates: expected at most inbound_redelivered (4), found 5`},
		{"outbox_dropped negative", `{` + required + `,"outbox_dropped":-1}`, `outbox_dropped: expected an integer >= 0, found -1`},
		{"outbox_dropped text", `{` + required + `,"outbox_dropped":"12"}`, `outbox_dropped: expected an integer >= 0, found a string`},
		{"inbound_expired fraction", `{` + required + `,"inbound_expired":0.5}`, `inbound_expired: expected an integer >= 0, found 0.5`},
		{"inbound_expired beyond inbound_redelivered", `{` + required + `,"inbound_expired":5,"inbound_redelivered":4}`, `inbound_expired: expected at most inbound_redelivered (4), found 5`},
		{"outbox_depth twice", `{` + required + `,"outbox_depth":1,"outbox_depth":2}`, `outbox_depth: expected each member once, found a second "outbox_depth" at byte 169`},

		// Duplicates.
		{"duplicate field", `{` + required + `,"attempt":1}`, `attempt: expected each member once, found a second "attempt" at byte 152`},
		{"duplicate null", `{"stage":null,` + required + `,"stage":"link"}`, `stage: expected each member once, found a second "stage" at byte 165`},
		{"duplicate escaped", `{` + required + `,"client\u005fid":"dev-1"}`, `client_id: expected each member once, found a second "client_id" at byte 152`},
		{"duplicate unknown", `{"x":1,` + required + `,"x":2}`, `x: expected each member once, found a second "x" at byte 158`},
		{"duplicate many unknown", `{"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1,"h":1,"i":1,"j":1,"k":1,"l":1,"m":1,"n":1,"o":1,"p":1,"q":1,"r":1,"c":2}`, `c: expected each member once, found a second "c" at byte 110`},
		{"duplicate in envelope", `{"m":1,"audit":{` + required + `},"m":2}`, `m: expected each member once, found a second "m" at byte 168`},
		{"duplicate audit", `{"audit":{` + required + `},"audit":{` + required + `}}`, `audit: expected each member once, found a second "audit" at byte 162`},
		{"duplicate in carried record", `{"m":1,"audit":{` + required + `,"outcome":"connected"}}`, `outcome: expected each member once, found a second "outcome" at byte 167`},

		// Envelopes.
		{"audit string", `{"m":1,"audit":"x"}`, `audit: expected a JSON object (the record carried by a logging envelope), found a string`},
		{"audit null", `{` + required + `,"audit":null}`, `audit: expected a JSON object (the record carried by a logging envelope), found null`},
		{"audit array", `{"audit":[1]}`, `audit: expected a JSON object (the record carried by a logging envelope), found an array`},
		{"audit twice, first no object", `{"audit":5,"audit":{` + required + `}}`, `audit: expected a JSON object (the record carried by a logging envelope), found a number`},
		{"audit in audit", `{"audit":{` + required + `,"audit":{}}}`, `audit: expected a record without an "audit" member (envelopes do not nest), found an object`},
		{"field error in carried record", `{"m":1,"audit":{` + with(required, "attempt", `-1`) + `}}`, `attempt: expected an integer >= 0, found -1`},
		{"after envelope", `{"audit":{` + required + `}}]`, `expected nothing after the JSON object, found "]" at byte 162`},
	}
	var d Decoder // one decoder for all: errors must not leave state behind
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var rec Record
			err := d.Decode([]byte(tc.line), &rec)
			var fe *FieldError
			if !errors.As(err, &fe) || err != error(fe) {
				t.Fatalf("Decode(%s) = %#v, want a *FieldError", clip(tc.line), err)
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("Decode(%s):\n got %s\nwant %s", clip(tc.line), got, tc.want)
			}
		})
	}
	if err := d.Decode([]byte(realFlatLine), new(Record)); err != nil {
		t.Errorf("after the errors: %v", err)
	}
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// with returns members with the value of member name replaced.
func with(members, name, value string) string {
	start := strings.Index(members, `"`+name+`":`) + len(name) + 3
	end := start + strings.IndexByte(members[start:], ',')
	if end < start {
		end = len(members)
	}
	return members[:start] + value + members[end:]
}

// without returns the members of an object without member name.
func without(members, name string) string {
	var kept []string
	for _, m := range strings.Split(members, ",") {
		if !strings.HasPrefix(m, `"`+name+`":`) {
			kept = append(kept, m)
		}
	}
	return strings.Join(kept, ",")
}

func TestTimestampExpected(t *testing.T) {
	_, _, err := ParseTimestamp([]byte("x"))
	if fe := err.(*FieldError); fe.Expected != timestampExpected {
		t.Errorf("ParseTimestamp expects %q, the decoder says %q", fe.Expected, timestampExpected)
	}
}

// TestDecodeMatchesJSONValid checks that the decoder accepts exactly the
// JSON that encoding/json accepts, with the value in an unknown member.
func TestDecodeMatchesJSONValid(t *testing.T) {
	values := []string{
		`0`, `-0`, `1`, `-1`, `10`, `0.5`, `-0.5e-3`, `1E5`, `1e+5`, `1.5E-0`, `123456789012345678901234567890`,
		`01`, `-01`, `1.`, `.5`, `+1`, `1e`, `1e+`, `-`, `--1`, `0x1`, `1_000`, `1.5.3`, `Infinity`, `NaN`, `-Infinity`,
		`""`, `"a"`, `"\u00e9"`, `"\uD83D\uDE00"`, `"\ud800"`, `"\"\\\/\b\f\n\r\t"`, `"\a"`, `"\u12"`, `"\U0041"`, "\"\x01\"", "\"\x7f\"", `"`, `"\"`,
		`true`, `false`, `null`, `True`, `nul`, `truefalse`, `nulll`,
		`[]`, `[ ]`, `[1,2]`, `[1,]`, `[,1]`, `[1 2]`, `[`, `]`, `[[[]]]`, `[[]`,
		`{}`, `{ }`, `{"a":1}`, `{"a":1,}`, `{"a"}`, `{"a":}`, `{a:1}`, `{"a":1 "b":2}`, `{"a":{"b":{"c":[{}]}}}`, `{"a":1}}`, `{1:2}`,
		"[\n1\t,\r2 ]", ` 1 `, ``, `1 2`, `"a" "b"`, `[1]]`,
	}
	for _, v := range values {
		line := `{` + required + `,"x":` + v + `}`
		var d Decoder
		err := d.Decode([]byte(line), new(Record))
		if valid := json.Valid([]byte(line)); (err == nil) != valid {
			t.Errorf("value %s: json.Valid %v, Decode error %v", v, valid, err)
		}
	}
}

func TestDecodeNestingLimit(t *testing.T) {
	for _, n := range []int{maxNesting - 2, maxNesting - 1, maxNesting, maxNesting + 1} {
		for _, line := range []string{
			`{` + required + `,"x":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`,
			`{"audit":{` + required + `,"x":` + strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) + `}}`,
		} {
			var d Decoder
			err := d.Decode([]byte(line), new(Record))
			if valid := json.Valid([]byte(line)); (err == nil) != valid {
				t.Errorf("nesting %d: json.Valid %v, Decode error %v", n, valid, err)
			}
		}
	}
}

func TestDecimalFloat(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	check := func(s string) {
		got, ok := decimalFloat([]byte(s))
		want, err := strconv.ParseFloat(s, 64)
		if ok && (err != nil || math.Float64bits(got) != math.Float64bits(want)) {
			t.Errorf("decimalFloat(%s) = %v, strconv says %v", s, got, want)
		}
	}
	for _, s := range []string{"0", "0.0", "0.21", "123456789012345", "1234567890123456", "0.000000000000001", "9.99999999999999", "999999999999999"} {
		check(s)
	}
	for range 100000 {
		digits := strconv.FormatUint(rng.Uint64N(1e15), 10)
		p := rng.IntN(len(digits) + 1)
		s := digits[:p] + "." + digits[p:]
		if p == 0 {
			s = "0" + s
		}
		if p == len(digits) {
			s = digits
		}
		check(s)
	}
}

func TestAppendCompact(t *testing.T) {
	in := ` { "a b" : [ 1 , "x \" y" , "\\" ] ,"c":{} } `
	if got, want := string(appendCompact(nil, []byte(in))), `{"a b":[1,"x \" y","\\"],"c":{}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestKeySet(t *testing.T) {
	var s keySet
	for round := range 2 {
		for i := range 40 {
			if s.add([]byte(strconv.Itoa(i))) {
				t.Fatalf("round %d: %d reported twice", round, i)
			}
		}
		for i := range 40 {
			if !s.add([]byte(strconv.Itoa(i))) {
				t.Fatalf("round %d: %d not found", round, i)
			}
		}
		s.reset()
	}
	if !bytes.Equal(s.buf, nil) && len(s.buf) != 0 {
		t.Errorf("reset left %q", s.buf)
	}
}

// TestDecodeRoundTrip checks AppendJSON against Decode on records with
// every field set.
func TestDecodeRoundTrip(t *testing.T) {
	line := `{"device_id":"dev-\u00e9\"","attempt":3,"backoff_delay_s":1e-9,"outcome":"gave_up","clean_session":true,"recorded_at":"2026-11-30T23:59:59.123456789-23:59","schema":1,"host_id":"h","stage":"session","attempt_id":"a\n","record_id":"r","device_seq":0,"failure_class":"unknown","reason_code":255,"ceiling_s":2592000,"session_present":true,"outbox_depth":9007199254740992,"outbox_flushed":0,"zz":{"a":[]},"\u00e9":"x"}`
	first := decode(t, line)
	second := decode(t, string(first.AppendJSON(nil)))
	if !reflect.DeepEqual(first, second) {
		t.Errorf("\n got %+v\nwant %+v", *second, *first)
	}
}

func ExampleDecoder_Decode() {
	var d Decoder
	var rec Record
	for _, line := range []string{
		`{"message": "mqtt_reconnect", "levelname": "INFO", "audit": {"client_id": "dev-0001", "attempt": 2, "backoff_delay_s": 3.5, "outcome": "backoff_wait", "clean_session": false, "recorded_at": "2026-11-30T14:17:34.979964+00:00", "rssi": -71}}`,
		`{"client_id": "dev-0001", "attempt": 3, "backoff_delay_s": NaN, "outcome": "attempt_failed", "clean_session": false, "recorded_at": "2026-11-30T14:17:38.5+00:00"}`,
	} {
		if err := d.Decode([]byte(line), &rec); err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(rec.ClientID, rec.Attempt, rec.Outcome, rec.BackoffDelayS, rec.Time().Format(time.RFC3339Nano))
		fmt.Println("extra:", rec.Extra, "envelope:", rec.Envelope)
	}
	// Output:
	// dev-0001 2 backoff_wait 3.5 2026-11-30T14:17:34.979964Z
	// extra: {"rssi":-71} envelope: {"message":"mqtt_reconnect","levelname":"INFO"}
	// error: backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found NaN
}

// TestDecoderTimestamp checks the decoder's fast path for timestamps
// against ParseTimestamp, on timestamps of one day and of many.
func TestDecoderTimestamp(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	pick := func(options ...string) string { return options[rng.IntN(len(options))] }
	num := func(lo, hi int) string { return fmt.Sprintf("%02d", lo+rng.IntN(hi-lo+1)) }
	var d Decoder
	var date string
	for k := range 100000 {
		if k%8 == 0 {
			date = pick("2026-11-30", "2024-02-29", "2023-02-29", "1678-01-01", "1677-12-31", "2261-12-31", "2262-01-01", "2026-13-01", "2026-1x-01")
			if rng.IntN(4) == 0 {
				date = fmt.Sprintf("%04d-%s-%s", 1600+rng.IntN(800), num(0, 13), num(0, 32))
			}
		}
		ts := date + pick("T", "T", "T", "t", " ") + num(0, 24) + pick(":", ":", ":", "-") + num(0, 60) + ":" + num(0, 60)
		if n := rng.IntN(12); n > 0 {
			ts += "." + strconv.FormatUint(rng.Uint64(), 10)[:n-1]
		}
		ts += pick("+00:00", "Z", "z", "-05:30", "+23:59", "-23:59", "+24:00", "+05:60", "+0530", "", "+05:3x") + pick("", "", "", "", "x")
		gotNS, gotOff, gotErr := d.timestamp([]byte(ts))
		wantNS, wantOff, wantErr := ParseTimestamp([]byte(ts))
		if gotNS != wantNS || gotOff != wantOff || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("%s: decoder %d %d %v, ParseTimestamp %d %d %v", ts, gotNS, gotOff, gotErr, wantNS, wantOff, wantErr)
		}
	}
}

// TestInboundRoundTrip decodes inbound_redelivered and
// inbound_duplicates, present, absent and at the ends of their range, and
// checks that AppendJSON writes them back after outbox_flushed, before
// the unknown members, and that they never land in Extra.
func TestInboundRoundTrip(t *testing.T) {
	tests := []struct {
		members, want string // the members after required; AppendJSON's, after its required fields
		has           Presence
		redel, dups   int64
	}{
		{`,"inbound_redelivered":0`, `,"inbound_redelivered":0`, HasInboundRedelivered, 0, 0},
		{`,"inbound_duplicates":3`, `,"inbound_duplicates":3`, HasInboundDuplicates, 0, 3},
		{`,"x":1,"inbound_duplicates":2,"inbound_redelivered":9,"outbox_flushed":7`, `,"outbox_flushed":7,"inbound_redelivered":9,"inbound_duplicates":2,"x":1`,
			HasOutboxFlushed | HasInboundRedelivered | HasInboundDuplicates, 9, 2},
		{`,"inbound_redelivered":9223372036854775807,"inbound_duplicates":null`, `,"inbound_redelivered":9223372036854775807`, HasInboundRedelivered, math.MaxInt64, 0},
	}
	for _, tc := range tests {
		rec := decode(t, `{`+required+tc.members+`}`)
		if rec.Has != tc.has || rec.InboundRedelivered != tc.redel || rec.InboundDuplicates != tc.dups || strings.Contains(rec.Extra, "inbound") {
			t.Errorf("%s: Has %b, inbound_redelivered %d, inbound_duplicates %d, Extra %s; want %b, %d, %d", tc.members,
				rec.Has, rec.InboundRedelivered, rec.InboundDuplicates, rec.Extra, tc.has, tc.redel, tc.dups)
		}
		out := string(rec.AppendJSON(nil))
		if want := `{` + required + tc.want + `}`; out != want {
			t.Errorf("%s: AppendJSON\n got %s\nwant %s", tc.members, out, want)
		}
		if again := decode(t, out); *again != *rec {
			t.Errorf("%s: decoded again\n got %+v\nwant %+v", tc.members, *again, *rec)
		}
	}
}

// TestLostRoundTrip decodes outbox_dropped and inbound_expired, present,
// absent and at the ends of their range, and checks that AppendJSON
// writes them back after inbound_duplicates, before the unknown members,
// that they never land in Extra, and that the expired are at most the
// redelivered.
func TestLostRoundTrip(t *testing.T) {
	tests := []struct {
		members, want    string // the members after required; AppendJSON's, after its required fields
		has              Presence
		dropped, expired int64
	}{
		{`,"outbox_dropped":0`, `,"outbox_dropped":0`, HasOutboxDropped, 0, 0},
		{`,"inbound_expired":4`, `,"inbound_expired":4`, HasInboundExpired, 0, 4},
		{`,"x":1,"inbound_expired":2,"outbox_dropped":9223372036854775807,"inbound_duplicates":1`,
			`,"inbound_duplicates":1,"outbox_dropped":9223372036854775807,"inbound_expired":2,"x":1`,
			HasInboundDuplicates | HasOutboxDropped | HasInboundExpired, math.MaxInt64, 2},
		{`,"outbox_dropped":null,"inbound_expired":null`, ``, 0, 0, 0},
	}
	for _, tc := range tests {
		rec := decode(t, `{`+required+tc.members+`}`)
		if rec.Has&^HasInboundDuplicates != tc.has&^HasInboundDuplicates || rec.OutboxDropped != tc.dropped || rec.InboundExpired != tc.expired ||
			strings.Contains(rec.Extra, "dropped") || strings.Contains(rec.Extra, "expired") {
			t.Errorf("%s: Has %b, outbox_dropped %d, inbound_expired %d, Extra %s; want %b, %d, %d", tc.members,
				rec.Has, rec.OutboxDropped, rec.InboundExpired, rec.Extra, tc.has, tc.dropped, tc.expired)
		}
		out := string(rec.AppendJSON(nil))
		if want := `{` + required + tc.want + `}`; out != want {
			t.Errorf("%s: AppendJSON\n got %s\nwant %s", tc.members, out, want)
		}
		if again := decode(t, out); *again != *rec {
			t.Errorf("%s: decoded again\n got %+v\nwant %+v", tc.members, *again, *rec)
		}
	}
}

// TestOutboxRoundTrip decodes outbox_depth and outbox_flushed, present,
// absent and at the ends of their range, and checks that AppendJSON writes
// them back after session_present, before the unknown members, and that
// they never land in Extra.
func TestOutboxRoundTrip(t *testing.T) {
	tests := []struct {
		members, want string // the members after required; AppendJSON's, after its required fields
		has           Presence
		depth, flush  int64
	}{
		{``, ``, 0, 0, 0},
		{`,"outbox_depth":0`, `,"outbox_depth":0`, HasOutboxDepth, 0, 0},
		{`,"outbox_flushed":9007199254740992`, `,"outbox_flushed":9007199254740992`, HasOutboxFlushed, 0, 1 << 53},
		{`,"x":1,"outbox_flushed":7,"outbox_depth":12`, `,"outbox_depth":12,"outbox_flushed":7,"x":1`, HasOutboxDepth | HasOutboxFlushed, 12, 7},
		{`,"outbox_depth":9223372036854775807,"outbox_flushed":null`, `,"outbox_depth":9223372036854775807`, HasOutboxDepth, math.MaxInt64, 0},
	}
	for _, tc := range tests {
		rec := decode(t, `{`+required+tc.members+`}`)
		if rec.Has != tc.has || rec.OutboxDepth != tc.depth || rec.OutboxFlushed != tc.flush || strings.Contains(rec.Extra, "outbox") {
			t.Errorf("%s: Has %b, outbox_depth %d, outbox_flushed %d, Extra %s; want %b, %d, %d", tc.members,
				rec.Has, rec.OutboxDepth, rec.OutboxFlushed, rec.Extra, tc.has, tc.depth, tc.flush)
		}
		out := string(rec.AppendJSON(nil))
		if want := `{` + required + tc.want + `}`; out != want {
			t.Errorf("%s: AppendJSON\n got %s\nwant %s", tc.members, out, want)
		}
		if again := decode(t, out); *again != *rec {
			t.Errorf("%s: decoded again\n got %+v\nwant %+v", tc.members, *again, *rec)
		}
	}
}

// TestDecodeBorrow: a borrowing Decoder's strings are the line's bytes,
// except a value that had escapes, which is copied (the unescaped bytes
// are the Decoder's, reused by the next value), and equal what a Decoder
// that does not borrow decodes.
func TestDecodeBorrow(t *testing.T) {
	in := func(s string, line []byte) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		start := uintptr(unsafe.Pointer(unsafe.SliceData(line)))
		return p >= start && p < start+uintptr(len(line))
	}
	escaped := strings.Replace(realFlatLine, `"dev-0001"`, `"dev\u002d0001"`, 1)
	for _, line := range []string{realFlatLine, realEnvelopeLine, escaped} {
		b := []byte(line)
		var borrow, own Record
		d := Decoder{Borrow: true}
		if err := d.Decode(b, &borrow); err != nil {
			t.Fatal(err)
		}
		if err := new(Decoder).Decode([]byte(line), &own); err != nil {
			t.Fatal(err)
		}
		if borrow != own {
			t.Errorf("borrowed %+v\nowned    %+v", borrow, own)
		}
		if want := line != escaped; in(borrow.ClientID, b) != want {
			t.Errorf("%.40s: client_id in the line: %v, want %v", line, !want, want)
		}
	}
}
