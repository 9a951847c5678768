package analyze

import (
	"slices"
	"strings"
	"time"
)

// The evidence of a clock offset (ClockOffset.Basis).
const (
	BasisAudit  = "audit"
	BasisBroker = "broker"
)

// MaxClockOffset bounds the clock offsets the incident inference corrects
// for: devices whose clocks disagree by more are left as they are
// (clock-anomaly is the rule for clocks years off).
const MaxClockOffset = 30 * time.Second

// ReturnTolerance is how closely two groups' times from loss to first
// connect must agree for the groups to be one outage seen through clocks
// that disagree.
const ReturnTolerance = time.Second

// ClockOffset is a device whose clock the incidents show to be off: a
// reset reaches every device at the same instant, and so does the broker's
// return, so a group of devices whose losses and first connect come
// together, all later (or earlier) by the same amount than the rest of the
// fleet's, is the same outage seen through clocks that disagree.
type ClockOffset struct {
	Device string
	// Offset is the device's clock minus the fleet's: positive when it runs
	// ahead. The fleet's clock is that of the larger group.
	Offset time.Duration
	// Resolution is what the evidence can resolve: the 90th percentile of
	// how far the two groups' losses lie from their own medians.
	Resolution time.Duration
	// LostAt is the loss the offset was estimated from, on the fleet's
	// clock (NoTime for an offset from the broker's log).
	LostAt int64
	// Basis is BasisAudit (two groups of the fleet, see correct) or
	// BasisBroker (the device's connected records against the broker's
	// accepts: its clock minus the broker's).
	Basis string

	dev int32
}

// correct looks for two incidents, in time order, that are one outage
// seen through clocks that disagree (see below); for the first pair it
// finds, it shifts the smaller group's losses and connects onto the
// larger group's clock and returns the offsets. incs and spans are
// findIncidents' over ic.Losses.
//
// Two incidents are one when the later began at most MaxClockOffset after
// the earlier, no device lost its connection in both, each incident's
// losses are tight (their two spans add up to less than the time between
// them), and their times from loss to first connect agree within
// ReturnTolerance: the same death and the same return, shifted.
func (ic *incidentCounter) correct(incs []Incident, spans [][2]int) []ClockOffset {
	for k := 0; k+1 < len(incs); k++ {
		a, b := &incs[k], &incs[k+1]
		gap := b.LostAt - a.LostAt
		if gap > int64(MaxClockOffset) || a.FirstConnectAt == NoTime || b.FirstConnectAt == NoTime ||
			(a.LastLoss-a.LostAt)+(b.LastLoss-b.LostAt) >= gap ||
			abs64((b.FirstConnectAt-b.LostAt)-(a.FirstConnectAt-a.LostAt)) > int64(ReturnTolerance) {
			continue
		}
		ref, grp := firstLosses(ic.Losses[spans[k][0]:spans[k][1]]), firstLosses(ic.Losses[spans[k+1][0]:spans[k+1][1]])
		if !disjoint(ref, grp) {
			continue
		}
		if len(grp) > len(ref) {
			ref, grp = grp, ref
		}
		return ic.shift(ref, grp)
	}
	return nil
}

// shift moves the devices of grp onto ref's clock and returns their
// offsets.
func (ic *incidentCounter) shift(ref, grp map[int32]int64) []ClockOffset {
	mRef, mGrp := medianOf(ref), medianOf(grp)
	res := time.Duration(max(spreadOf(ref, mRef), spreadOf(grp, mGrp)))
	by := map[int32]int64{}
	var out []ClockOffset
	for dev, at := range grp {
		by[dev] = at - mRef
		out = append(out, ClockOffset{Device: ic.Names[dev], Offset: time.Duration(at - mRef), Resolution: res, LostAt: mRef, Basis: BasisAudit, dev: dev})
	}
	slices.SortFunc(out, func(x, y ClockOffset) int { return strings.Compare(x.Device, y.Device) })
	ic.move(by)
	return out
}

// move shifts the losses, recoveries and connects of the devices in by
// back by their offsets.
func (ic *incidentCounter) move(by map[int32]int64) {
	if len(by) == 0 {
		return
	}
	for i := range ic.Losses {
		if o, ok := by[ic.Losses[i].Dev]; ok {
			l := &ic.Losses[i]
			l.At -= o
			if l.Back != NoTime {
				l.Back -= o
			}
			if l.Served != NoTime {
				l.Served -= o
			}
		}
	}
	for i, dev := range ic.ConnDevs {
		if o, ok := by[dev]; ok {
			ic.Connects[i] -= o
		}
	}
}

// firstLosses returns each device's first loss among ls.
func firstLosses(ls []lossEvent) map[int32]int64 {
	m := map[int32]int64{}
	for _, l := range ls {
		if at, ok := m[l.Dev]; !ok || l.At < at {
			m[l.Dev] = l.At
		}
	}
	return m
}

func disjoint(a, b map[int32]int64) bool {
	for d := range b {
		if _, ok := a[d]; ok {
			return false
		}
	}
	return true
}

// medianOf returns the median (the lower of the middle two) of m's times.
func medianOf(m map[int32]int64) int64 {
	ts := make([]int64, 0, len(m))
	for _, t := range m {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	return ts[(len(ts)-1)/2]
}

// spreadOf returns the 90th percentile of how far m's times lie from med.
func spreadOf(m map[int32]int64, med int64) int64 {
	ds := make([]time.Duration, 0, len(m))
	for _, t := range m {
		ds = append(ds, time.Duration(abs64(t-med)))
	}
	slices.Sort(ds)
	return int64(rank(ds, 0.9))
}

// offsets returns the clock offsets by device.
// offsetsByDev returns the clock offsets by device ordinal (the order the
// devices were read in, which every counter and rule of a check share),
// Unix ns; nil when none was found.
func (st *FleetStats) offsetsByDev() map[int32]int64 {
	if len(st.ClockOffsets) == 0 {
		return nil
	}
	m := make(map[int32]int64, len(st.ClockOffsets))
	for _, o := range st.ClockOffsets {
		m[o.dev] += int64(o.Offset)
	}
	return m
}

func (st *FleetStats) offsets() map[string]time.Duration {
	m := make(map[string]time.Duration, len(st.ClockOffsets))
	for _, o := range st.ClockOffsets {
		m[o.Device] += o.Offset
	}
	return m
}
