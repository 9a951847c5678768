package brokerlog

// HiveMQ's event.log. Its lines are written by com.hivemq.logging.EventLog
// (hivemq-community-edition, src/main/java/com/hivemq/logging/EventLog.java)
// through the EVENT-FILE appender of conf/logback.xml, whose pattern
// "%-24(%d)- %msg%n%ex" puts logback's default date, "yyyy-MM-dd
// HH:mm:ss,SSS" in the JVM's zone, padded to 24 characters, before "- ".
// The reasons of "was disconnected" lines are the strings of
// com.hivemq.util.ReasonStrings.

import (
	"strings"
	"time"
)

// hivemqSplit reads the stamp of an event.log line and returns the
// message after it.
func hivemqSplit(s string, tz *time.Location) (dateTime, string, bool) {
	d, ok := parseDateTime(s, tz)
	if !ok || d.digits == 0 {
		return d, "", false
	}
	rest := strings.TrimLeft(s[d.n:], " ")
	msg, ok := strings.CutPrefix(rest, "- ")
	return d, msg, ok
}

// hivemqSkipped are the beginnings of event.log messages that say nothing
// of connections.
var hivemqSkipped = []string{
	"Outgoing publish message was dropped.",
	"Outgoing MQTT packet was dropped.",
	"Received AUTH from ",
	"Sent AUTH to ",
}

// isHiveMQ reports whether s looks like a line of HiveMQ's event.log.
func isHiveMQ(s string) bool {
	_, msg, ok := hivemqSplit(s, time.UTC)
	if !ok {
		return false
	}
	if strings.HasPrefix(msg, "Client ID: ") {
		return true
	}
	for _, p := range hivemqSkipped {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

func (p *parser) hivemq(s string, out *outcome) {
	d, msg, ok := hivemqSplit(s, p.tz)
	if !ok {
		out.reject("stamp", "expected HiveMQ's stamp \"YYYY-MM-DD hh:mm:ss,SSS - \"")
		return
	}
	ev := &out.ev
	ev.At, ev.Res = d.at, d.res
	rest, ok := strings.CutPrefix(msg, "Client ID: ")
	if !ok {
		for _, p := range hivemqSkipped {
			if strings.HasPrefix(msg, p) {
				out.skip = true
				return
			}
		}
		out.reject("message", "expected one of HiveMQ's event.log messages")
		return
	}
	if hivemqConnected(rest, ev) {
		return
	}
	if hivemqDisconnected(rest, ev) {
		return
	}
	if strings.Contains(rest, " session has expired at ") {
		out.skip = true
		return
	}
	out.reject("message", "expected \"Client ID: ID, IP: IP\" and connected, disconnected gracefully, "+
		"disconnected ungracefully, or was disconnected")
}

// hivemqConnected reads "ID, IP: IP, Clean Start: B, Session Expiry: N
// connected." into ev, from the right: the id may hold anything.
func hivemqConnected(rest string, ev *Event) bool {
	rest, ok := strings.CutSuffix(rest, " connected.")
	if !ok {
		return false
	}
	i := strings.LastIndex(rest, ", Session Expiry: ")
	if i < 0 {
		return false
	}
	expiry := rest[i+len(", Session Expiry: "):]
	if expiry != "UNKNOWN" && !allDigits(expiry) { // a Java long
		return false
	}
	rest = rest[:i]
	i = strings.LastIndex(rest, ", Clean Start: ")
	if i < 0 {
		return false
	}
	clean := rest[i+len(", Clean Start: "):]
	rest = rest[:i]
	i = strings.LastIndex(rest, ", IP: ")
	if i < 0 {
		return false
	}
	switch clean {
	case "true":
		ev.Clean = 1
	case "false":
		ev.Clean = -1
	case "UNKNOWN":
	default:
		return false
	}
	ev.Kind, ev.Client, ev.Peer = Accepted, hivemqValue(rest[:i]), hivemqValue(rest[i+len(", IP: "):])
	return true
}

// The endings of HiveMQ's disconnect lines, after the IP.
const (
	hivemqGraceful     = " disconnected gracefully."
	hivemqGivenReason  = " disconnected gracefully. Reason given by client: "
	hivemqUngraceful   = " disconnected ungracefully."
	hivemqUngracefulOn = " disconnected ungracefully from "
	hivemqWas          = " was disconnected. reason: "
)

// hivemqDisconnected reads "ID, IP: IP disconnected ..." into ev. The IP
// has no spaces; the id and a reason may hold anything, so the id ends at
// the first ", IP: " that such an ending follows.
func hivemqDisconnected(rest string, ev *Event) bool {
	for i := 0; ; {
		j := strings.Index(rest[i:], ", IP: ")
		if j < 0 {
			return false
		}
		i += j
		after := rest[i+len(", IP: "):]
		sp := strings.IndexByte(after, ' ')
		if sp > 0 {
			ip, tail := after[:sp], after[sp:]
			r, detail, ok := hivemqEnding(tail)
			if ok {
				ev.Kind, ev.Client, ev.Peer, ev.Reason, ev.Detail = Closed, hivemqValue(rest[:i]), hivemqValue(ip), r, detail
				return true
			}
		}
		i += len(", IP: ")
	}
}

// hivemqEnding reads the ending of a disconnect line.
func hivemqEnding(tail string) (Reason, string, bool) {
	switch {
	case tail == hivemqGraceful:
		return ClientDisconnect, "", true
	case strings.HasPrefix(tail, hivemqGivenReason):
		return ClientDisconnect, tail[len(hivemqGivenReason):], true
	case tail == hivemqUngraceful:
		return SocketError, "", true
	case strings.HasPrefix(tail, hivemqUngracefulOn) && strings.HasSuffix(tail, "."):
		// "from LISTENER on port: N." (HiveMQ 2024 and later)
		return SocketError, "", strings.Contains(tail, " on port: ")
	case strings.HasPrefix(tail, hivemqWas) && strings.HasSuffix(tail, "."):
		reason := strings.TrimSuffix(tail[len(hivemqWas):], ".") // EventLog appends "." to the reason
		return hivemqReason(reason), reason, true
	}
	return 0, "", false
}

// hivemqReason maps the reason of a "was disconnected" line
// (com.hivemq.util.ReasonStrings and the extension SDK) to a Reason.
func hivemqReason(r string) Reason {
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(r, s) {
				return true
			}
		}
		return false
	}
	switch {
	case has("Another client connected with the same client id"):
		return Takeover
	case has("idle for too long"):
		return KeepaliveTimeout
	case has("uthentication failed", "Not authorized", "not authorized", "unauthorized", "No client certificate"):
		return NotAuthorized
	case has("extension"):
		return AdminAction
	case has("protocol violation", "malformed", "Malformed", "was sent", "Sent CONNECT", "Sent SUBSCRIBE",
		"Sent UNSUBSCRIBE", "not allowed", "too large", "Too many concurrent", "Message type", "Topic alias",
		"exceeds maximum allowed QoS", "does not allow"):
		return ProtocolError
	}
	return ReasonOther
}

// hivemqValue returns v, or "" for HiveMQ's placeholder for a value it
// did not have.
func hivemqValue(v string) string {
	if v == "UNKNOWN" {
		return ""
	}
	return v
}

func allDigits(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}
