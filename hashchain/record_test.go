package hashchain

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stormaudit/stormaudit/auditfmt"
)

func TestRecordKeysSorted(t *testing.T) {
	for i := 1; i < len(recordKeys); i++ {
		if compareUTF16([]byte(recordKeys[i-1].name), []byte(recordKeys[i].name)) >= 0 {
			t.Errorf("%s sorts before %s", recordKeys[i].name, recordKeys[i-1].name)
		}
	}
}

// baseRecord is a record as the reference client writes it:
// {"client_id": "dev-0001", "attempt": 2, "backoff_delay_s": 0.21,
// "outcome": "backoff_wait", "clean_session": false,
// "recorded_at": "2026-11-30T14:17:34.979964+00:00"}
func baseRecord() auditfmt.Record {
	ns, _, err := auditfmt.ParseTimestamp([]byte("2026-11-30T14:17:34.979964+00:00"))
	if err != nil {
		panic(err)
	}
	return auditfmt.Record{
		ClientID:      "dev-0001",
		Attempt:       2,
		BackoffDelayS: 0.21,
		Outcome:       auditfmt.BackoffWait,
		RecordedAt:    ns,
	}
}

func TestRecordBytes(t *testing.T) {
	full := baseRecord()
	full.Has = auditfmt.HasSchema | auditfmt.HasDeviceSeq | auditfmt.HasReasonCode | auditfmt.HasCeiling | auditfmt.HasSessionPresent
	full.Schema, full.DeviceSeq, full.ReasonCode, full.CeilingS = 1, 17, 5, 8
	full.Stage, full.FailureClass, full.SessionPresent = auditfmt.StageLink, auditfmt.FailAuth, true
	full.HostID, full.AttemptID, full.RecordID = "gw-a", "a-3", "r-9"
	full.OffsetMin, full.CleanSession = -330, true

	withOutbox := baseRecord()
	withOutbox.Has, withOutbox.OutboxDepth, withOutbox.OutboxFlushed = auditfmt.HasOutboxDepth|auditfmt.HasOutboxFlushed, 1<<53, 0
	withOutbox.HostID = "gw-a"

	withInbound := baseRecord()
	withInbound.Has = auditfmt.HasInboundRedelivered | auditfmt.HasInboundDuplicates | auditfmt.HasOutboxFlushed
	withInbound.InboundRedelivered, withInbound.InboundDuplicates, withInbound.OutboxFlushed = 1<<53, 0, 4
	withInbound.HostID = "gw-a"

	withLost := baseRecord()
	withLost.Has = auditfmt.HasOutboxDropped | auditfmt.HasInboundExpired | auditfmt.HasInboundRedelivered |
		auditfmt.HasInboundDuplicates | auditfmt.HasOutboxDepth | auditfmt.HasOutboxFlushed
	withLost.OutboxDropped, withLost.InboundExpired, withLost.InboundRedelivered = 1<<53, 0, 7
	withLost.InboundDuplicates, withLost.OutboxDepth, withLost.OutboxFlushed = 1, 3, 4

	withExtra := baseRecord()
	withExtra.Extra = `{"zone":"north","attempt_x":[1.50,{"b":true,"a":null}],"Z":"\u00e9","aa":-0}`
	withExtra.Envelope = `{"message":"mqtt_reconnect","levelname":"INFO"}`

	for _, tt := range []struct {
		name string
		r    auditfmt.Record
		want string
	}{
		{"required", baseRecord(),
			`{"record":{"attempt":2,"backoff_delay_s":0.21,"clean_session":false,"client_id":"dev-0001","outcome":"backoff_wait","recorded_at":"2026-11-30T14:17:34.979964+00:00"}}`},
		{"all fields", full,
			`{"record":{"attempt":2,"attempt_id":"a-3","backoff_delay_s":0.21,"ceiling_s":8,"clean_session":true,"client_id":"dev-0001",` +
				`"device_seq":17,"failure_class":"auth","host_id":"gw-a","outcome":"backoff_wait","reason_code":5,"record_id":"r-9",` +
				`"recorded_at":"2026-11-30T08:47:34.979964-05:30","schema":1,"session_present":true,"stage":"link"}}`},
		{"outbox fields", withOutbox,
			`{"record":{"attempt":2,"backoff_delay_s":0.21,"clean_session":false,"client_id":"dev-0001","host_id":"gw-a",` +
				`"outbox_depth":9007199254740992,"outbox_flushed":0,"outcome":"backoff_wait","recorded_at":"2026-11-30T14:17:34.979964+00:00"}}`},
		{"inbound fields", withInbound,
			`{"record":{"attempt":2,"backoff_delay_s":0.21,"clean_session":false,"client_id":"dev-0001","host_id":"gw-a",` +
				`"inbound_duplicates":0,"inbound_redelivered":9007199254740992,"outbox_flushed":4,"outcome":"backoff_wait","recorded_at":"2026-11-30T14:17:34.979964+00:00"}}`},
		{"dropped and expired", withLost,
			`{"record":{"attempt":2,"backoff_delay_s":0.21,"clean_session":false,"client_id":"dev-0001","inbound_duplicates":1,"inbound_expired":0,` +
				`"inbound_redelivered":7,"outbox_depth":3,"outbox_dropped":9007199254740992,"outbox_flushed":4,"outcome":"backoff_wait",` +
				`"recorded_at":"2026-11-30T14:17:34.979964+00:00"}}`},
		{"extra and envelope", withExtra,
			`{"envelope":{"levelname":"INFO","message":"mqtt_reconnect"},"record":{"Z":"é","aa":0,"attempt":2,"attempt_x":[1.5,{"a":null,"b":true}],` +
				`"backoff_delay_s":0.21,"clean_session":false,"client_id":"dev-0001","outcome":"backoff_wait","recorded_at":"2026-11-30T14:17:34.979964+00:00","zone":"north"}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AppendRecordBytes(nil, &tt.r)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestRecordBytesRandom checks R of random records against an independent
// construction: the record as a Go map, through encoding/json.
func TestRecordBytesRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range 2000 {
		r := randomRecord(rng)
		R, err := AppendRecordBytes(nil, &r)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		again, err := AppendCanonicalJSON(nil, R)
		if err != nil || string(again) != string(R) {
			t.Fatalf("record %d: R is not canonical:\n%s\n%s (%v)", i, R, again, err)
		}
		var got, want any
		if err := json.Unmarshal(R, &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(recordAsJSON(t, &r), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("record %d:\ngot  %v\nwant %v", i, got, want)
		}
	}
}

var extraNames = []string{"a", "attempt0", "attempt_ie", "b", "ceiling", "client_id0", "host", "outcomes", "recorded", "schema_", "stage_", "zz", "é", "\U0001F600", "\uFB01", "\u00e9x"}

func randomRecord(rng *rand.Rand) auditfmt.Record {
	r := auditfmt.Record{
		ClientID:      "dev-" + strconv.Itoa(rng.IntN(1000)),
		Attempt:       rng.Int64N(20),
		BackoffDelayS: math.Round(rng.Float64()*120e6) / 1e6,
		Outcome:       auditfmt.Outcome(1 + rng.IntN(8)),
		CleanSession:  rng.IntN(2) == 0,
		RecordedAt:    1795961854979964000 + rng.Int64N(1e12),
		OffsetMin:     int16(rng.IntN(24*60*2-1) - (24*60 - 1)),
		Has:           auditfmt.Presence(rng.IntN(2048)),
		Stage:         auditfmt.Stage(rng.IntN(4)),
		FailureClass:  auditfmt.FailureClass(rng.IntN(7)),
		Schema:        1, DeviceSeq: rng.Int64N(1 << 40), ReasonCode: rng.Int64N(256),
		CeilingS: float64(rng.IntN(300)), SessionPresent: rng.IntN(2) == 0,
		OutboxDepth: rng.Int64N(1 << 20), OutboxFlushed: rng.Int64N(1<<53 + 1),
		InboundRedelivered: rng.Int64N(1 << 20), OutboxDropped: rng.Int64N(1<<53 + 1),
	}
	r.InboundDuplicates, r.InboundExpired = rng.Int64N(r.InboundRedelivered+1), rng.Int64N(r.InboundRedelivered+1)
	if rng.IntN(2) == 0 {
		r.HostID = "gw-\t\"" + strconv.Itoa(rng.IntN(9))
	}
	if rng.IntN(3) == 0 {
		r.AttemptID, r.RecordID = "att-é", "rec-\U0001F600"
	}
	if rng.IntN(2) == 0 {
		var members []string
		for _, k := range rng.Perm(len(extraNames))[:1+rng.IntN(5)] {
			members = append(members, strconv.Quote(extraNames[k])+":"+[]string{`1.50`, `"x"`, `[1,{"b":2,"a":3}]`, `null`, `-0`, `1e300`}[rng.IntN(6)])
		}
		r.Extra = "{" + strings.Join(members, ",") + "}"
	}
	if rng.IntN(3) == 0 {
		r.Envelope = `{"message":"mqtt_reconnect","name":"incidentgis.mqtt.reconnect","levelname":"INFO","extra":{"b":[],"a":0.5e1}}`
	}
	return r
}

// recordAsJSON builds {"envelope":...,"record":...} for r with maps and
// encoding/json, independently of AppendRecordBytes.
func recordAsJSON(t *testing.T, r *auditfmt.Record) []byte {
	rec := map[string]any{
		"client_id": r.ClientID, "attempt": r.Attempt, "backoff_delay_s": r.BackoffDelayS,
		"outcome": r.Outcome.String(), "clean_session": r.CleanSession,
		"recorded_at": r.Time().Format("2006-01-02T15:04:05.999999999-07:00"),
	}
	optional := map[auditfmt.Presence]func(){
		auditfmt.HasSchema:             func() { rec["schema"] = r.Schema },
		auditfmt.HasDeviceSeq:          func() { rec["device_seq"] = r.DeviceSeq },
		auditfmt.HasReasonCode:         func() { rec["reason_code"] = r.ReasonCode },
		auditfmt.HasCeiling:            func() { rec["ceiling_s"] = r.CeilingS },
		auditfmt.HasSessionPresent:     func() { rec["session_present"] = r.SessionPresent },
		auditfmt.HasOutboxDepth:        func() { rec["outbox_depth"] = r.OutboxDepth },
		auditfmt.HasOutboxFlushed:      func() { rec["outbox_flushed"] = r.OutboxFlushed },
		auditfmt.HasInboundRedelivered: func() { rec["inbound_redelivered"] = r.InboundRedelivered },
		auditfmt.HasInboundDuplicates:  func() { rec["inbound_duplicates"] = r.InboundDuplicates },
		auditfmt.HasOutboxDropped:      func() { rec["outbox_dropped"] = r.OutboxDropped },
		auditfmt.HasInboundExpired:     func() { rec["inbound_expired"] = r.InboundExpired },
	}
	for bit, set := range optional {
		if r.Has&bit != 0 {
			set()
		}
	}
	for name, v := range map[string]string{"host_id": r.HostID, "attempt_id": r.AttemptID, "record_id": r.RecordID, "stage": r.Stage.String(), "failure_class": r.FailureClass.String()} {
		if v != "" {
			rec[name] = v
		}
	}
	if r.Extra != "" {
		var extra map[string]any
		if err := json.Unmarshal([]byte(r.Extra), &extra); err != nil {
			t.Fatal(err)
		}
		for k, v := range extra {
			rec[k] = v
		}
	}
	top := map[string]any{"record": rec}
	if r.Envelope != "" {
		top["envelope"] = json.RawMessage(r.Envelope)
	}
	b, err := json.Marshal(top)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRecordBytesErrors(t *testing.T) {
	for _, tt := range []struct {
		name   string
		edit   func(r *auditfmt.Record)
		field  string
		expect string
	}{
		{"attempt beyond 2^53", func(r *auditfmt.Record) { r.Attempt = 1<<53 + 1 }, "attempt", "±2^53"},
		{"device_seq beyond 2^53", func(r *auditfmt.Record) { r.Has, r.DeviceSeq = auditfmt.HasDeviceSeq, math.MaxInt64 }, "device_seq", "±2^53"},
		{"outbox_depth beyond 2^53", func(r *auditfmt.Record) { r.Has, r.OutboxDepth = auditfmt.HasOutboxDepth, 1<<53+1 }, "outbox_depth", "±2^53"},
		{"outbox_flushed beyond 2^53", func(r *auditfmt.Record) { r.Has, r.OutboxFlushed = auditfmt.HasOutboxFlushed, math.MaxInt64 }, "outbox_flushed", "±2^53"},
		{"inbound_redelivered beyond 2^53", func(r *auditfmt.Record) { r.Has, r.InboundRedelivered = auditfmt.HasInboundRedelivered, 1<<53+1 }, "inbound_redelivered", "±2^53"},
		{"inbound_duplicates beyond 2^53", func(r *auditfmt.Record) { r.Has, r.InboundDuplicates = auditfmt.HasInboundDuplicates, math.MaxInt64 }, "inbound_duplicates", "±2^53"},
		{"outbox_dropped beyond 2^53", func(r *auditfmt.Record) { r.Has, r.OutboxDropped = auditfmt.HasOutboxDropped, 1<<53+1 }, "outbox_dropped", "±2^53"},
		{"inbound_expired beyond 2^53", func(r *auditfmt.Record) { r.Has, r.InboundExpired = auditfmt.HasInboundExpired, math.MaxInt64 }, "inbound_expired", "±2^53"},
		{"NaN delay", func(r *auditfmt.Record) { r.BackoffDelayS = math.NaN() }, "backoff_delay_s", "finite"},
		{"infinite ceiling", func(r *auditfmt.Record) { r.Has, r.CeilingS = auditfmt.HasCeiling, math.Inf(1) }, "ceiling_s", "finite"},
		{"client_id not UTF-8", func(r *auditfmt.Record) { r.ClientID = "dev-\xff" }, "client_id", "UTF-8"},
		{"host_id not UTF-8", func(r *auditfmt.Record) { r.HostID = "\xc3" }, "host_id", "UTF-8"},
		{"no outcome", func(r *auditfmt.Record) { r.Outcome = 0 }, "outcome", "vocabulary"},
		{"unknown outcome", func(r *auditfmt.Record) { r.Outcome = 200 }, "outcome", "vocabulary"},
		{"unknown stage", func(r *auditfmt.Record) { r.Stage = 9 }, "stage", "vocabulary"},
		{"unknown failure class", func(r *auditfmt.Record) { r.FailureClass = 99 }, "failure_class", "vocabulary"},
		{"offset", func(r *auditfmt.Record) { r.OffsetMin = 24 * 60 }, "recorded_at", "±23:59"},
		{"extra big integer", func(r *auditfmt.Record) { r.Extra = `{"span_id":12345678901234567890}` }, "span_id", "exactly"},
		{"extra deep big integer", func(r *auditfmt.Record) { r.Extra = `{"a":1,"trace":{"ids":[1,0.1000000000000000055511151231257827]}}` }, "trace", "exactly"},
		{"extra overflow", func(r *auditfmt.Record) { r.Extra = `{"x":1e400}` }, "x", "range"},
		{"extra lone surrogate", func(r *auditfmt.Record) { r.Extra = `{"x":"\ud800"}` }, "x", "surrogate"},
		{"extra duplicate", func(r *auditfmt.Record) { r.Extra = `{"x":1,"x":2}` }, "x", "once"},
		{"extra field name", func(r *auditfmt.Record) { r.Extra = `{"x":1,"client_id":"dev-2"}` }, "client_id", "named like a field"},
		{"extra absent field name", func(r *auditfmt.Record) { r.Extra = `{"host_id":"gw"}` }, "host_id", "named like a field"},
		{"extra alias", func(r *auditfmt.Record) { r.Extra = `{"device_id":"dev-0001"}` }, "device_id", "named like a field"},
		{"extra outbox_depth beside the field", func(r *auditfmt.Record) {
			r.Has, r.OutboxDepth, r.Extra = auditfmt.HasOutboxDepth, 3, `{"outbox_depth":3}`
		}, "outbox_depth", "named like a field"},
		{"extra inbound_expired beside the field", func(r *auditfmt.Record) {
			r.Has, r.InboundExpired, r.Extra = auditfmt.HasInboundExpired, 0, `{"inbound_expired":0}`
		}, "inbound_expired", "named like a field"},
		{"extra not an object", func(r *auditfmt.Record) { r.Extra = `[1]` }, "extra", "a JSON object"},
		{"extra trailing", func(r *auditfmt.Record) { r.Extra = `{"x":1}x` }, "x", "the end"},
		{"extra syntax", func(r *auditfmt.Record) { r.Extra = `{"x":01}` }, "x", "',' or '}'"},
		{"envelope not an object", func(r *auditfmt.Record) { r.Envelope = `"x"` }, "envelope", "a JSON object"},
		{"envelope duplicate", func(r *auditfmt.Record) { r.Envelope = `{"m":1,"m":1}` }, "m", "once"},
		{"envelope big number", func(r *auditfmt.Record) { r.Envelope = `{"created":1795961854.9799640000001}` }, "created", "exactly"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := baseRecord()
			tt.edit(&r)
			dst := []byte("keep")
			got, err := AppendRecordBytes(dst, &r)
			var fe *auditfmt.FieldError
			if !errors.As(err, &fe) || fe.Field != tt.field || !strings.Contains(fe.Expected, tt.expect) {
				t.Fatalf("got %s, %v; want a FieldError for %s expecting %q", got, err, tt.field, tt.expect)
			}
			if string(got) != "keep" {
				t.Errorf("dst changed to %q", got)
			}
		})
	}
}

func TestRecordBytesAllocs(t *testing.T) {
	r := baseRecord()
	buf := make([]byte, 0, 1024)
	if n := testing.AllocsPerRun(100, func() { _, _ = AppendRecordBytes(buf, &r) }); n != 0 {
		t.Errorf("%v allocations for a record without Extra, want 0", n)
	}
	if raceEnabled {
		return
	}
	r.Extra = `{"zone":"north","rssi":-71}`
	r.Envelope = `{"message":"mqtt_reconnect"}`
	if n := testing.AllocsPerRun(100, func() { _, _ = AppendRecordBytes(buf, &r) }); n > 1 {
		t.Errorf("%v allocations for a record with Extra and Envelope, want at most 1", n)
	}
}

// TestRecordBytesOutboxInExtra pins R of the rows of datasets written
// before outbox_depth and outbox_flushed were fields, which hold them in
// extra: such rows still have R, the very R of the record with the
// fields, so those datasets still verify. A record with the field and the
// member both has none.
func TestRecordBytesOutboxInExtra(t *testing.T) {
	legacy := baseRecord()
	legacy.Extra = `{"zone":"n","outbox_flushed":7,"outbox_depth":12.0}`
	fields := baseRecord()
	fields.Extra = `{"zone":"n"}`
	fields.Has, fields.OutboxDepth, fields.OutboxFlushed = auditfmt.HasOutboxDepth|auditfmt.HasOutboxFlushed, 12, 7
	mixed := baseRecord()
	mixed.Extra = `{"zone":"n","outbox_flushed":7}`
	mixed.Has, mixed.OutboxDepth = auditfmt.HasOutboxDepth, 12
	const want = `{"record":{"attempt":2,"backoff_delay_s":0.21,"clean_session":false,"client_id":"dev-0001",` +
		`"outbox_depth":12,"outbox_flushed":7,"outcome":"backoff_wait","recorded_at":"2026-11-30T14:17:34.979964+00:00","zone":"n"}}`
	checkAddedFieldsInExtra(t, want, map[string]auditfmt.Record{"in extra": legacy, "fields": fields, "one of each": mixed})
}

// TestRecordBytesInboundInExtra is TestRecordBytesOutboxInExtra for
// inbound_redelivered and inbound_duplicates, which joined the schema
// later still.
func TestRecordBytesInboundInExtra(t *testing.T) {
	legacy := baseRecord()
	legacy.Extra = `{"inbound_duplicates":1,"zone":"n","inbound_redelivered":40}`
	fields := baseRecord()
	fields.Extra = `{"zone":"n"}`
	fields.Has, fields.InboundRedelivered, fields.InboundDuplicates = auditfmt.HasInboundRedelivered|auditfmt.HasInboundDuplicates, 40, 1
	mixed := baseRecord()
	mixed.Extra = `{"zone":"n","inbound_duplicates":1}`
	mixed.Has, mixed.InboundRedelivered = auditfmt.HasInboundRedelivered, 40
	const want = `{"record":{"attempt":2,"backoff_delay_s":0.21,"clean_session":false,"client_id":"dev-0001",` +
		`"inbound_duplicates":1,"inbound_redelivered":40,"outcome":"backoff_wait","recorded_at":"2026-11-30T14:17:34.979964+00:00","zone":"n"}}`
	checkAddedFieldsInExtra(t, want, map[string]auditfmt.Record{"in extra": legacy, "fields": fields, "one of each": mixed})
}

// checkAddedFieldsInExtra checks that every record of recs has R want,
// every time, and passes CheckRecord.
func checkAddedFieldsInExtra(t *testing.T, want string, recs map[string]auditfmt.Record) {
	t.Helper()
	for name, r := range recs {
		for range 2 { // the same bytes every time
			got, err := AppendRecordBytes(nil, &r)
			if err != nil || string(got) != want {
				t.Errorf("%s: got %s, %v\nwant %s", name, got, err, want)
			}
			if err := CheckRecord(&r); err != nil {
				t.Errorf("%s: CheckRecord: %v", name, err)
			}
		}
	}
}

// TestRecordBytesLostInExtra is TestRecordBytesOutboxInExtra for
// outbox_dropped and inbound_expired, which joined the schema after the
// inbound fields.
func TestRecordBytesLostInExtra(t *testing.T) {
	legacy := baseRecord()
	legacy.Extra = `{"outbox_dropped":5,"zone":"n","inbound_expired":2}`
	fields := baseRecord()
	fields.Extra = `{"zone":"n"}`
	fields.Has, fields.OutboxDropped, fields.InboundExpired = auditfmt.HasOutboxDropped|auditfmt.HasInboundExpired, 5, 2
	mixed := baseRecord()
	mixed.Extra = `{"zone":"n","inbound_expired":2.0}`
	mixed.Has, mixed.OutboxDropped = auditfmt.HasOutboxDropped, 5
	const want = `{"record":{"attempt":2,"backoff_delay_s":0.21,"clean_session":false,"client_id":"dev-0001",` +
		`"inbound_expired":2,"outbox_dropped":5,"outcome":"backoff_wait","recorded_at":"2026-11-30T14:17:34.979964+00:00","zone":"n"}}`
	checkAddedFieldsInExtra(t, want, map[string]auditfmt.Record{"in extra": legacy, "fields": fields, "one of each": mixed})
}
