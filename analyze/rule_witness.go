package analyze

import (
	"fmt"
	"strings"
	"time"
)

// The rules that need the broker's log (Options.Broker): a check without
// one leaves them out.
const (
	unauditedConnectID = "unaudited-connect"
	unseenConnectID    = "unseen-connect"
	sessionTakeoverID  = "session-takeover"
)

// unauditedConnect flags devices whose client id the broker accepted
// where their audit has no connected record (FleetStats.Witness).
type unauditedConnect struct{ brokerOnly }

// unseenConnect flags connected records the broker never accepted.
type unseenConnect struct{ brokerOnly }

// sessionTakeover flags client ids whose live connection the broker
// closed for a new one with the same id.
type sessionTakeover struct{ brokerOnly }

// brokerOnly is what the broker rules share: no per-device work (the
// fleet counter pairs the witnesses) and nothing to merge.
type brokerOnly struct{}

func (brokerOnly) Device(*Context, *Device) {}

func (*unauditedConnect) Info() RuleInfo {
	return RuleInfo{ID: unauditedConnectID, Severity: Warning, NeedsBrokerLog: true, Title: "the broker accepted a connection the audit does not record",
		Help: "The broker's log shows a connection of the device's client id accepted where its audit has no connected record within " +
			"the broker's stamp resolution and 0.5 s (on the device's corrected clock): a second owner of the client id, a reconnect " +
			"loop that writes no audit, or lost records. Needs --broker-log."}
}

func (*unseenConnect) Info() RuleInfo {
	return RuleInfo{ID: unseenConnectID, Severity: Warning, NeedsBrokerLog: true, Title: "a connected record the broker never saw",
		Help: "The device recorded a successful connect while the broker's log runs, and the broker accepted no connection of its " +
			"client id near it: a clock far off, another broker, or a record that is not true. Needs --broker-log."}
}

func (*sessionTakeover) Info() RuleInfo {
	return RuleInfo{ID: sessionTakeoverID, Severity: Warning, NeedsBrokerLog: true, Title: "the broker closed a live session for a new one with the same client id",
		Help: "The broker's log shows it closing a connection because another connected with the same client id: two owners of one " +
			"connection, or one client id on two devices. Needs --broker-log."}
}

// apartText says that the broker's log names the audit's devices and
// pairs none of their connects: it lies apart in time, by how much, and
// whether that looks like a time zone.
func apartText(w *Witness) string {
	d := time.Duration(w.Apart).Round(time.Second)
	s := fmt.Sprintf("%s names %s of the audit but none of its accepts pairs with their connected records: its stamps lie about %v from "+
		"the audit's (the median, a device's first connect to its nearest accept)", logNames(w), nOf(w.Known, "device"), d)
	if q := time.Duration(abs64(w.Apart)).Round(15 * time.Minute); q >= time.Hour/2 && q <= 14*time.Hour &&
		(time.Duration(abs64(w.Apart))-q).Abs() < 2*time.Minute {
		s += fmt.Sprintf(", a whole %v: a time zone? Mosquitto stamps local time unless told; give --broker-log-tz", q)
	}
	return s + ". Nothing it says was judged"
}

// unrelated reports, for rule, a broker log that shares no connect with
// the audit (no accept of it pairs with a connected record, and it names
// client ids the audit does not): another broker's, or another run's.
// The rule then judges nothing, and says so (Skip).
func unrelated(c *Context, rule string, w *Witness) bool {
	if w.apart() {
		c.Skip(rule, apartText(w))
		return true
	}
	if w.Paired > 0 || w.Strangers == 0 {
		return false
	}
	c.Skip(rule, fmt.Sprintf("%s shares no connect with the audit: none of its accepts pairs with a connected record, "+
		"and it names %s the audit never mentions; is it this fleet's broker, and this run's log? Nothing it says was judged",
		logNames(w), nOf(w.Strangers, "client id")))
	return true
}

func (*unauditedConnect) Finish(c *Context) {
	w := c.Fleet.Witness
	if w == nil || unrelated(c, unauditedConnectID, w) {
		return
	}
	eachDevice(w.Unaudited, func(e BrokerEvent) string { return e.Client }, func(dev string, es []BrokerEvent) {
		c.Report(brokerFinding(unauditedConnectID, "unaudited-connect/accept-without-record", dev, w, es,
			fmt.Sprintf("the broker accepted %s of %s that its audit has no connected record for", countNoun(repeats(es), "connection", "connections"), dev),
			"A second owner of the client id, a reconnect loop that writes no audit, or records lost on the way."))
	})
	if w.Strangers > 0 {
		c.Note(unauditedConnectID, fmt.Sprintf("the broker's log names %s the audit never mentions (other clients of the broker, "+
			"or devices whose audit is missing): not judged", nOf(w.Strangers, "client id")))
	}
}

func (*unseenConnect) Finish(c *Context) {
	w := c.Fleet.Witness
	if w == nil || unrelated(c, unseenConnectID, w) {
		return
	}
	eachDevice(w.Unseen, func(a AuditConnect) string { return a.Device }, func(dev string, as []AuditConnect) {
		f := Finding{Rule: unseenConnectID, Kind: "unseen-connect/not-in-broker-log", Severity: Warning, Device: dev, Start: as[0].At, End: as[len(as)-1].At}
		for _, a := range as {
			if len(f.Records) < MaxRefs {
				f.Records = append(f.Records, a.Ref)
			}
		}
		f.Message = fmt.Sprintf("recorded %s that the broker's log does not show", countNoun(len(as), "successful connect", "successful connects"))
		f.Explanation = fmt.Sprintf("%s wrote connected at %s; %s has no accept of client id %s within %s of it (on the device's "+
			"clock corrected by its estimated offset). A clock far off, another broker, or a record that is not true. %s in all.",
			dev, fmtTime(as[0].At), logNames(w), dev, PairTolerance, upperFirst(countNoun(len(as), "such record", "such records")))
		c.Report(f)
	})
}

func (*sessionTakeover) Finish(c *Context) {
	w := c.Fleet.Witness
	if w == nil || unrelated(c, sessionTakeoverID, w) {
		return
	}
	eachDevice(w.Takeovers, func(e BrokerEvent) string { return e.Client }, func(dev string, es []BrokerEvent) {
		c.Report(brokerFinding(sessionTakeoverID, "session-takeover/live-connection-closed", dev, w, es,
			fmt.Sprintf("the broker closed a live connection of %s %s for a new one with the same client id", dev, nTimes(repeats(es))),
			"Two owners of one connection (a library's own reconnect beside the manager's), or one client id on two devices."))
	})
}

// brokerFinding is a finding of kind kind about a device resting on
// broker events es.
func brokerFinding(rule, kind, dev string, w *Witness, es []BrokerEvent, msg, why string) Finding {
	f := Finding{Rule: rule, Kind: kind, Severity: Warning, Device: dev, Start: es[0].At, End: es[len(es)-1].At, Message: msg}
	var at []string
	shown := 0
	for i, e := range es {
		if i == 5 {
			at = append(at, fmt.Sprintf("and %d more", repeats(es)-shown))
			break
		}
		line := fmt.Sprintf("%s (%s:%d: %s)", fmtTime(e.At), w.Logs[e.Log].Name, e.Line, e.Detail)
		if e.Repeats > 1 {
			line = fmt.Sprintf("%s (%s:%d, and %d identical lines after it: %s)", fmtTime(e.At), w.Logs[e.Log].Name, e.Line, e.Repeats-1, e.Detail)
		}
		at = append(at, line)
		shown += e.Repeats
	}
	f.Explanation = fmt.Sprintf("%s: %s. %s", dev, strings.Join(at, "; "), why)
	return f
}

// logNames names the broker logs.
func logNames(w *Witness) string {
	var ns []string
	for _, l := range w.Logs {
		ns = append(ns, l.Name)
	}
	return "the broker's log " + strings.Join(ns, ", ")
}

// eachDevice calls f with each run of xs (sorted by device) that shares a
// device.
func eachDevice[T any](xs []T, dev func(T) string, f func(string, []T)) {
	for lo := 0; lo < len(xs); {
		hi := lo + 1
		for hi < len(xs) && dev(xs[hi]) == dev(xs[lo]) {
			hi++
		}
		f(dev(xs[lo]), xs[lo:hi])
		lo = hi
	}
}
