package replay

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/stormaudit/stormaudit/internal/safe"
)

// Redelivery is what the devices received of the messages queued for
// them while they were away (Options.Queue), counted from what each
// device's client read; all zero without a queue.
type Redelivery struct {
	Queued     int     `json:"queued"` // messages a device
	QueuedQoS  int     `json:"queued_qos"`
	AckDelayMs float64 `json:"ack_delay_ms"`
	// Published counts the messages the broker acknowledged to the
	// publisher; Lost those of them no device received.
	Published int `json:"queued_published"`
	// Redelivered counts the messages the devices received (duplicates
	// included); RedeliveryPeakPerS the most in one second of wall time
	// from the replay's start, RedeliveryPeakAtS that second.
	Redelivered        int     `json:"redelivered"`
	RedeliveryPeakPerS int     `json:"redelivery_peak_per_s"`
	RedeliveryPeakAtS  float64 `json:"redelivery_peak_at_s"`
	DupFlagged         int     `json:"dup_flagged"` // received with the DUP flag
	Duplicates         int     `json:"duplicates"`  // received with an id the device had received before
	// With an expiry (Queue.Expiry): ExpiryS is it (plan time), Stale
	// counts the messages received older than it (what a device must
	// ignore; over MQTT 5 a broker that honours the expiry sends none),
	// and Expired those published and never received that had expired by
	// their device's return (plan time): a broker dropped them, as it
	// should. Lost counts the rest never received.
	ExpiryS float64 `json:"expiry_s,omitempty"`
	Stale   int     `json:"stale"`
	Expired int     `json:"expired"`
	Lost    int     `json:"lost"`
	// Drained counts the devices that received every message published
	// for them; DrainP50S and DrainP99S are, over them, the time from the
	// CONNACK of their first accepted connect to the last message they
	// lacked.
	Drained   int     `json:"drained"`
	DrainP50S float64 `json:"drain_p50_s"`
	DrainP99S float64 `json:"drain_p99_s"`
	// Waves are the connects and the redelivery on one time axis.
	Waves *Waves `json:"waves,omitempty"`
	// PerDevice is the same for every device, in the plan's order.
	PerDevice []DeviceRedelivery `json:"redelivery_devices,omitempty"`
}

// Waves are, for each second of wall time from the replay's start, the
// connects the broker accepted and the queued messages the devices
// received.
type Waves struct {
	Connects    []int `json:"connects"`
	Redelivered []int `json:"redelivered"`
}

// DeviceRedelivery is one device's part of a Redelivery.
type DeviceRedelivery struct {
	ClientID    string  `json:"client_id"`
	Published   int     `json:"published"`
	Redelivered int     `json:"redelivered"`
	DupFlagged  int     `json:"dup_flagged"`
	Duplicates  int     `json:"duplicates"`
	Stale       int     `json:"stale"`
	Expired     int     `json:"expired"`
	Lost        int     `json:"lost"`
	DrainS      float64 `json:"drain_s"` // -1: it did not receive all of them
}

// report fills in rep's Redelivery; acceptedAt are the accepted connects'
// wall times from the start.
func (q *queueRun) report(rep *Report, plan *Plan, acceptedAt []time.Duration) {
	rd := &rep.Redelivery
	rd.Queued, rd.QueuedQoS, rd.AckDelayMs, rd.ExpiryS = q.q.Messages, int(q.q.QoS), ms(q.q.AckDelay), q.q.Expiry.Seconds()
	ended := time.Since(*q.start) // a device never back is judged at the end
	var drains []time.Duration
	for i := range q.devs {
		d := &q.devs[i]
		d.mu.Lock()
		expired := q.expiredUnreceived(int32(i), ended)
		dr := DeviceRedelivery{ClientID: plan.Devices[i].ID, Published: int(d.nPublished), Redelivered: int(d.received),
			DupFlagged: int(d.dupFlagged), Duplicates: int(d.duplicates), Stale: int(d.stale), Expired: expired,
			Lost: int(d.nPublished-d.unique) - expired, DrainS: -1}
		if d.nPublished > 0 && int(d.unique)+expired == int(d.nPublished) && d.back >= 0 {
			drain := max(d.lastNew-d.back, 0)
			drains = append(drains, drain)
			dr.DrainS = drain.Seconds()
		}
		d.mu.Unlock()
		rd.Published += dr.Published
		rd.Redelivered += dr.Redelivered
		rd.DupFlagged += dr.DupFlagged
		rd.Duplicates += dr.Duplicates
		rd.Stale += dr.Stale
		rd.Expired += dr.Expired
		rd.Lost += dr.Lost
		rd.PerDevice = append(rd.PerDevice, dr)
	}
	rd.Drained = len(drains)
	rd.DrainP50S, rd.DrainP99S = rank(drains, 0.5).Seconds(), rank(drains, 0.99).Seconds()
	q.mu.Lock()
	w := &Waves{Redelivered: make([]int, len(q.perSec))}
	for i, n := range q.perSec {
		w.Redelivered[i] = int(n)
		if int(n) > rd.RedeliveryPeakPerS {
			rd.RedeliveryPeakPerS, rd.RedeliveryPeakAtS = int(n), float64(i)
		}
	}
	q.mu.Unlock()
	for _, at := range acceptedAt {
		sec := int(at / time.Second)
		for len(w.Connects) <= sec {
			w.Connects = append(w.Connects, 0)
		}
		w.Connects[sec]++
	}
	n := max(len(w.Connects), len(w.Redelivered))
	w.Connects = append(w.Connects, make([]int, n-len(w.Connects))...)
	w.Redelivered = append(w.Redelivered, make([]int, n-len(w.Redelivered))...)
	rd.Waves = w
}

// expiredUnreceived counts device k's messages the broker acknowledged to
// the publisher, never received, that had expired (wall time) by the
// device's first accepted connect, or by now (wall, from the start) when
// it has none; 0 without an expiry. A message is taken as published when
// its plan put it (message s of N at s/N of the way to the device's
// planned return): the publisher's window may send it later, so on a
// loaded machine a message near the edge can be counted expired that had
// a moment left. d.mu is held.
func (q *queueRun) expiredUnreceived(k int32, now time.Duration) int {
	if q.wallExpiry <= 0 {
		return 0
	}
	d, ret, n := &q.devs[k], q.ret[k], q.q.Messages
	back := d.back
	if back < 0 {
		back = now
	}
	count := 0
	for s := range n {
		sent := time.Duration(float64(ret*time.Duration(s)/time.Duration(n)) / q.speed)
		if d.published.has(s) && !d.seen.has(s) && back-sent > q.wallExpiry {
			count++
		}
	}
	return count
}

// redeliveryRows are the lines of Rows that a replay with a queue adds.
var redeliveryRows = []Row{
	{Side: SideBroker, Name: "queued", Value: func(r *Report) string {
		return fmt.Sprintf("%d/device QoS %d, %d published", r.Queued, r.QueuedQoS, r.Published)
	}},
	{Side: SideBroker, Name: "redelivered", Value: func(r *Report) string { return fmt.Sprint(r.Redelivered) }},
	{Side: SideBroker, Name: "peak redelivered/s", Value: func(r *Report) string {
		return fmt.Sprintf("%d at +%.0fs", r.RedeliveryPeakPerS, r.RedeliveryPeakAtS)
	}},
	{Side: SideBroker, Name: "DUP flagged", Value: func(r *Report) string { return fmt.Sprint(r.DupFlagged) }},
	{Side: SideBroker, Name: "duplicates", Value: func(r *Report) string { return fmt.Sprint(r.Duplicates) }},
	{Side: SideBroker, Name: "stale / expired", Value: func(r *Report) string {
		if r.ExpiryS == 0 {
			return "no expiry"
		}
		return fmt.Sprintf("%d arrived older than %gs / %d expired unreceived", r.Stale, r.ExpiryS, r.Expired)
	}},
	{Side: SideBroker, Name: "lost", Value: func(r *Report) string { return fmt.Sprint(r.Lost) }},
	{Side: SideBroker, Name: "drain p50/p99", Value: func(r *Report) string {
		return fmt.Sprintf("%.3f / %.3f s (%d drained)", r.DrainP50S, r.DrainP99S, r.Drained)
	}},
}

// linkDownRow is the line of Rows that a replay with a link outage adds.
var linkDownRow = Row{Name: "failed (link down)", Side: SideReplay, Value: func(r *Report) string { return fmt.Sprint(r.ConnectsLinkDown) }}

// RowsOf returns the lines of reps: Rows, with the redelivery's after
// the broker's own when one of them replayed a queue, and the link
// outage's after the connects that failed on this machine when one of
// them held the link down.
func RowsOf(reps ...*Report) []Row {
	var link, queue bool
	for _, r := range reps {
		link, queue = link || r.LinkDownScheduled, queue || r.Queued > 0
	}
	var rows []Row
	for _, row := range Rows {
		rows = append(rows, row)
		if queue && row.Name == "wills delivered" {
			rows = append(rows, redeliveryRows...)
		}
		if link && row.Name == "failed here" {
			rows = append(rows, linkDownRow)
		}
	}
	return rows
}

// waveColumns is the most columns a text wave takes.
const waveColumns = 60

// writeWaves writes, under the text report, each replay's connect and
// redelivery waves on one time axis: a column a second (or a few, so
// that the longest fits in waveColumns), its height the count against
// the largest of the replays' columns of its kind, so that a comparison
// shows which wave is the taller.
func writeWaves(b *strings.Builder, reps []*Report) {
	n := 0
	for _, r := range reps {
		if r.Waves != nil {
			n = max(n, len(r.Waves.Connects))
		}
	}
	if n == 0 {
		return
	}
	per := (n + waveColumns - 1) / waveColumns
	var conn, red [][]int
	peakConn, peakRed := 0, 0
	for _, r := range reps {
		if r.Waves != nil {
			conn, red = append(conn, columns(r.Waves.Connects, per)), append(red, columns(r.Waves.Redelivered, per))
			peakConn, peakRed = max(peakConn, slices.Max(conn[len(conn)-1])), max(peakRed, slices.Max(red[len(red)-1]))
		}
	}
	fmt.Fprintf(b, "\nwaves, %d s a column from the start (a full block: %d connects, %d messages):\n", per, peakConn, peakRed)
	k := 0
	for _, r := range reps {
		if r.Waves == nil {
			continue
		}
		fmt.Fprintf(b, "  %s\n", safe.Text(r.Plan))
		fmt.Fprintf(b, "    %-12s %s\n", "connects", spark(conn[k], peakConn))
		fmt.Fprintf(b, "    %-12s %s\n", "redelivered", spark(red[k], peakRed))
		k++
	}
}

// columns sums xs per columns of per (at least one column).
func columns(xs []int, per int) []int {
	var cols []int
	for i := 0; i < len(xs); i += per {
		sum := 0
		for _, x := range xs[i:min(i+per, len(xs))] {
			sum += x
		}
		cols = append(cols, sum)
	}
	if len(cols) == 0 {
		cols = []int{0}
	}
	return cols
}

// spark draws cols as block characters, from blank (none) to a full
// block (peak); any count shows.
func spark(cols []int, peak int) string {
	blocks := []rune(" ▁▂▃▄▅▆▇█")
	var s strings.Builder
	for _, c := range cols {
		k := 0
		if c > 0 {
			k = 1 + c*(len(blocks)-2)/max(peak, 1)
		}
		s.WriteRune(blocks[min(k, len(blocks)-1)])
	}
	return s.String()
}
