package analyze

import (
	"math"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// What an outage cost the devices beyond their connection, from their own
// counts (docs/rules.md, "What an outage cost"): the measurements their
// full outboxes dropped (outbox_dropped), the queued commands they ignored
// as expired when they came (inbound_expired), and the messages their
// application was handed twice (inbound_duplicates).

// The kinds of cost, in Incident order.
const (
	CostDropped = iota // outbox_dropped
	CostExpired        // inbound_expired
	CostTwice          // inbound_duplicates
	costKinds
)

// costFields names the field each kind of cost is counted from.
var costFields = [costKinds]string{"outbox_dropped", "inbound_expired", "inbound_duplicates"}

// CostField returns the record field cost kind k is counted from.
func CostField(k int) string { return costFields[k] }

// Cost is one kind of cost to an incident's devices: the messages their
// records count, the devices that counted one or more, and the devices
// that record the field at all in the window (so that none lost reads
// apart from none said). A device's count over one loss saturates at
// math.MaxInt32.
type Cost struct {
	Messages  int64
	Devices   int
	Reporting int
}

// stageCost marks a tally's count of a cost in incidentCounter.Met: a
// stage no record has, whose key's outcome byte is the kind (see
// costKey), and whose N is the messages, not the records.
const stageCost auditfmt.Stage = 0xff

// costKey returns the key of cost kind k in a loss's tally.
func costKey(k int) uint64 { return uint64(stageCost)<<56 | uint64(k)<<48 }

// costOf returns the kind of cost the tally key holds, and whether it
// holds one.
func costOf(key uint64) (int, bool) {
	if auditfmt.Stage(key>>56) != stageCost {
		return 0, false
	}
	return int(key>>48) & 0xff, true
}

// counts returns e's count of each kind of cost, -1 where it has none.
func (e *Event) counts() [costKinds]int64 {
	return [costKinds]int64{int64(e.Dropped), int64(e.Expired), e.Duplicates}
}

// tallyCost adds to the tally of the loss l, whose counts are the last of
// ic.Met, the costs the records events[from+1 : to+1] count: those after
// the record that began the loss, to the one that began the device's next
// loss (included, as its counts are of the time before it), or to its last
// record. Each record counts what happened since the device's previous
// one, so a record's counts go to the last loss before it: what dropped
// while down, and what the broker's queue brought on return.
func (ic *incidentCounter) tallyCost(events []Event, from, to int, l *lossEvent) {
	var sum [costKinds]int64
	var has [costKinds]bool
	for i := max(from+1, 0); i <= to && i < len(events); i++ {
		for k, n := range events[i].counts() {
			if n >= 0 {
				sum[k], has[k] = min(sum[k]+n, math.MaxInt32), true
			}
		}
	}
	counts := ic.Met[l.MetAt:]
	for k := range costKinds {
		if !has[k] {
			continue
		}
		key := costKey(k)
		found := false
		for j := range counts {
			if counts[j].Key == key {
				counts[j].N = int32(min(int64(counts[j].N)+sum[k], math.MaxInt32))
				found = true
			}
		}
		if !found && l.MetN < math.MaxUint16 {
			ic.Met = append(ic.Met, metCount{Key: key, N: int32(sum[k])})
			l.MetN++
		}
	}
}

// nextLoss returns the index in d.Events of the record that began the
// loss after episode i, or the last record's when none did.
func (d *Device) nextLoss(i int) int {
	for j := i + 1; j < len(d.Episodes); j++ {
		if ep := &d.Episodes[j]; ep.Loss() && ep.First >= 0 {
			return ep.First
		}
	}
	return len(d.Events) - 1
}

// costSeen counts, for one kind of cost of one incident, the devices that
// counted it once each.
type costSeen struct {
	counted, reporting devSet
}

// addCost adds the count n of cost kind k of device dev to d.
func (d *incidentDetail) addCost(seen *[costKinds]*costSeen, ls []lossEvent, k int, dev, n int32) {
	s := seen[k]
	if s == nil {
		s = &costSeen{newDevSet(ls), newDevSet(ls)}
		seen[k] = s
	}
	c := &d.Cost[k]
	c.Messages += int64(n)
	if s.reporting.add(dev) {
		c.Reporting++
	}
	if n > 0 && s.counted.add(dev) {
		c.Devices++
	}
}
