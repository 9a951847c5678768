package analyze

import (
	"fmt"
	"slices"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// ClockBackTolerance is how far recorded_at may run backwards from one
// record of a device to the next before clock-anomaly counts it: records
// stamped by different threads of one client may be out of order by a
// little, and some clients stamp in whole milliseconds.
const ClockBackTolerance = time.Millisecond

// ClockJumpAllowance is how much longer than its records explain a gap
// between two records of a device may be before clock-anomaly counts it
// as a jump ahead.
const ClockJumpAllowance = time.Hour

// clockAnomaly flags time running backwards or far ahead within one
// device, in the device's own order.
type clockAnomaly struct{}

func (*clockAnomaly) Info() RuleInfo {
	return RuleInfo{ID: "clock-anomaly", Severity: Warning, Title: "time running backwards or far ahead within one device",
		Help: "In the device's own order (device_seq, else the order it wrote its records in), recorded_at runs backwards " +
			"by more than 1 ms, or jumps ahead more than 1 h beyond what the previous record explains (its backoff delay " +
			"or wait). A device clock that steps mis-places every record after it on the fleet's timeline, and every " +
			"time-based check with it."}
}

// clockStep is one anomalous step between two consecutive records of a
// device: Events[prev] then Events[cur], cur.At - prev.At = step, when the
// records explain a gap of at most explained.
type clockStep struct {
	prev, cur int
	step      int64
	explained int64
}

func (r *clockAnomaly) Device(c *Context, d *Device) {
	order, bySeq := clockOrder(d)
	var back, ahead []clockStep
	for k := 1; k < len(order); k++ {
		i, j := order[k-1], order[k]
		p, e := &d.Events[i], &d.Events[j]
		if !bySeq && p.Ref.Source != e.Ref.Source {
			continue // two inputs: their order is not the device's
		}
		step := e.At - p.At
		if step < -int64(ClockBackTolerance) {
			back = append(back, clockStep{prev: i, cur: j, step: step})
		} else if x, ok := explainedGap(p); ok && step > x+int64(ClockJumpAllowance) {
			ahead = append(ahead, clockStep{prev: i, cur: j, step: step, explained: x})
		}
	}
	if len(back) > 0 {
		c.Report(clockFinding(d, back, bySeq, true))
	}
	if len(ahead) > 0 {
		c.Report(clockFinding(d, ahead, bySeq, false))
	}
}

func (*clockAnomaly) Finish(*Context) {}

// clockOrder returns the indices of d.Events in the order the device's
// clock is judged in, and whether that order is device_seq. Build orders
// by device_seq when every record has one; a device_seq that repeats (a
// counter restarted by a reboot) orders nothing, so then the order is the
// input's: by source and line, judged only within one source.
func clockOrder(d *Device) ([]int, bool) {
	order := make([]int, len(d.Events))
	for i := range order {
		order[i] = i
	}
	seq := len(d.Events) > 0
	for i := range d.Events {
		if d.Events[i].Seq < 0 || i > 0 && d.Events[i].Seq <= d.Events[i-1].Seq {
			seq = false
			break
		}
	}
	if !seq {
		slices.SortStableFunc(order, func(a, b int) int {
			ra, rb := d.Events[a].Ref, d.Events[b].Ref
			if ra.Source != rb.Source {
				return cmp64(int64(ra.Source), int64(rb.Source))
			}
			return cmp64(ra.Line, rb.Line)
		})
	}
	return order, seq
}

// explainedGap returns how long after e the device's next record is due,
// in ns, when e says: a backoff_wait or rate_limited_wait its delay (the
// socket-open, or the rate-limit slot, comes then); a failure or a
// disconnect 0 (the reference client writes the next backoff_wait at
// once). After connected, gave_up or stopped the next record may come at
// any time, and ok is false.
func explainedGap(e *Event) (ns int64, ok bool) {
	switch e.Outcome {
	case auditfmt.BackoffWait, auditfmt.RateLimitedWait:
		return nanos(e.Delay), true
	case auditfmt.AttemptFailed, auditfmt.Refused, auditfmt.Disconnected:
		return 0, true
	}
	return 0, false
}

// clockFinding aggregates the anomalous steps of one kind (back or
// ahead) of device d: the largest step is told, and its records come
// first.
func clockFinding(d *Device, steps []clockStep, bySeq, back bool) Finding {
	worst := slices.MaxFunc(steps, func(a, b clockStep) int {
		if back {
			return cmp64(b.step, a.step) // the most negative is the worst
		}
		return cmp64(a.step-a.explained, b.step-b.explained)
	})
	f := Finding{Rule: "clock-anomaly", Severity: Warning, Device: d.ID, Start: d.Events[worst.cur].At, End: d.Events[worst.cur].At}
	f.Records = append(f.Records, d.Events[worst.cur].Ref, d.Events[worst.prev].Ref)
	for _, s := range steps {
		for _, i := range []int{s.prev, s.cur} {
			f.Start, f.End = min(f.Start, d.Events[i].At), max(f.End, d.Events[i].At)
		}
		if s != worst && len(f.Records) < MaxRefs {
			f.Records = append(f.Records, d.Events[s.cur].Ref, d.Events[s.prev].Ref)
		}
	}
	f.Kind = "clock-anomaly/jump-ahead"
	if back {
		f.Kind = "clock-anomaly/backwards"
	}
	f.Message, f.Explanation = clockText(d, worst, len(steps), bySeq, back)
	return f
}

// clockText writes the message and explanation of a finding of n steps
// whose largest is worst.
func clockText(d *Device, worst clockStep, n int, bySeq, back bool) (msg, ex string) {
	order := "in device_seq order"
	if !bySeq {
		order = "in the order the device wrote them (input line)"
	}
	p, e := &d.Events[worst.prev], &d.Events[worst.cur]
	pair := fmt.Sprintf("%s at %s follows %s at %s", clockRecord(e), timeText(e.At), clockRecord(p), timeText(p.At))
	if back {
		return fmt.Sprintf("recorded_at runs backwards %s (%s)", nTimes(n), durText(-worst.step)),
			fmt.Sprintf("Taken %s, %s stamped more than %s before the record preceding it. The largest step: %s, %s earlier.",
				order, recordsAre(n), durText(int64(ClockBackTolerance)), pair, durText(-worst.step))
	}
	return fmt.Sprintf("recorded_at jumps ahead %s (%s)", nTimes(n), durText(worst.step)),
		fmt.Sprintf("Taken %s, %s stamped more than %s after what the record preceding it explains. "+
			"The largest jump: %s, %s later, where the preceding record explains %s "+
			"(a backoff_wait or rate_limited_wait its delay; a failure or disconnect none, the next backoff_wait comes at once).",
			order, recordsAre(n), durText(int64(ClockJumpAllowance)), pair, durText(worst.step), durText(worst.explained))
}

// clockRecord names a record for an explanation: its outcome, and its
// device_seq or input line.
func clockRecord(e *Event) string {
	if e.Seq >= 0 {
		return fmt.Sprintf("%s (device_seq %d)", e.Outcome, e.Seq)
	}
	return fmt.Sprintf("%s (line %d)", e.Outcome, e.Ref.Line)
}

// recordsAre says "1 of the device's records is" or "N ... are".
func recordsAre(n int) string {
	if n == 1 {
		return "1 of the device's records is"
	}
	return fmt.Sprintf("%d of the device's records are", n)
}
