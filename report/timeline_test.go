package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/auditfmt"
)

// device returns a built device that loses its connection, fails once on
// bad credentials after a rate-limited wait, and reconnects.
func device() *analyze.Device {
	ev := func(at int64, o auditfmt.Outcome, attempt int64, delay float64, line int64) analyze.Event {
		return analyze.Event{At: t0 + at, Outcome: o, Attempt: attempt, Delay: delay, Ceiling: math.NaN(),
			Seq: -1, Outbox: -1, Flushed: -1, Redelivered: -1, Duplicates: -1, Dropped: -1, Expired: -1, Reason: -1, Presence: -1, Ref: analyze.Ref{Source: 0, Line: line, Row: line - 1}}
	}
	d := &analyze.Device{ID: "dev-0001", Host: "gw-a", Hosts: 1, Events: []analyze.Event{
		ev(0, auditfmt.Disconnected, 0, 0, 1),
		ev(0, auditfmt.BackoffWait, 0, 2.5, 2),
		ev(2_500_000_000, auditfmt.RateLimitedWait, 0, 0.5, 3),
		ev(3_100_000_000, auditfmt.AttemptFailed, 1, 2.5, 4),
		ev(3_100_000_000, auditfmt.BackoffWait, 1, 4, 5),
		ev(7_200_000_000, auditfmt.Connected, 0, 4, 6),
	}}
	d.Events[1].Ceiling, d.Events[1].Outbox = 4, 12
	d.Events[3].Fail, d.Events[3].Reason = auditfmt.FailAuth, 135
	d.Events[5].Presence, d.Events[5].Outbox, d.Events[5].Flushed = 1, 0, 12
	d.Events[5].Redelivered, d.Events[5].Duplicates = 40, 0
	d.Build()
	return d
}

func TestTimelineText(t *testing.T) {
	var b bytes.Buffer
	if err := TimelineText(&b, Timeline{Device: device(), Sources: []string{"gw-a.ndjson"}}); err != nil {
		t.Fatal(err)
	}
	const want = `device dev-0001: 6 records, 2 attempts, 1 session, 1 outage; host gw-a; clean_session false
records in the device's own order (device_seq, else as written)

time                    outcome            attempt  delay_s  socket-open             record
2026-11-30T14:17:30Z    disconnected       0        0                                gw-a.ndjson:1
2026-11-30T14:17:30Z    backoff_wait       0        2.5      2026-11-30T14:17:33Z    gw-a.ndjson:2  ceiling_s=4 outbox_depth=12
2026-11-30T14:17:32.5Z  rate_limited_wait  0        0.5                              gw-a.ndjson:3
2026-11-30T14:17:33.1Z  attempt_failed     1        2.5                              gw-a.ndjson:4  failure_class=auth reason_code=135
2026-11-30T14:17:33.1Z  backoff_wait       1        4        2026-11-30T14:17:37.1Z  gw-a.ndjson:5
2026-11-30T14:17:37.2Z  connected          0        4                                gw-a.ndjson:6  session_present=true outbox_depth=0 outbox_flushed=12 inbound_redelivered=40 inbound_duplicates=0

sessions:
  up 2026-11-30T14:17:37.2Z, still up at the end

outages:
  loss from 2026-11-30T14:17:30Z to 2026-11-30T14:17:37.2Z (7.2s); 2 attempts
`
	if got := b.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestTimelineJSON(t *testing.T) {
	var b bytes.Buffer
	tl := Timeline{Device: device(), Sources: []string{"gw-a.ndjson"}, Files: []string{"ds/part-00000.parquet"}}
	if err := TimelineJSON(&b, tl); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Device   string
		Host     string
		Sources  []string
		Events   []map[string]any
		Attempts []map[string]any
		Sessions []map[string]any
		Outages  []map[string]any
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("decode: %v\n%s", err, b.Bytes())
	}
	if doc.Device != "dev-0001" || doc.Host != "gw-a" || len(doc.Events) != 6 || len(doc.Attempts) != 2 ||
		len(doc.Sessions) != 1 || len(doc.Outages) != 1 {
		t.Fatalf("got %s", b.Bytes())
	}
	e := doc.Events[1]
	if e["outcome"] != "backoff_wait" || e["socket_open"] != "2026-11-30T14:17:33Z" || e["ceiling_s"] != 4.0 ||
		e["source"] != "gw-a.ndjson" || e["line"] != 2.0 || e["file"] != "ds/part-00000.parquet" || e["row"] != 1.0 {
		t.Errorf("event 1 = %v", e)
	}
	if _, ok := doc.Events[0]["ceiling_s"]; ok {
		t.Errorf("event 0 has a ceiling_s: %v", doc.Events[0])
	}
	for _, name := range []string{"outbox_depth", "outbox_flushed", "inbound_redelivered", "inbound_duplicates"} {
		if _, ok := doc.Events[0][name]; ok {
			t.Errorf("event 0 has an %s: %v", name, doc.Events[0])
		}
	}
	if _, ok := e["outbox_flushed"]; e["outbox_depth"] != 12.0 || ok {
		t.Errorf("event 1: outbox_depth %v, outbox_flushed %v; want 12 and none", e["outbox_depth"], e["outbox_flushed"])
	}
	if e := doc.Events[5]; e["outbox_depth"] != 0.0 || e["outbox_flushed"] != 12.0 {
		t.Errorf("event 5: outbox_depth %v, outbox_flushed %v; want 0 (present) and 12", e["outbox_depth"], e["outbox_flushed"])
	}
	if e := doc.Events[5]; e["inbound_redelivered"] != 40.0 || e["inbound_duplicates"] != 0.0 {
		t.Errorf("event 5: inbound_redelivered %v, inbound_duplicates %v; want 40 and 0 (present)", e["inbound_redelivered"], e["inbound_duplicates"])
	}
	if e := doc.Events[3]; e["failure_class"] != "auth" || e["reason_code"] != 135.0 {
		t.Errorf("event 3 = %v", e)
	}
	a := doc.Attempts[0]
	if a["wait_s"] != 0.5 || a["socket_open"] != "2026-11-30T14:17:33Z" || a["event"] != 1.0 || a["outcome_event"] != 3.0 {
		t.Errorf("attempt 0 = %v", a)
	}
	if a := doc.Attempts[1]; a["after_failure"] != "auth" || a["outcome_event"] != 5.0 {
		t.Errorf("attempt 1 = %v", a)
	}
	if s := doc.Sessions[0]; s["down"] != nil || s["event"] != 5.0 {
		t.Errorf("session = %v", s)
	}
	if o := doc.Outages[0]; o["end"] != "2026-11-30T14:17:37.2Z" || o["attempts"] != 2.0 {
		t.Errorf("outage = %v", o)
	}
	if strings.Contains(b.String(), "NaN") {
		t.Errorf("NaN in JSON:\n%s", b.Bytes())
	}
}

// TestSpanNeverNegative: two records a device wrote out of order (a
// connected record and the backoff_wait after it, 109 µs apart in reverse
// line order) make a session that ends before it began; it is shown as no
// time, with the reason, never as a negative duration.
func TestSpanNeverNegative(t *testing.T) {
	if got := Span(1000, 2500); got != "1.5µs" {
		t.Errorf("Span(1000, 2500) = %q", got)
	}
	if got, want := Span(109_000, 0), "0s (stamped 109µs earlier: written out of order)"; got != want {
		t.Errorf("Span(109000, 0) = %q, want %q", got, want)
	}
}

// TestTimelineServed: a device that records the service stage shows when
// each loss was first served beside its reconnect.
func TestTimelineServed(t *testing.T) {
	d := device()
	served := analyze.Event{At: t0 + 9_000_000_000, Outcome: auditfmt.Connected, Stage: auditfmt.StageService, Ceiling: math.NaN(),
		Seq: -1, Outbox: -1, Flushed: -1, Redelivered: -1, Duplicates: -1, Dropped: -1, Expired: -1, Reason: -1, Presence: -1, Ref: analyze.Ref{Line: 7, Row: 6}}
	d.Events = append(d.Events, served)
	d.Build()
	var b bytes.Buffer
	if err := TimelineText(&b, Timeline{Device: d, Sources: []string{"gw-a.ndjson"}}); err != nil {
		t.Fatal(err)
	}
	if want := "; 2 attempts; first useful service at 2026-11-30T14:17:39Z (9s after the loss)\n"; !strings.Contains(b.String(), want) {
		t.Errorf("missing %q in:\n%s", want, b.String())
	}
}
