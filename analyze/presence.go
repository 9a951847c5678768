package analyze

import (
	"cmp"
	"slices"
	"time"

	"github.com/stormaudit/stormaudit/brokerlog"
)

// Presence is how long an incident's devices were shown online while
// they were down, from the broker's log (docs/rules.md, "Presence"): a
// device that declares a Last Will ("offline", retained) and says
// "online" itself on each connect is shown online from its loss until the
// broker sends its will (when the broker ends the connection itself: a
// socket error, a keepalive timeout; never when it dies), until the
// device says its presence itself again, or until it comes back.
type Presence struct {
	// Devices counts the incident's devices whose connection, when it
	// was lost, had declared a will (Mosquitto: log_type debug or all).
	Devices int
	// Wills counts those whose will the broker sent, Said those that said
	// their presence themselves first, Back those that came back first
	// (their retained "online" true again), and Still those still shown
	// online at the log's end (or the next incident).
	Wills, Said, Back, Still int
	// From is the loss they are counted from: the incident's as the
	// broker's log dates it (IncidentBroker.LostAt), else the audit's.
	From int64
	// Online holds each device's time shown online while down, from From
	// (one still shown online counts to the end), and Online50 ...
	// OnlineMax its percentiles.
	Online                                  Durations
	Online50, Online90, Online99, OnlineMax time.Duration
	// OfflineUp counts the devices whose will went out and that came back
	// without saying their presence again within PresenceGrace: shown
	// offline while connected, OfflineUpMax the longest (to their saying
	// it, their next loss, or the end).
	OfflineUp    int
	OfflineUpMax time.Duration
	// OfflineUpUntil is when the last of them stopped being shown offline
	// (0 when none was).
	OfflineUpUntil int64
	// Windows are the devices' own, by client id: when each stopped
	// being shown online while down, and how.
	Windows []PresenceWindow
	// Limit is how long a device may be shown online while down before
	// presence judges it wrong (PresenceLimit): twice the longest
	// keepalive these devices declared, or PresenceDefaultLimit.
	Limit time.Duration
}

// PresenceWindow is one device's time shown online while down: from the
// incident's loss (Presence.From) to Until, ended How.
type PresenceWindow struct {
	Device string
	Until  int64
	How    string // PresenceWill, PresenceSaid, PresenceBack or PresenceStill
}

// How a device's time shown online while down ended (PresenceWindow.How).
const (
	PresenceWill  = "will"  // the broker sent its will
	PresenceSaid  = "said"  // it said its presence itself
	PresenceBack  = "back"  // it came back
	PresenceStill = "still" // it had not ended at the end: Until is the end
)

// PresenceDefaultLimit is Presence.Limit when the broker's log gives no
// keepalive of the devices: twice the 60 s many clients default to.
const PresenceDefaultLimit = 2 * time.Minute

// PresenceLimit returns how long a device whose keepalive is k may be
// shown online while down: a broker ends a silent connection 1.5 k after
// the client's last packet (Mosquitto 2.0 up to 1.75 k), which came at
// most k before the loss, so its will goes out at most 1.75 k after the
// loss, within 2 k. 0: PresenceDefaultLimit.
func PresenceLimit(k time.Duration) time.Duration {
	if k <= 0 {
		return PresenceDefaultLimit
	}
	return 2 * k
}

// PresenceGrace is how soon after its connect a device must say its
// presence again, once its will went out, not to count as shown offline
// while connected: it says it right after the CONNACK.
const PresenceGrace = 5 * time.Second

// The phases of one device's presence after the incident's loss.
const (
	shownOnline  = iota // down, shown online
	shownOffline        // down, its will sent
	backOffline         // back after its will, not yet said online
	presenceDone        // shown as it is
)

// devPresence is one device's presence after the loss.
type devPresence struct {
	id     string
	phase  int8
	backAt int64
}

// presenceOf returns the presence of an incident's devices (members),
// lost at from, from the broker's events before end (NoTime: up to the
// log's last event, included); nil when none of them had declared a will
// on the connection it lost. A device is followed by its client id, in
// every log. One whose will went out before from (the broker closed its
// connection abnormally) was not shown online at the loss; one that has
// no event after from is shown online to the end.
func (wit *Witness) presenceOf(members map[string]bool, from, end int64) *Presence {
	if len(wit.events) == 0 || len(members) == 0 {
		return nil
	}
	last := wit.events[len(wit.events)-1].At
	if end == NoTime || end > last {
		end = last + 1 // the last event is in
	}
	willed := map[string]bool{} // its connection at the loss declared a will
	keepalive := map[string]uint16{}
	devs := map[string]*devPresence{}
	p := &Presence{From: from}
	var online []time.Duration
	for i := range wit.events {
		e := &wit.events[i]
		if e.At >= end {
			break
		}
		switch e.Kind {
		case brokerlog.Accepted, brokerlog.Will, brokerlog.Closed, brokerlog.Status:
		default:
			continue
		}
		id := wit.client(e)
		if !members[id] {
			continue
		}
		if e.At < from {
			switch e.Kind {
			case brokerlog.Accepted:
				willed[id], keepalive[id] = false, e.Keepalive
			case brokerlog.Will:
				willed[id] = true
			case brokerlog.Closed: // ended before the loss: its will, if any, went out then
				willed[id] = false
			}
			continue
		}
		d := devs[id]
		if d == nil {
			if !willed[id] {
				continue
			}
			d = &devPresence{id: id, phase: shownOnline}
			devs[id] = d
		}
		if how := d.step(e, p); how != "" {
			online = append(online, time.Duration(max(e.At-from, 0)))
			p.Windows = append(p.Windows, PresenceWindow{Device: id, Until: e.At, How: how})
		}
	}
	for id, w := range willed { // lost with a will and not heard of since: shown online to the end
		if w && devs[id] == nil {
			devs[id] = &devPresence{id: id, phase: shownOnline}
		}
	}
	if len(devs) == 0 {
		return nil
	}
	end = min(end, last)
	p.Devices = len(devs)
	var k uint16
	for id, d := range devs {
		k = max(k, keepalive[id])
		switch d.phase {
		case shownOnline:
			p.Still++
			online = append(online, time.Duration(max(end-from, 0)))
			p.Windows = append(p.Windows, PresenceWindow{Device: d.id, Until: end, How: PresenceStill})
		case backOffline:
			p.offlineUp(d.backAt, end)
		}
	}
	p.Limit = PresenceLimit(time.Duration(k) * time.Second)
	slices.SortFunc(p.Windows, func(a, b PresenceWindow) int { return cmp.Compare(a.Device, b.Device) })
	slices.Sort(online)
	p.Online = DurationsOf(online...)
	p.Online.Sort()
	p.Online50, p.Online90, p.Online99, p.OnlineMax = p.Online.Rank(0.5), p.Online.Rank(0.9), p.Online.Rank(0.99), p.Online.Rank(1)
	return p
}

// step takes the broker's event e of the device, counting into p, and
// returns how it stopped being shown online while down, if e ended that
// ("" else).
func (d *devPresence) step(e *brokerEv, p *Presence) string {
	abnormal := e.Kind == brokerlog.Closed && e.Reason != brokerlog.ClientDisconnect && e.Reason != brokerlog.Takeover
	switch d.phase {
	case shownOnline:
		switch {
		case abnormal: // the broker ended the lost connection: its will went out
			d.phase = shownOffline
			p.Wills++
			return PresenceWill
		case e.Kind == brokerlog.Status:
			d.phase = presenceDone
			p.Said++
			return PresenceSaid
		case e.Kind == brokerlog.Accepted:
			d.phase = presenceDone
			p.Back++
			return PresenceBack
		}
	case shownOffline:
		if e.Kind == brokerlog.Accepted {
			d.phase, d.backAt = backOffline, e.At
		}
	case backOffline:
		if e.Kind == brokerlog.Status || abnormal {
			p.offlineUp(d.backAt, e.At)
			d.phase = presenceDone
		}
	}
	return ""
}

// offlineUp counts a device shown offline while connected from back to
// until, when that is beyond PresenceGrace.
func (p *Presence) offlineUp(back, until int64) {
	if gap := time.Duration(until - back); gap > PresenceGrace {
		p.OfflineUp++
		p.OfflineUpMax = max(p.OfflineUpMax, gap)
		p.OfflineUpUntil = max(p.OfflineUpUntil, until)
	}
}
