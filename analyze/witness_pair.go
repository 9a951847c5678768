package analyze

import (
	"cmp"
	"slices"
	"time"
)

// PairTolerance is how far, beyond its stamp's resolution, a device's
// connected record may lie from the broker's accept it answers (on the
// device's corrected clock): the CONNACK's way to the client and the
// client's way to its log.
const PairTolerance = 500 * time.Millisecond

// AuditConnect is an audited connected record (on the device's clock).
type AuditConnect struct {
	Device string
	At     int64
	Ref    Ref
}

// pair matches d's connected records, moved by its offset, with its
// accepts (match, with PairTolerance), and adds what is left over to wit:
// accepts within the device's records' span, and connected records within
// the broker logs' span [from, to).
func (w *witnessCounter) pair(wit *Witness, d witnessDev, acc []BrokerEvent, off func(int64) int64, each []int64, from, to int64) {
	tol := int64(PairTolerance)
	order := make([]int, len(d.Conn))
	for j := range order {
		order[j] = j
	}
	moved := func(j int) int64 { return d.Conn[j] - each[j] }
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(moved(a), moved(b)) })
	cs := make([]int64, len(order))
	for k, j := range order {
		cs[k] = moved(j)
	}
	match(cs, acc, func(int64) int64 { return 0 }, tol, func(k int, a *BrokerEvent) {
		switch {
		case a == nil:
			if c := cs[k]; c >= from && c < to {
				j := order[k]
				wit.Unseen = append(wit.Unseen, AuditConnect{Device: d.ID, At: d.Conn[j], Ref: d.Refs[j]})
			}
		case k < 0:
			if a.At >= d.First-off(d.First)-tol && a.At <= d.Last-off(d.Last)+tol {
				wit.Unaudited = append(wit.Unaudited, *a)
			}
		default:
			wit.Paired++
		}
	})
}

// match pairs the sorted records cs, moved back by off, with the accepts
// (in time order): an accept stamped A to a resolution r answers a record
// c when A - tol <= c - off <= A + r + tol. The records are taken in time
// order, each paired with the fitting accept whose window ends first (a
// maximum matching of points to windows, and a monotone one). fn hears
// each pair (k, a), each record left over (k, nil) and each accept left
// over (-1, a).
func match(cs []int64, acc []BrokerEvent, off func(int64) int64, tol int64, fn func(k int, a *BrokerEvent)) {
	end := func(i int) int64 { return acc[i].At + int64(acc[i].Res) + tol }
	var open []int // accepts whose window has begun, unpaired
	next := 0
	for k, c := range cs {
		c -= off(c)
		for next < len(acc) && acc[next].At-tol <= c {
			open = append(open, next)
			next++
		}
		open = slices.DeleteFunc(open, func(i int) bool {
			if end(i) < c {
				fn(-1, &acc[i])
				return true
			}
			return false
		})
		if len(open) == 0 {
			fn(k, nil)
			continue
		}
		m := 0
		for n := range open {
			if end(open[n]) < end(open[m]) {
				m = n
			}
		}
		fn(k, &acc[open[m]])
		open = slices.Delete(open, m, m+1)
	}
	for _, i := range open {
		fn(-1, &acc[i])
	}
	for ; next < len(acc); next++ {
		fn(-1, &acc[next])
	}
}

// endedBefore reports whether d recorded its session ended between its
// last connected record before t (its own clock) and t: a takeover then
// closed a session the device had already given up (a half-open one the
// broker had not yet timed out), not a live one.
func endedBefore(d witnessDev, t int64) bool {
	up := int64(NoTime)
	for _, c := range d.Conn {
		if c <= t {
			up = max(up, c)
		}
	}
	for _, e := range d.Ended {
		if e > up && e <= t+int64(PairTolerance) {
			return true
		}
	}
	return false
}
