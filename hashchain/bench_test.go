package hashchain

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// benchRecords returns n records as a fleet's reference clients write them
// during an outage, in storage order (by device, then time). With extra,
// one record in ten carries unknown members and one in ten an envelope.
func benchRecords(n int, extra bool) []auditfmt.Record {
	rng := rand.New(rand.NewPCG(1, 2))
	recs := make([]auditfmt.Record, n)
	start := time.Date(2026, 11, 30, 14, 17, 34, 0, time.UTC).UnixNano()
	outcomes := []auditfmt.Outcome{auditfmt.BackoffWait, auditfmt.AttemptFailed, auditfmt.BackoffWait, auditfmt.Connected}
	for i := range recs {
		r := &recs[i]
		device := i / 16
		r.ClientID = "dev-" + strconv.Itoa(10000 + device)[1:]
		r.Attempt = int64(i % 16 / 2)
		r.BackoffDelayS = float64(rng.IntN(120_000_000)) / 1e6
		r.Outcome = outcomes[i%len(outcomes)]
		r.RecordedAt = start + int64(i%16)*int64(time.Second) + rng.Int64N(int64(time.Second))/1000*1000
		r.Source, r.Line = uint32(device%3), int64(i+1)
		if i%5 == 0 {
			r.HostID = "gw-" + strconv.Itoa(device%7)
		}
		if extra && i%10 == 3 {
			r.Extra = `{"rssi_dbm":-71,"fw":"2.4.1","cell":{"id":31337,"band":"B20"}}`
		}
		if extra && i%10 == 7 {
			r.Envelope = `{"message":"mqtt_reconnect","name":"incidentgis.mqtt.reconnect","levelname":"INFO"}`
		}
	}
	return recs
}

// reportRate reports records per second of wall time and, on a shared
// machine the steadier figure, per second of the process's CPU time.
func reportRate(b *testing.B, n int, cpuStart time.Duration) {
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
	if cpu := cpuTime() - cpuStart; cpu > 0 {
		b.ReportMetric(float64(n)/cpu.Seconds(), "records/cpu-s")
	}
}

func BenchmarkRecordBytes(b *testing.B) {
	for _, mix := range []struct {
		name  string
		extra bool
	}{{"plain", false}, {"mixed", true}} {
		b.Run(mix.name, func(b *testing.B) {
			recs := benchRecords(4096, mix.extra)
			buf := make([]byte, 0, 1024)
			var n, bytes int
			var sink tlog.Hash
			cpu := cpuTime()
			for b.Loop() {
				R, err := AppendRecordBytes(buf[:0], &recs[n%len(recs)])
				if err != nil {
					b.Fatal(err)
				}
				sink = RecordHash(R)
				bytes += len(R)
				n++
			}
			_ = sink
			b.ReportMetric(float64(bytes)/1e6/b.Elapsed().Seconds(), "MB/s")
			reportRate(b, n, cpu)
		})
	}
}

// BenchmarkPerRecord is the whole per-record cost of writing a dataset:
// R, the record hash, the link, W, the leaf hash and the tree.
func BenchmarkPerRecord(b *testing.B) {
	for _, mix := range []struct {
		name  string
		extra bool
	}{{"plain", false}, {"mixed", true}} {
		b.Run(mix.name, func(b *testing.B) {
			recs := benchRecords(4096, mix.extra)
			rbuf := make([]byte, 0, 1024)
			var tree Tree
			var n int
			var link tlog.Hash
			var origin string
			var seq int64
			cpu := cpuTime()
			for b.Loop() {
				r := &recs[n%len(recs)]
				if n%len(recs) == 0 || r.ClientID != recs[(n-1)%len(recs)].ClientID {
					origin = "stormaudit.example/incident/" + r.ClientID
					link, seq = Genesis(origin), 0
				}
				R, err := AppendRecordBytes(rbuf[:0], r)
				if err != nil {
					b.Fatal(err)
				}
				link = NextLink(link, RecordHash(R))
				tree.Append(Leaf(Pos{Origin: origin, Seq: seq, Link: link}))
				seq++
				n++
			}
			reportRate(b, n, cpu)
		})
	}
}

// BenchmarkHashFloor is the SHA-256 work of one record alone: R (about
// 190 bytes), the link, the leaf and one tree node, for comparison with
// BenchmarkPerRecord.
func BenchmarkHashFloor(b *testing.B) {
	R := make([]byte, 190)
	var h tlog.Hash
	var n int
	cpu := cpuTime()
	for b.Loop() {
		h = NextLink(h, RecordHash(R))
		h = tlog.NodeHash(h, Leaf(Pos{Origin: "stormaudit.example/incident/dev-0001", Seq: int64(n), Link: h}))
		n++
	}
	reportRate(b, n, cpu)
}

func BenchmarkTreeAppend(b *testing.B) {
	var tree Tree
	var leaf tlog.Hash
	for b.Loop() {
		tree.Append(leaf)
	}
}

func BenchmarkCanonicalJSON(b *testing.B) {
	line := []byte(`{"message": "mqtt_reconnect", "name": "incidentgis.mqtt.reconnect", "levelname": "INFO", "audit": {"client_id": "dev-0001", "attempt": 3, "backoff_delay_s": 6.48, "outcome": "backoff_wait", "clean_session": false, "recorded_at": "2026-11-30T14:17:34.979964+00:00", "geo": {"lat": 59.3293, "lon": 18.0686}}}`)
	buf := make([]byte, 0, 1024)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if _, err := AppendCanonicalJSON(buf[:0], line); err != nil {
			b.Fatal(err)
		}
	}
}
