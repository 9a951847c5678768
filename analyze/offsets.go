package analyze

import (
	"cmp"
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
	// From and Until are when, on the device's own clock, the offset held:
	// NoTime for since its first record and to its last. A clock that
	// stepped (an NTP fix) has an Until: for the audit's offsets, its
	// first later loss that a later incident holds on the device's
	// uncorrected time; for the broker's, the record after the last of
	// its connects that the offset pairs with the broker's accepts, from
	// which on a second offset (or none) holds.
	From, Until int64

	dev   int32
	at    int64 // the loss it was found at, on the device's clock (NoTime: the broker's, for every record)
	round int32 // the round of corrections that found it: offsets are in round order, by Device within one
}

// OffsetAt returns the offset of a device's clock at t, on its own
// clock, of offs: the offsets a check found of that device
// (FleetStats.ClockOffsets whose Device is it, in their order). Its time
// on the fleet's clock is t minus the offset.
func OffsetAt(offs []ClockOffset, t int64) time.Duration { return time.Duration(offsetAt(offs, t)) }

// offsetAt returns a device's clock offset at t on its own clock, of its
// offsets offs (in the order they were found): the broker's that hold at
// t (from their at, NoTime: the start, to their Until), plus the audit's
// found at its latest loss at or before t (the first for earlier
// times), that one 0 once its Until has passed.
func offsetAt(offs []ClockOffset, t int64) int64 {
	var sum int64 // the broker's that hold at t, and the audit's
	var audit *ClockOffset
	for i := range offs {
		switch o := &offs[i]; {
		case o.Basis == BasisBroker:
			if (o.at == NoTime || t >= o.at) && (o.Until == NoTime || t < o.Until) {
				sum += int64(o.Offset)
			}
		case audit == nil || o.at <= t:
			audit = o
		}
	}
	if audit != nil && (audit.Until == NoTime || t < audit.Until) {
		sum += int64(audit.Offset)
	}
	return sum
}

// clockIndex holds a check's clock offsets by device ordinal and by
// client id.
type clockIndex struct {
	byDev  map[int32][]ClockOffset
	byName map[string][]ClockOffset
}

// clocks returns the index of st's clock offsets; its maps are nil when
// none was found.
func (st *FleetStats) clocks() clockIndex { return indexClocks(st.ClockOffsets) }

// indexClocks returns the index of the clock offsets offs; its maps are
// nil when offs is empty.
func indexClocks(offs []ClockOffset) clockIndex {
	var ix clockIndex
	if len(offs) == 0 {
		return ix
	}
	ix.byDev, ix.byName = map[int32][]ClockOffset{}, map[string][]ClockOffset{}
	for _, o := range offs {
		ix.byDev[o.dev] = append(ix.byDev[o.dev], o)
		ix.byName[o.Device] = append(ix.byName[o.Device], o)
	}
	return ix
}

// dev returns the offset of device ordinal dev at t on its clock.
func (ix clockIndex) dev(dev int32, t int64) int64 {
	if ix.byDev == nil {
		return 0
	}
	return offsetAt(ix.byDev[dev], t)
}

// name returns the offset of the device id at t on its clock.
func (ix clockIndex) name(id string, t int64) int64 {
	if ix.byName == nil {
		return 0
	}
	return offsetAt(ix.byName[id], t)
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
		if shareDevice(ic.Losses[spans[k][0]:spans[k][1]], ic.Losses[spans[k+1][0]:spans[k+1][1]]) {
			continue // the usual case of two incidents close together: a flapping link
		}
		ref, grp := firstLosses(ic.Losses[spans[k][0]:spans[k][1]]), firstLosses(ic.Losses[spans[k+1][0]:spans[k+1][1]])
		sp := spans[k+1]
		if len(grp) > len(ref) {
			ref, grp, sp = grp, ref, spans[k]
		}
		return ic.shift(ref, grp, sp)
	}
	return nil
}

// shift moves the losses of grp, the devices of the span sp of
// ic.Losses, onto ref's clock, with the connects of each device from its
// loss to its recovery, and returns their offsets. Only those losses
// move: a device's clock may step later (an NTP fix), and its later
// losses are judged on their own.
func (ic *incidentCounter) shift(ref, grp map[int32]int64, sp [2]int) []ClockOffset {
	mRef, mGrp := medianOf(ref), medianOf(grp)
	res := time.Duration(max(spreadOf(ref, mRef), spreadOf(grp, mGrp)))
	var out []ClockOffset
	for dev, at := range grp {
		out = append(out, ClockOffset{Offset: time.Duration(at - mRef), Resolution: res, LostAt: mRef, Basis: BasisAudit,
			From: NoTime, Until: NoTime, dev: dev, at: at})
		if ic.names != nil { // else named, and put in order, where the ids are (fleetCounter.named)
			out[len(out)-1].Device = ic.names[dev]
		}
	}
	slices.SortFunc(out, func(x, y ClockOffset) int {
		return cmp.Or(strings.Compare(x.Device, y.Device), cmp.Compare(x.dev, y.dev))
	})
	windows := map[int32][][2]int64{} // each device's moved spans, on its clock: connects in them move too
	for i := sp[0]; i < sp[1]; i++ {
		l := &ic.Losses[i]
		o := grp[l.Dev] - mRef
		end := l.At
		if l.Back != NoTime {
			end = l.Back
		}
		windows[l.Dev] = append(windows[l.Dev], [2]int64{l.At, end})
		l.At -= o
		if l.Back != NoTime {
			l.Back -= o
		}
		if l.Served != NoTime {
			l.Served -= o
		}
		ic.moved = append(ic.moved, movedLoss{dev: l.Dev, at: l.At})
	}
	for _, o := range out { // in order of id: the same in any driver
		ic.moves = append(ic.moves, connectMove{Dev: o.dev, Windows: windows[o.dev], By: grp[o.dev] - mRef})
	}
	moveConnects(ic.Connects, ic.ConnDevs, ic.moves[len(ic.moves)-len(out):])
	return out
}

// movedLoss is a loss the audit's offsets moved: its device, and its
// time on the fleet's clock.
type movedLoss struct {
	dev int32
	at  int64
}

// steps sets the Until of the audit's offsets offs: a device's first
// later loss, on its own clock, that an incident of incs (spans of
// ic.Losses) holds unmoved. It also merges the offsets of one device
// that agree (found at two incidents) into the first.
func (ic *incidentCounter) steps(offs []ClockOffset, spans [][2]int) []ClockOffset {
	if len(offs) == 0 {
		return offs
	}
	moved := map[movedLoss]bool{}
	for _, m := range ic.moved {
		moved[m] = true
	}
	held := map[int32][]int64{} // each device's unmoved losses that an incident holds
	for _, sp := range spans {
		for _, l := range ic.Losses[sp[0]:sp[1]] {
			if !moved[movedLoss{l.Dev, l.At}] {
				held[l.Dev] = append(held[l.Dev], l.At)
			}
		}
	}
	var out []ClockOffset
	last := map[int32]int{} // the index in out of each device's latest offset
	for _, o := range offs {
		if o.Basis == BasisAudit {
			for _, at := range held[o.dev] {
				if at > o.at && (o.Until == NoTime || at < o.Until) {
					o.Until = at
				}
			}
		}
		if k, ok := last[o.dev]; ok && o.Basis == BasisAudit {
			p := &out[k]
			if abs64(int64(p.Offset-o.Offset)) <= int64(max(p.Resolution, o.Resolution)+LatencySlack) && (p.Until == NoTime || p.Until > o.at) {
				p.Until = o.Until // the same offset again: one offset, holding to the later one's end
				continue
			}
		}
		last[o.dev] = len(out)
		out = append(out, o)
	}
	return out
}

// move shifts the losses, recoveries and connects of the devices in by
// back by their offsets at the time of each.
func (ic *incidentCounter) move(by map[int32][]ClockOffset) {
	if len(by) == 0 {
		return
	}
	for i := range ic.Losses {
		if os, ok := by[ic.Losses[i].Dev]; ok {
			l := &ic.Losses[i]
			o := offsetAt(os, l.At)
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
		if os, ok := by[dev]; ok {
			ic.Connects[i] -= offsetAt(os, ic.Connects[i])
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

// shareDevice reports whether a device lost its connection in both a and
// b.
func shareDevice(a, b []lossEvent) bool {
	in := newDevSet(a)
	for _, l := range a {
		in.add(l.Dev)
	}
	for _, l := range b {
		if w := int(l.Dev / 64); w < len(in) && in[w]&(1<<(l.Dev%64)) != 0 {
			return true
		}
	}
	return false
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
