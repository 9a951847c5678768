// Command genlog writes a synthetic fleet audit log in the seed format, for
// benchmarks: -lines records from -devices devices, in the order a
// collector would receive them (by time, devices interleaved), or with
// -grouped each device's records together (in time order), as when every
// device uploads its own file and the files are concatenated. Both orders
// hold the same records.
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
	grouped := flag.Bool("grouped", false, "each device's records together, devices in turn, rather than interleaved in time")
	flag.Parse()
	rng := rand.New(rand.NewPCG(*seed, 7))
	dev := make([]int32, *lines)
	attempt := make([]int8, *lines)
	delay := make([]float64, *lines)
	for i := range dev {
		dev[i], attempt[i], delay[i] = int32(rng.IntN(*devices)), int8(rng.IntN(12)), rng.Float64()*120
	}
	order := make([]int32, *lines)
	for i := range order {
		order[i] = int32(i)
	}
	if *grouped { // a counting sort by device, stable: each device's records in time order
		start := make([]int32, *devices+1)
		for _, d := range dev {
			start[d+1]++
		}
		for d := range *devices {
			start[d+1] += start[d]
		}
		for i, d := range dev {
			order[start[d]] = int32(i)
			start[d]++
		}
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	outcomes := []string{"backoff_wait", "attempt_failed", "backoff_wait", "rate_limited_wait", "connected"}
	t := time.Date(2026, 11, 30, 14, 17, 30, 0, time.UTC)
	var b []byte
	for _, i := range order {
		b = append(b[:0], `{"client_id": "dev-`...)
		b = fmt.Appendf(b, "%06d", dev[i])
		b = append(b, `", "attempt": `...)
		b = strconv.AppendInt(b, int64(attempt[i]), 10)
		b = append(b, `, "backoff_delay_s": `...)
		b = strconv.AppendFloat(b, delay[i], 'f', 6, 64)
		b = append(b, `, "outcome": "`...)
		b = append(b, outcomes[int(i)%len(outcomes)]...)
		b = append(b, `", "clean_session": false, "recorded_at": "`...)
		b = t.Add(time.Duration(i)*37*time.Microsecond).AppendFormat(b, "2006-01-02T15:04:05.000000-07:00")
		b = append(b, "\"}\n"...)
		w.Write(b)
	}
}
