// Command genlog writes a synthetic fleet audit log in the seed format, for
// benchmarks: -lines records from -devices devices, in the order a
// collector would receive them (by time, devices interleaved).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"time"
)

func main() {
	lines := flag.Int("lines", 2_000_000, "records to write")
	devices := flag.Int("devices", 50_000, "devices in the fleet")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	rng := rand.New(rand.NewPCG(*seed, 7))
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	outcomes := []string{"backoff_wait", "attempt_failed", "backoff_wait", "rate_limited_wait", "connected"}
	t := time.Date(2026, 11, 30, 14, 17, 30, 0, time.UTC)
	var b []byte
	for i := range *lines {
		b = append(b[:0], `{"client_id": "dev-`...)
		b = fmt.Appendf(b, "%06d", rng.IntN(*devices))
		b = append(b, `", "attempt": `...)
		b = strconv.AppendInt(b, int64(rng.IntN(12)), 10)
		b = append(b, `, "backoff_delay_s": `...)
		b = strconv.AppendFloat(b, rng.Float64()*120, 'f', 6, 64)
		b = append(b, `, "outcome": "`...)
		b = append(b, outcomes[i%len(outcomes)]...)
		b = append(b, `", "clean_session": false, "recorded_at": "`...)
		b = t.Add(time.Duration(i)*37*time.Microsecond).AppendFormat(b, "2006-01-02T15:04:05.000000-07:00")
		b = append(b, "\"}\n"...)
		w.Write(b)
	}
}
