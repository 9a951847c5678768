package analyze

import (
	"cmp"
	"slices"
	"time"

	"github.com/stormaudit/stormaudit/brokerlog"
)

// The ways the broker's log dates an incident (IncidentBroker.Basis).
const (
	// BasisBrokerDown: the broker said it was going down (or the corpus
	// recorder marked that it killed it).
	BasisBrokerDown = "broker down"
	// BasisTimeouts: a silent outage, dated from the keepalive timeouts
	// the broker logged for the incident's devices. A broker closes a
	// session 1.5 keepalives K after the client's last packet (Mosquitto
	// 2.0 up to a quarter keepalive later: 2.7 s at K = 20 s in the
	// corpus), and that packet came in the keepalive before the link died,
	// so the link died in [last timeout - 1.75K - r, first timeout - 0.5K]
	// for stamps of resolution r; LostAt is the middle.
	BasisTimeouts = "keepalive timeouts"
)

// IncidentBroker is what the broker's logs say of an incident
// (Incident.Broker): its times as the broker saw them, beside the audit's.
type IncidentBroker struct {
	// LostAt is when the broker saw the incident begin, bounded by
	// LostAtEarliest and LostAtLatest, by Basis; NoTime and "" when its
	// log does not show it (a SIGKILL leaves no line).
	LostAt, LostAtEarliest, LostAtLatest int64
	Basis                                string
	// DownAt is the broker's last word before the incident that it was
	// going down, UpAt its first that it was running after it; NoTime if
	// none.
	DownAt, UpAt int64
	// FirstAcceptAt is the broker's first accept of one of the incident's
	// devices after its loss (and after UpAt); NoTime if none.
	FirstAcceptAt int64
	// Timeouts counts the keepalive timeouts of its devices, first to last.
	Timeouts                  int
	FirstTimeout, LastTimeout int64
	// ClosedBy counts its devices' sessions the broker closed, by reason,
	// from the loss's earliest bound to the broker's first accept of them.
	ClosedBy map[string]int
	// AcceptsPeak is the most accepts of any client in one second
	// [AcceptsPeakAt, +1 s) from the loss to the next incident.
	AcceptsPeak   int
	AcceptsPeakAt int64
	// AcceptsRes is the coarsest resolution of the accepts' stamps
	// (1 s for Mosquitto's default): its peak counts stamped seconds, so a
	// burst across a second's edge splits between two.
	AcceptsRes time.Duration
	// Refusals counts the CONNACK refusals the broker sent (Refused
	// events, of any client: Mosquitto names some by their address) from
	// the loss's earliest bound to the next incident, by reason code, in
	// code order; nil when its log wrote none (Mosquitto writes them only
	// with log_type debug or all).
	Refusals []CodeCount
	// UpThroughout is true when the broker's log has lines from before
	// the loss to after the first connect and says nothing of the broker
	// going down or up from 5 s before the loss to that connect: the
	// broker was up and the devices' loss was not its restart.
	UpThroughout bool
	// Presence is how long its devices were shown online while down, from
	// their wills and their own status publishes; nil when the log shows
	// none of them declaring a will (see Presence).
	Presence *Presence `json:",omitempty"`
}

// CodeCount is how many times a reason code was sent.
type CodeCount struct {
	Code int32
	N    int
}

// incident returns what the broker's events say of inc, whose devices
// are members, before the next incident's loss (NoTime: none).
func (wit *Witness) incident(inc *Incident, members map[string]bool, next int64) *IncidentBroker {
	ib := &IncidentBroker{LostAt: NoTime, LostAtEarliest: NoTime, LostAtLatest: NoTime, DownAt: NoTime, UpAt: NoTime,
		FirstAcceptAt: NoTime, FirstTimeout: NoTime, LastTimeout: NoTime, ClosedBy: map[string]int{}, AcceptsPeakAt: NoTime}
	downFrom := inc.FirstLoss - int64(5*time.Second)
	from := min(inc.LostAtEarliest, downFrom)
	end := next
	if end == NoTime {
		end = 1<<63 - 1
	}
	lo, _ := slices.BinarySearchFunc(wit.events, from, func(e brokerEv, t int64) int { return cmp.Compare(e.At, t) })
	hi := lo
	for hi < len(wit.events) && wit.events[hi].At < end {
		hi++
	}
	evs := wit.events[lo:hi]
	var timeouts []brokerEv
	restarted := false
	refusals := map[int32]int{}
	for i := range evs {
		e := &evs[i]
		if (e.Kind == brokerlog.BrokerDown || e.Kind == brokerlog.BrokerUp) && (inc.FirstConnectAt == NoTime || e.At <= inc.FirstConnectAt) {
			restarted = true
		}
		if e.Kind == brokerlog.Refused && e.At >= inc.LostAtEarliest {
			refusals[int32(e.Code)] += int(e.N)
		}
		switch {
		case e.Kind == brokerlog.BrokerDown && e.At >= downFrom && e.At <= inc.FirstLoss+int64(time.Second) && ib.UpAt == NoTime:
			ib.DownAt = e.At
		case e.Kind == brokerlog.BrokerUp && e.At > inc.FirstLoss-int64(time.Second) && ib.UpAt == NoTime && ib.FirstAcceptAt == NoTime:
			ib.UpAt = e.At
		case e.Kind == brokerlog.Accepted && e.At >= inc.LostAtEarliest:
			ib.AcceptsRes = max(ib.AcceptsRes, time.Duration(e.Res))
			if ib.FirstAcceptAt == NoTime && (ib.UpAt == NoTime || e.At >= ib.UpAt) && members[wit.client(e)] {
				ib.FirstAcceptAt = e.At
			}
		case e.Kind == brokerlog.Closed && ib.FirstAcceptAt == NoTime && e.At >= inc.LostAtEarliest && members[wit.client(e)]:
			ib.ClosedBy[e.Reason.String()] += int(e.N)
			if e.Reason == brokerlog.KeepaliveTimeout && e.Keepalive > 0 {
				timeouts = append(timeouts, *e)
			}
		}
	}
	ib.AcceptsPeak, ib.AcceptsPeakAt = acceptsPeak(evs, int64(time.Second), func(e *brokerEv) bool { return e.At >= inc.LostAtEarliest })
	for code, n := range refusals {
		ib.Refusals = append(ib.Refusals, CodeCount{Code: code, N: n})
	}
	slices.SortFunc(ib.Refusals, func(a, b CodeCount) int { return cmp.Compare(a.Code, b.Code) })
	ib.UpThroughout = !restarted && len(wit.events) > 0 && wit.events[0].At < inc.LostAtEarliest &&
		inc.FirstConnectAt != NoTime && wit.events[len(wit.events)-1].At >= inc.FirstConnectAt
	switch {
	case ib.DownAt != NoTime:
		ib.LostAt, ib.LostAtEarliest, ib.LostAtLatest, ib.Basis = ib.DownAt, ib.DownAt, ib.DownAt, BasisBrokerDown
	case len(timeouts) > 0:
		ib.datedByTimeouts(timeouts)
	}
	lost := inc.LostAt
	if ib.LostAt != NoTime {
		lost = ib.LostAt // the broker's own dating: its view is what presence reads
	}
	ib.Presence = wit.presenceOf(members, lost, next)
	return ib
}

// datedByTimeouts dates a silent outage from its keepalive timeouts (see
// BasisTimeouts).
func (ib *IncidentBroker) datedByTimeouts(ts []brokerEv) {
	lo, hi := int64(NoTime), int64(1<<63-1)
	for _, t := range ts {
		k := int64(t.Keepalive) * int64(time.Second)
		lo, hi = max(lo, t.At-k*7/4-int64(t.Res)), min(hi, t.At-k/2)
		ib.Timeouts += int(t.N)
	}
	ib.FirstTimeout, ib.LastTimeout = ts[0].At, ts[len(ts)-1].At
	if lo > hi {
		return // timeouts further apart than one link's death allows: no date
	}
	ib.LostAtEarliest, ib.LostAtLatest, ib.Basis = lo, hi, BasisTimeouts
	ib.LostAt = midpoint(lo, hi)
}
