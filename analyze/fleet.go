package analyze

import (
	"cmp"
	"github.com/stormaudit/stormaudit/brokerlog"
	"math"
	"slices"
	"strings"
	"time"
)

// FleetStats are the fleet-wide figures of a log.
type FleetStats struct {
	Devices int // devices in the log
	// IDs are the devices' client ids, sorted, when the log has at most
	// MaxIDs devices (a JUnit report's test cases); nil beyond.
	IDs      []string
	Records  int64 // records in the log
	Attempts int64 // socket-opens (connect attempts) the log shows, the work the fleet did

	// Window is the width of the windows socket-opens are counted in;
	// First is the start of the first window (the earliest socket-open,
	// truncated to a whole window) and PerWindow the counts from there,
	// when they span at most MaxWindows windows (a device clock years off
	// must not cost gigabytes); nil otherwise.
	Window    time.Duration
	First     int64
	PerWindow []int64
	// Peak is the most socket-opens in one window, PeakAt its start.
	Peak   int64
	PeakAt int64

	// Lost counts devices that lost their connection at least once (a
	// start is not a loss); Recovered those of them that connected after
	// their last loss. TTR holds a time to recover for every loss a
	// connect ended: from the device's own loss to its first successful
	// connect after it; every one, or beyond ExactDurations a sketch (see
	// Durations).
	Lost, Recovered int
	TTR             Durations
	// TTR50 ... TTRMax are nearest-rank percentiles of TTR: beyond
	// ExactDurations losses, TTR50 ... TTR99 are estimates within
	// DurationsAccuracy (TTR.Exact is false); TTRMax is exact.
	TTR50, TTR90, TTR99, TTRMax time.Duration
	// Fairness is Jain's index over TTR: (Σx)² / (n·Σx²), 1 when every
	// device took as long, 1/n when one took all the time; beyond
	// ExactDurations, over the sketch's values.
	Fairness float64

	// Incidents are the losses that took many devices down together, in
	// time order (see Incident), on times corrected by ClockOffsets.
	Incidents []Incident
	// ClockOffsets are the devices whose clocks the broker's log or the
	// incidents show to be off (see ClockOffset): the broker's first, by
	// device, then the audit's in the order they were found.
	ClockOffsets []ClockOffset
	// Witness is what the broker's logs say beside the audit; nil when
	// the check had none.
	Witness *Witness

	// Flushed counts the messages the devices flushed from their outboxes,
	// placed in time as Device.Flushes places them. FlushFirst is the
	// first second with some, and FlushPerSecond counts them per second
	// from there (nil when none were flushed, or they span more than
	// MaxWindows seconds); FlushPeak is the most in one second,
	// FlushPeakAt its start. Sums saturate at MaxInt64.
	Flushed        int64
	FlushFirst     int64
	FlushPerSecond []int64
	FlushPeak      int64
	FlushPeakAt    int64

	// Redelivered counts the messages the broker redelivered to the
	// devices after their reconnects (inbound_redelivered), placed in
	// time as Device.Redeliveries places them; the other Redelivery
	// figures are the Flush ones of those messages.
	Redelivered         int64
	RedeliveryFirst     int64
	RedeliveryPerSecond []int64
	RedeliveryPeak      int64
	RedeliveryPeakAt    int64

	fc *fleetCounter // the devices' client ids, for the rules' Finish: set by stats
}

// name returns the client id of the device of ordinal dev in the read.
func (st *FleetStats) name(dev int32) string { return st.fc.id(dev) }

// DefaultWindow is the window socket-opens are counted in by default.
const DefaultWindow = time.Second

// MaxWindows bounds the length of FleetStats.PerWindow.
const MaxWindows = 1 << 20

// fleetCounter gathers FleetStats device by device: memory grows with the
// number of devices and the span of time, not with the number of records.
type fleetCounter struct {
	St FleetStats
	// Names holds every device's client id, by its ordinal in the read:
	// the one copy of the ids that the rules' fleet state names devices
	// by; nil once taken apart (Partial.TakeNames), when Named holds the
	// ids of the devices the partial still names, by ordinal.
	Names      []string
	NamesTaken bool
	Named      map[int32]string
	Window     int64
	Opens      map[int64]int64 // window index -> socket-opens
	Inc        incidentCounter
	Flush      secondCounter
	Redel      secondCounter
	Wit        witnessCounter

	broker []*BrokerLog // the broker's logs, set before stats
	ids    []string     // the figures' ids (PutFigures), nil if none: FleetStats.IDs
}

// named returns offs, which Infer found without the devices' ids, with
// them, in the order the finishing step puts them in: by round of
// corrections, by id within one.
func (fc *fleetCounter) named(offs []ClockOffset) []ClockOffset {
	for i := range offs {
		offs[i].Device = fc.id(offs[i].dev)
	}
	slices.SortStableFunc(offs, func(a, b ClockOffset) int {
		return cmp.Or(cmp.Compare(a.round, b.round), strings.Compare(a.Device, b.Device))
	})
	return offs
}

// id returns the client id of the device of ordinal dev, "" if its id
// was taken apart and not put back (Split.Finish checks that none is
// asked for).
func (fc *fleetCounter) id(dev int32) string {
	if fc.NamesTaken {
		return fc.Named[dev]
	}
	return fc.Names[dev]
}

func newFleetCounter(window time.Duration) *fleetCounter {
	if window <= 0 {
		window = DefaultWindow
	}
	return &fleetCounter{St: FleetStats{Window: window, FlushPeakAt: NoTime, RedeliveryPeakAt: NoTime}, Window: int64(window), Opens: map[int64]int64{},
		Inc: incidentCounter{end: NoTime}}
}

// MaxIDs bounds the devices whose ids FleetStats.IDs lists.
const MaxIDs = 1000

func (fc *fleetCounter) add(d *Device) {
	fc.St.Devices++
	fc.Names = push(fc.Names, strings.Clone(d.ID))
	fc.St.Records += int64(len(d.Events))
	for i := range d.Attempts {
		if isSessionStage(d.Attempts[i].Stage) && openInLog(d, &d.Attempts[i]) { // sockets to the broker
			fc.Opens[floorDiv(d.Attempts[i].Open, fc.Window)]++
			fc.St.Attempts++
		}
	}
	fc.Inc.add(d)
	fc.Wit.add(d, fc.Inc.Devices-1)
	d.Flushes(fc.Flush.add)
	d.Redeliveries(fc.Redel.add)
	if !d.Lost() {
		return
	}
	fc.St.Lost++
	if d.Recovered() {
		fc.St.Recovered++
	}
	for i := range d.Episodes {
		if ep := &d.Episodes[i]; ep.Loss() && ep.End != NoTime {
			fc.St.TTR.Add(ep.recovery())
		}
	}
}

// recovery returns the time a loss took to recover: from the loss to the
// connect that ended it (0 for a clock stepped back: clock-anomaly says so).
func (e *Episode) recovery() time.Duration { return time.Duration(max(0, e.End-e.Lost)) }

// stats returns the figures, once every device is added.
func (fc *fleetCounter) stats() *FleetStats {
	st := &fc.St
	ttr := make(chan struct{}) // the times to recover sort on another core: no offset moves them
	go func() {
		st.TTR.Sort()
		close(ttr)
	}()
	if len(fc.Opens) > 0 {
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		for w := range fc.Opens {
			lo, hi = min(lo, w), max(hi, w)
		}
		st.First = lo * fc.Window
		if hi-lo < MaxWindows {
			st.PerWindow = make([]int64, hi-lo+1)
		}
		for w, n := range fc.Opens {
			if st.PerWindow != nil {
				st.PerWindow[w-lo] = n
			}
			if n > st.Peak || n == st.Peak && w*fc.Window < st.PeakAt {
				st.Peak, st.PeakAt = n, w*fc.Window
			}
		}
	}
	st.fc, fc.Inc.names = fc, fc.Names
	if st.Devices <= MaxIDs {
		st.IDs = fc.ids
		if st.IDs == nil {
			st.IDs = slices.Sorted(slices.Values(fc.Names))
		}
	}
	var wit *Witness
	var boffs []ClockOffset
	if fc.Wit.On {
		wit, fc.Inc.pre, boffs = fc.Wit.judge(fc.broker)
		fc.Wit.Devs = nil
	}
	fc.Inc.downs, fc.Inc.brokerKeepalive = brokerDowns(fc.broker), brokerKeepalive(fc.broker)
	var members []map[string]bool
	if inf := fc.Inc.Inferred; inf != nil { // found apart (Split.Infer), detailed by part
		st.Incidents, st.ClockOffsets = inf.Incidents, fc.named(unwireOffsets(inf.Offsets))
		if st.Incidents == nil {
			st.Incidents = []Incident{} // as the finishing step finds none
		}
		for k := range st.Incidents {
			st.Incidents[k].setDetail(fc.Inc.Details[k])
		}
		fc.Inc.setPeaks(st.Incidents) // checked before (Finisher.finish: peaksHeld)
		fc.Inc.Inferred, fc.Inc.Details = nil, nil
	} else {
		st.Incidents, st.ClockOffsets, members = fc.Inc.incidents(wit != nil)
	}
	if wit != nil {
		st.Witness, st.ClockOffsets = wit, append(boffs, st.ClockOffsets...)
		for k := range st.Incidents {
			if wit.apart() {
				break // a log that lies apart in time says nothing of the incidents
			}
			next := int64(NoTime)
			if k+1 < len(st.Incidents) {
				next = st.Incidents[k+1].LostAt
			}
			st.Incidents[k].Broker = wit.incident(&st.Incidents[k], members[k], next)
		}
	}
	fc.messageStats(st)
	<-ttr
	st.TTR50, st.TTR90, st.TTR99, st.TTRMax = st.TTR.Rank(0.5), st.TTR.Rank(0.9), st.TTR.Rank(0.99), st.TTR.Rank(1)
	st.Fairness = st.TTR.Fairness()
	return st
}

// brokerDowns returns when the broker's logs say it went down, sorted.
func brokerDowns(logs []*BrokerLog) []int64 {
	var out []int64
	for _, l := range logs {
		for i := range l.events {
			if l.events[i].Kind == brokerlog.BrokerDown {
				out = append(out, l.events[i].At)
			}
		}
	}
	slices.Sort(out)
	return out
}

// brokerKeepalive returns the keepalive most of the broker's accepts
// declare (seconds, as the clients' CONNECTs gave it), 0 if none does.
func brokerKeepalive(logs []*BrokerLog) time.Duration {
	count := map[uint16]int{}
	best := uint16(0)
	for _, l := range logs {
		for i := range l.events {
			if e := &l.events[i]; e.Kind == brokerlog.Accepted && e.Keepalive > 0 {
				count[e.Keepalive] += int(e.N)
				if c := count[e.Keepalive]; c > count[best] || c == count[best] && e.Keepalive < best {
					best = e.Keepalive
				}
			}
		}
	}
	return time.Duration(best) * time.Second
}

// rank returns the nearest-rank p-quantile of sorted xs, 0 if empty.
func rank(xs []time.Duration, p float64) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	return xs[nearestRank(len(xs), p)]
}

// nearestRank returns the index (from 0) of the nearest-rank p-quantile
// of n > 0 sorted values.
func nearestRank(n int, p float64) int {
	return min(max(int(math.Ceil(p*float64(n)))-1, 0), n-1)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
