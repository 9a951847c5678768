package analyze

import (
	"cmp"
	"slices"
	"sort"
	"time"
)

// Incident is a loss that took many devices down together: the broker, a
// cell tower or an access point going down. It is inferred from the
// records whether or not they record disconnects (docs/rules.md,
// "Incidents").
type Incident struct {
	// LostAt is the first loss of the incident, LastLoss the last loss
	// counted in it (Unix ns).
	LostAt, LastLoss int64
	// DevicesLost counts the devices it took down; LossInferred is true
	// when none of them recorded the loss (a disconnected record): the
	// losses are inferred from new attempts after connected records.
	DevicesLost  int
	LossInferred bool
	// FirstConnectAt is the first successful connect of any of its
	// devices after its loss (the broker's return, as the fleet saw it),
	// NoTime if none; Recovered counts its devices that connected after
	// their loss, whatever they did later.
	FirstConnectAt int64
	Recovered      int
	// TTR holds each recovered device's time to recover, from its own
	// loss to its first successful connect after it, sorted; TTR50 ...
	// TTRMax are its nearest-rank percentiles.
	TTR                         []time.Duration
	TTR50, TTR90, TTR99, TTRMax time.Duration
	// ConnectsPeak is the most successful connects (connected records of
	// any device) in one second [ConnectsPeakAt, +1 s) after LostAt and
	// before the next incident.
	ConnectsPeak   int
	ConnectsPeakAt int64
	// FlushPeak is the most outbox messages flushed (see
	// Device.Flushes) in one whole second, FlushPeakAt its start, from
	// LostAt's second to the next incident's; 0 and NoTime when none was.
	FlushPeak   int64
	FlushPeakAt int64
}

// IncidentWindow is the window losses are counted in: an incident is a
// stretch of time in which every loss begins a window of this width that
// holds at least IncidentMinDevices(n) losses.
const IncidentWindow = time.Second

// IncidentMinDevices returns how many devices must lose their connection
// within IncidentWindow for an incident, in a fleet of n devices that were
// ever connected: 10% of them, at least 3 and at most 100.
func IncidentMinDevices(n int) int {
	return max(3, min((n+9)/10, 100))
}

// lossEvent is one loss of a device, as the incident inference keeps it.
type lossEvent struct {
	At, Back int64 // the loss, and the first connect after it (NoTime if none)
	Dev      int32 // the device's ordinal in the read
	Explicit bool  // recorded by a disconnected record
}

// incidentCounter gathers the losses and connects of every device and
// finds the incidents among them. It keeps 24 bytes per loss and 8 per
// connect.
type incidentCounter struct {
	Losses   []lossEvent
	Connects []int64 // every connected record of the session stage
	Devices  int32   // devices read
	Known    int     // devices known to have been connected: a session, or a loss
}

func (ic *incidentCounter) add(d *Device) {
	dev := ic.Devices
	ic.Devices++
	last := int64(NoTime)
	for i := range d.Episodes {
		ep := &d.Episodes[i]
		if !ep.Loss() || last != NoTime && ep.Start < addSat(last, int64(IncidentWindow)) {
			continue // a device counts once in a window
		}
		last = ep.Start
		ic.Losses = append(ic.Losses, lossEvent{At: ep.Start, Back: ep.End, Dev: dev, Explicit: !ep.Inferred})
	}
	for i := range d.Sessions {
		ic.Connects = append(ic.Connects, d.Sessions[i].Up)
	}
	if last != NoTime || len(d.Sessions) > 0 {
		ic.Known++
	}
}

// incidents returns the incidents, in time order.
func (ic *incidentCounter) incidents() []Incident {
	ls := ic.Losses
	slices.SortFunc(ls, func(a, b lossEvent) int { return cmp.Compare(a.At, b.At) })
	slices.Sort(ic.Connects)
	need := IncidentMinDevices(ic.Known)
	var out []Incident
	lo, hi, until := -1, -1, int64(0)
	for i, j := 0, 0; i < len(ls); i++ {
		for j < len(ls) && ls[j].At < addSat(ls[i].At, int64(IncidentWindow)) {
			j++
		}
		if j-i < need {
			continue
		}
		if lo >= 0 && ls[i].At < until {
			hi = max(hi, j)
		} else {
			if lo >= 0 {
				out = append(out, newIncident(ls[lo:hi]))
			}
			lo, hi = i, j
		}
		until = addSat(ls[i].At, int64(IncidentWindow))
	}
	if lo >= 0 {
		out = append(out, newIncident(ls[lo:hi]))
	}
	for k := range out {
		next := int64(NoTime)
		if k+1 < len(out) {
			next = out[k+1].LostAt
		}
		out[k].ConnectsPeak, out[k].ConnectsPeakAt = peakPerWindow(ic.Connects, out[k].LostAt, next, int64(time.Second))
	}
	ic.Losses, ic.Connects = nil, nil
	return out
}

// newIncident sums up the losses of one incident, each device once.
func newIncident(ls []lossEvent) Incident {
	inc := Incident{LostAt: ls[0].At, LastLoss: ls[len(ls)-1].At, LossInferred: true, FirstConnectAt: NoTime, ConnectsPeakAt: NoTime, FlushPeakAt: NoTime}
	seen := map[int32]bool{}
	for _, l := range ls {
		if seen[l.Dev] {
			continue
		}
		seen[l.Dev] = true
		inc.DevicesLost++
		inc.LossInferred = inc.LossInferred && !l.Explicit
		if l.Back == NoTime {
			continue
		}
		inc.Recovered++
		inc.TTR = append(inc.TTR, time.Duration(max(0, l.Back-l.At)))
		if inc.FirstConnectAt == NoTime || l.Back < inc.FirstConnectAt {
			inc.FirstConnectAt = l.Back
		}
	}
	slices.Sort(inc.TTR)
	inc.TTR50, inc.TTR90, inc.TTR99, inc.TTRMax = rank(inc.TTR, 0.5), rank(inc.TTR, 0.9), rank(inc.TTR, 0.99), rank(inc.TTR, 1)
	return inc
}

// peakPerWindow returns the most of the sorted times ts in one window
// [t, t+w) with from <= t < to (to NoTime: no end), and the window's
// start t, which is one of ts; (0, NoTime) if none lies there.
func peakPerWindow(ts []int64, from, to, w int64) (int, int64) {
	i := sort.Search(len(ts), func(k int) bool { return ts[k] >= from })
	best, at := 0, int64(NoTime)
	for j := i; i < len(ts) && (to == NoTime || ts[i] < to); i++ {
		for j < len(ts) && ts[j] < addSat(ts[i], w) {
			j++
		}
		if j-i > best {
			best, at = j-i, ts[i]
		}
	}
	return best, at
}
