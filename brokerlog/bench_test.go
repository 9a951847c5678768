package brokerlog

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// benchLog writes n lines of a fleet's connects and disconnects in the
// format f, from a seeded generator.
func benchLog(f Format, n int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	var b bytes.Buffer
	at := time.Date(2026, 12, 1, 15, 15, 18, 0, time.UTC)
	for i := range n {
		at = at.Add(time.Duration(rng.IntN(2000)) * time.Microsecond)
		id := fmt.Sprintf("dev-%05d", rng.IntN(10000))
		connect := i%2 == 0
		switch f {
		case Mosquitto:
			msg := "Client " + id + " closed its connection."
			if connect {
				msg = fmt.Sprintf("New client connected from 10.0.%d.%d:%d as %s (p2, c0, k30).", rng.IntN(256), rng.IntN(256), 1024+rng.IntN(60000), id)
			}
			fmt.Fprintf(&b, "%s %d: %s\n", at.Format("2006-01-02T15:04:05.000000Z07:00"), at.Unix(), msg)
		case EMQX:
			if connect {
				fmt.Fprintf(&b, `{"event":"client.connected","clientid":%q,"username":null,"peername":"10.0.0.1:%d","sockname":"0.0.0.0:1883","proto_name":"MQTT","proto_ver":4,"keepalive":30,"clean_start":false,"expiry_interval":7200,"is_bridge":false,"conn_props":{},"connected_at":%d,"timestamp":%d,"node":"emqx@10.0.4.2"}`+"\n",
					id, 1024+rng.IntN(60000), at.UnixMilli(), at.UnixMilli())
			} else {
				fmt.Fprintf(&b, `{"event":"client.disconnected","reason":"sock_closed","clientid":%q,"username":null,"peername":"10.0.0.1:1","sockname":"0.0.0.0:1883","proto_name":"MQTT","proto_ver":4,"disconn_props":{},"connected_at":%d,"disconnected_at":%d,"timestamp":%d,"node":"emqx@10.0.4.2"}`+"\n",
					id, at.UnixMilli(), at.UnixMilli(), at.UnixMilli())
			}
		}
	}
	return b.Bytes()
}

func benchmarkRead(b *testing.B, f Format) {
	const lines = 100_000
	data := benchLog(f, lines)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		log, err := Read(bytes.NewReader(data), "bench", Options{})
		if err != nil || log.Rejected != 0 || len(log.Events) != lines {
			b.Fatalf("%v: %d events, %d rejects", err, len(log.Events), log.Rejected)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

func BenchmarkReadMosquitto(b *testing.B) { benchmarkRead(b, Mosquitto) }
func BenchmarkReadEMQX(b *testing.B)      { benchmarkRead(b, EMQX) }
