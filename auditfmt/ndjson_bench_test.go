package auditfmt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// benchLines generates n seed-format lines, as the reference client writes
// them: a fleet of devices backing off after an outage, every outcome.
func benchLines(n int) [][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Date(2026, 11, 30, 14, 17, 0, 0, time.UTC)
	outcomes := outcomeNames[1:]
	lines := make([][]byte, n)
	for i := range lines {
		t := start.Add(time.Duration(rng.Int64N(int64(time.Hour)))).Truncate(time.Microsecond)
		lines[i] = fmt.Appendf(nil, `{"client_id": "dev-%05d", "attempt": %d, "backoff_delay_s": %s, "outcome": %q, "clean_session": %t, "recorded_at": "%s"}`,
			rng.IntN(2000), rng.IntN(12), AppendFloat(nil, float64(rng.IntN(1e9))/1e6),
			outcomes[rng.IntN(len(outcomes))], rng.IntN(4) == 0,
			t.Format("2006-01-02T15:04:05.000000-07:00"))
	}
	return lines
}

// totalBytes is the size of lines, without newlines.
func totalBytes(lines [][]byte) int64 {
	var n int
	for _, l := range lines {
		n += len(l)
	}
	return int64(n)
}

// BenchmarkDecode decodes seed-format lines with client ids already
// interned, as in a long ingest. Run it on one core with
// go test -bench Decode -cpu 1 ./auditfmt.
func BenchmarkDecode(b *testing.B) {
	lines := benchLines(4096)
	var d Decoder
	var rec Record
	for _, l := range lines { // warm the intern table
		if err := d.Decode(l, &rec); err != nil {
			b.Fatalf("%s: %v", l, err)
		}
	}
	b.SetBytes(totalBytes(lines) / int64(len(lines)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if err := d.Decode(lines[n%len(lines)], &rec); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkDecodeEnvelope decodes the same records in logging envelopes,
// each with an unknown member: the Extra and Envelope strings are the
// allocations.
func BenchmarkDecodeEnvelope(b *testing.B) {
	lines := benchLines(4096)
	for i, l := range lines {
		lines[i] = fmt.Appendf(nil, `{"message": "mqtt_reconnect", "name": "incidentgis.mqtt.reconnect", "levelname": "INFO", "audit": %s, "rssi": %d}}`, l[:len(l)-1], -40-i%50)
	}
	var d Decoder
	var rec Record
	b.SetBytes(totalBytes(lines) / int64(len(lines)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if err := d.Decode(lines[n%len(lines)], &rec); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
}

// stdlibRecord is what encoding/json needs to read a seed-format line.
type stdlibRecord struct {
	ClientID      string  `json:"client_id"`
	Attempt       int64   `json:"attempt"`
	BackoffDelayS float64 `json:"backoff_delay_s"`
	Outcome       string  `json:"outcome"`
	CleanSession  bool    `json:"clean_session"`
	RecordedAt    string  `json:"recorded_at"`
}

// BenchmarkDecodeStdlibPeer is the same work done with encoding/json, for
// comparison: it unmarshals into a struct and parses the timestamp, but
// does none of the validation.
func BenchmarkDecodeStdlibPeer(b *testing.B) {
	lines := benchLines(4096)
	b.SetBytes(totalBytes(lines) / int64(len(lines)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		var r stdlibRecord
		if err := json.Unmarshal(lines[n%len(lines)], &r); err != nil {
			b.Fatal(err)
		}
		if _, _, err := ParseTimestamp([]byte(r.RecordedAt)); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
}

func TestBenchLines(t *testing.T) {
	lines := benchLines(1000)
	if avg := totalBytes(lines) / int64(len(lines)); avg < 150 || avg > 190 {
		t.Errorf("lines average %d bytes, want about 170", avg)
	}
	if !bytes.Contains(lines[0], []byte(`"client_id": "dev-`)) {
		t.Errorf("line %s", lines[0])
	}
}
