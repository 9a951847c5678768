package analyze

import (
	"fmt"
	"time"
)

// presenceID is the rule that judges what the devices' presence said
// while they were down (see Presence).
const presenceID = "presence"

// presenceRule flags incidents whose devices were shown online while
// down past the limit, or shown offline once back.
type presenceRule struct{ brokerOnly }

func (*presenceRule) Info() RuleInfo {
	return RuleInfo{ID: presenceID, Severity: Warning, NeedsBrokerLog: true, Title: "the devices' presence was wrong through an outage",
		Help: "From the wills and the status publishes in the broker's log (Mosquitto: log_type debug or all): an incident whose " +
			"devices were shown online while down for longer than twice their keepalive at the median (the broker died and sent no " +
			"will, and its retained \"online\" outlived it), or whose devices came back after their will and did not say \"online\" " +
			"again. Needs --broker-log."}
}

func (*presenceRule) Finish(c *Context) {
	w := c.Fleet.Witness
	if w == nil || unrelated(c, presenceID, w) {
		return
	}
	sawWill := false
	for i := range c.Fleet.Incidents {
		in := &c.Fleet.Incidents[i]
		if in.Broker == nil || in.Broker.Presence == nil {
			continue
		}
		sawWill = true
		p := in.Broker.Presence
		ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
		if p.Online50 > p.Limit {
			f := Finding{Rule: presenceID, Kind: "presence/online-while-down", Severity: Warning, Device: Fleet,
				Start: in.LostAt, End: in.LostAt + int64(p.OnlineMax)}
			f.Message = fmt.Sprintf("%d of %s with a will shown online while down: p50 %v, max %v, beyond %v",
				p.Devices-p.Wills, nOf(p.Devices, "device"), ms(p.Online50), ms(p.OnlineMax), p.Limit)
			f.Explanation = fmt.Sprintf("The incident at %s took down %s whose connection had declared a Last Will. The broker sent %d "+
				"of their wills; %d said their presence themselves first, %d came back first, %d were still shown online at the end. "+
				"A broker sends a will only when it ends a connection itself (a socket error, a keepalive timeout, within %v of a "+
				"silent loss), never when it dies; a broker restarted with persistence still serves every retained \"online\" "+
				"until its device says otherwise. Have the devices that come back say \"online\" at once, and have the consumers "+
				"of presence distrust a status older than the broker's last restart (or publish a status of the broker's own).",
				fmtTime(in.LostAt), nOf(p.Devices, "device"), p.Wills, p.Said, p.Back, p.Still, p.Limit)
			c.Report(f)
		}
		if p.OfflineUp > 0 {
			f := Finding{Rule: presenceID, Kind: "presence/offline-while-up", Severity: Warning, Device: Fleet,
				Start: in.LostAt, End: p.OfflineUpUntil}
			f.Message = fmt.Sprintf("%s shown offline while connected after the incident, up to %v", nOf(p.OfflineUp, "device"), ms(p.OfflineUpMax))
			f.Explanation = fmt.Sprintf("Their wills went out after the loss at %s, and they came back without saying \"online\" "+
				"within %v: their retained status said offline while they were connected. A device should publish its status on "+
				"every connect.", fmtTime(in.LostAt), PresenceGrace)
			c.Report(f)
		}
	}
	if !sawWill && len(c.Fleet.Incidents) > 0 {
		c.Note(presenceID, "the broker's log shows no will of the incidents' devices (Mosquitto writes them with log_type debug or "+
			"all; other brokers' logs do not show them): presence not judged")
	}
}
