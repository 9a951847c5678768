package brokerlog

// Mosquitto's log. Its messages are the format strings of log__printf in
// Mosquitto's src/*.c (handle_connect.c, loop.c, mosquitto.c, net.c),
// checked against the 1.5, 1.6, 2.0 and develop branches; its stamp is
// written by src/logging.c: the epoch seconds (the default) or
// strftime(log_timestamp_format) of localtime(), then ": ".

import (
	"strings"
	"time"
)

// The corpus recorder's marks (internal/testonly/realcorpus): a line the recorder
// writes rather than reads from Mosquitto.
const (
	recorderMarkPrefix = "corpus: "
	recorderKillMark   = recorderMarkPrefix + "SIGKILL sent to the broker"
)

// mosquittoLine is a Mosquitto line with its stamp read.
type mosquittoLine struct {
	at   int64
	res  time.Duration
	late time.Duration // see Event.Late
	msg  string        // Mosquitto's message, after its stamp
	mark bool          // the line is a recorder mark; msg holds it
}

// splitMosquitto reads the stamp of a Mosquitto line: "EPOCH: ", a
// log_timestamp_format date and time and ": ", the corpus recorder's
// stamp, a space, and either a Mosquitto line or a recorder mark, or a
// syslog prefix before a Mosquitto line (see syslogLine).
func splitMosquitto(s string, tz *time.Location) (mosquittoLine, bool) {
	if d, ok := parseDateTime(s, tz); ok {
		rest := s[d.n:]
		if msg, ok := strings.CutPrefix(rest, ": "); ok {
			return mosquittoLine{at: d.at, res: d.res, msg: msg}, true
		}
		inner, ok := strings.CutPrefix(rest, " ")
		if !ok || !d.zoned { // the recorder's and rsyslog's stamps are RFC 3339, with their zone
			return mosquittoLine{}, false
		}
		l := mosquittoLine{at: d.at, res: d.res}
		if tagged, ok := cutSyslogTag(inner); ok {
			l.msg = stripOwnStamp(tagged, tz)
			return l, true
		}
		// The recorder stamps microseconds (realcorpus.StampTime) when it
		// reads a line; a shorter fraction is the same clock with its
		// trailing zeros dropped. A line it read after Mosquitto's own
		// stamp's second had passed keeps Mosquitto's stamp instead.
		if d.digits <= 6 {
			l.res = time.Microsecond
		}
		if strings.HasPrefix(inner, recorderMarkPrefix) {
			l.msg, l.mark = inner, true
			return l, true
		}
		l.msg = inner
		if own, res, msg, ok := ownStamp(inner, tz); ok {
			l.msg = msg
			switch {
			case l.at >= own+int64(res):
				// read after Mosquitto's own stamp's second had passed: the
				// recorder read it late, and Mosquitto's stamp is the better
				l.at, l.res = own, res
			case l.at > own:
				l.late = time.Duration(l.at - own)
			}
		}
		return l, true
	}
	if at, res, msg, ok := ownStamp(s, tz); ok {
		return mosquittoLine{at: at, res: res, msg: msg}, true
	}
	return syslogLine(s, tz)
}

// ownStamp reads the stamp Mosquitto itself writes (src/logging.c): the
// epoch seconds, or a log_timestamp_format date and time, then ": ".
func ownStamp(s string, tz *time.Location) (at int64, res time.Duration, msg string, ok bool) {
	if at, n, ok := parseEpoch(s); ok && strings.HasPrefix(s[n:], ": ") {
		return at, time.Second, s[n+2:], true
	}
	if d, ok := parseDateTime(s, tz); ok && strings.HasPrefix(s[d.n:], ": ") {
		return d.at, d.res, s[d.n+2:], true
	}
	return 0, 0, "", false
}

// stripOwnStamp returns s without Mosquitto's own stamp, if it has one.
func stripOwnStamp(s string, tz *time.Location) string {
	if _, _, msg, ok := ownStamp(s, tz); ok {
		return msg
	}
	return s
}

// syslogLine reads a line of a traditional syslog file or of journalctl's
// default output: "Mmm dd hh:mm:ss HOST mosquitto[PID]: " before
// Mosquitto's line (log_dest syslog, or standard output under systemd).
// That stamp names no year, so the line must carry Mosquitto's own stamp,
// which it does unless log_timestamp is false.
func syslogLine(s string, tz *time.Location) (mosquittoLine, bool) {
	if len(s) < 16 || s[3] != ' ' || s[6] != ' ' || s[9] != ':' || s[12] != ':' || s[15] != ' ' ||
		strings.Index("JanFebMarAprMayJunJulAugSepOctNovDec", s[:3])%3 != 0 {
		return mosquittoLine{}, false
	}
	tagged, ok := cutSyslogTag(s[16:])
	if !ok {
		return mosquittoLine{}, false
	}
	at, res, msg, ok := ownStamp(tagged, tz)
	return mosquittoLine{at: at, res: res, msg: msg}, ok
}

// cutSyslogTag cuts "HOST TAG: " from s, where TAG is a program name that
// holds "mosquitto", with or without "[PID]".
func cutSyslogTag(s string) (string, bool) {
	host, rest, ok := strings.Cut(s, " ")
	if !ok || host == "" {
		return "", false
	}
	tag, rest, ok := strings.Cut(rest, ": ")
	if !ok || strings.ContainsAny(tag, " ") {
		return "", false
	}
	name, _, _ := strings.Cut(tag, "[")
	if !strings.Contains(name, "mosquitto") {
		return "", false
	}
	return rest, true
}

// isMosquitto reports whether s looks like a line of Mosquitto's log.
func isMosquitto(s string) bool {
	l, ok := splitMosquitto(s, time.UTC)
	return ok && (l.mark || l.msg != "")
}

func (p *parser) mosquitto(s string, out *outcome) {
	if strings.HasPrefix(s, "\t") {
		out.skip = true // a continuation without a stamp of its own
		return
	}
	l, ok := splitMosquitto(s, p.tz)
	if !ok {
		out.reject("stamp", "expected a Mosquitto stamp (\"EPOCH: \", a log_timestamp_format "+
			"\"YYYY-MM-DD hh:mm:ss: \", the corpus recorder's RFC 3339 stamp, or a syslog prefix "+
			"and \"HOST mosquitto[PID]: \")")
		return
	}
	out.ev.At, out.ev.Res, out.ev.Late = l.at, l.res, l.late
	if l.mark {
		out.ev.Kind, out.ev.Detail = Mark, l.msg
		if l.msg == recorderKillMark {
			out.ev.Kind = BrokerDown
		}
		return
	}
	if p.wills.line(l.msg, out) {
		return
	}
	if p.mosquittoAfter(l.msg) {
		out.skip = true
		return
	}
	mosquittoMessage(l.msg, out)
	if out.ev.Kind == Accepted {
		p.wills.accepted(out.ev.Client)
	}
}

// mosquittoAfter reports whether msg belongs to the message before it.
// Mosquitto writes some messages over several log lines, each with its
// own stamp (log_type all or debug): a will's topic after "Will message
// specified (N bytes) (rR, qQ).", each topic of a SUBSCRIBE or UNSUBSCRIBE
// after "Received SUBSCRIBE from ID", each on a line that begins with a
// tab; and with log_type subscribe, "ID QOS TOPIC" (or "ID TOPIC" for an
// unsubscribe) for each topic. Those lines are counted as skipped, as the
// line they continue is.
func (p *parser) mosquittoAfter(msg string) bool {
	if strings.HasPrefix(msg, "\t") {
		return true
	}
	if p.subscriber != "" && strings.HasPrefix(msg, p.subscriber) && strings.HasPrefix(msg[len(p.subscriber):], " ") {
		return true
	}
	p.subscriber = ""
	for _, prefix := range []string{"Received SUBSCRIBE from ", "Received UNSUBSCRIBE from "} {
		if id, ok := strings.CutPrefix(msg, prefix); ok {
			p.subscriber = id
		}
	}
	return false
}

// mosquittoClosed maps the endings of Mosquitto's "Client ID ..." lines
// to the reason the connection ended (src/loop.c do_disconnect, and
// src/handle_connect.c for a takeover). Mosquitto 2.0 writes "closed its
// connection" for a connection lost without DISCONNECT (MOSQ_ERR_CONN_LOST),
// where 1.x wrote "Socket error on client ID, disconnecting."; it writes
// "disconnected." when the client had sent DISCONNECT.
var mosquittoClosed = []struct {
	suffix string
	reason Reason
}{
	{" already connected, closing old connection.", Takeover},
	{" closed its connection.", SocketError},
	{" disconnected.", ClientDisconnect},
	{" has exceeded timeout, disconnecting.", KeepaliveTimeout},
	{" disconnected due to protocol error.", ProtocolError},
	{" disconnected due to malformed packet.", ProtocolError},
	{" disconnected due to oversize packet.", ProtocolError},
	{" disconnected due to oversize payload.", ProtocolError},
	{" disconnected due to exceeding the receive maximum.", ProtocolError},
	{" disconnected due to using not allowed feature (QoS too high, retain not supported, or bad AUTH method).", ProtocolError},
	{" disconnected due to out of memory.", ReasonOther},
	{" disconnected, not authorised.", NotAuthorized},
	{" disconnected, no longer authorised.", NotAuthorized},
	{" disconnected, bad username or password.", NotAuthorized},
	{" disconnected, client banned.", NotAuthorized},
	{" disconnected, bad authentication method.", NotAuthorized},
	{" disconnected, client identifier not valid.", ProtocolError},
	{" disconnected, session taken over.", Takeover},
	{" disconnected, server unavailable.", ServerDisconnect},
	{" disconnected, server busy.", ServerDisconnect},
	{" been disconnected by administrative action.", AdminAction},
}

// mosquittoSkipped are the beginnings of Mosquitto's messages that say
// nothing of client connections: start-up and configuration, listeners,
// persistence, packet traces (log_type debug), bridges (this broker as a
// client), refusals before CONNACK, and warnings and errors.
var mosquittoSkipped = []string{
	"New connection from ", // the TCP accept; "New client connected" follows on CONNACK
	"Opening ", "Config loaded from ", "Loading config file ", "Using default config",
	"Reloading config", "Saving in-memory database", "Restoring in-memory database",
	"Starting in local only mode", "Create a configuration file", "For more details see",
	"If you are trying to bind", "    sudo setcap", "Loading plugin", "Plugin ", "Load error",
	"Received ", "Sending ", "Denied PUBLISH", "Dropped too large PUBLISH", "Dropping too large",
	"Outgoing messages are being dropped", "Expiring client ", "Expiring persistent client ",
	"Client connection from ", "Connection Refused", "Connecting bridge", "Bridge ",
	"ACL denying access", "Invalid ", "Empty ", "Too high QoS", "Protocol error from ",
	"Bad client ", "Will message specified", "No will message specified",
	"Error: ", "Error ", "Warning: ", "Note: ", "Notice: ", "OpenSSL Error", "OCSP",
	"Out of memory", "Internal log buffer", "Unable to ", "Failed ", "Could not ",
	" ├── ", " └── ", "|-- ",
}

// mosquittoMessage reads Mosquitto's message (after its stamp) into out.
func mosquittoMessage(msg string, out *outcome) {
	ev := &out.ev
	if v, ok := strings.CutPrefix(msg, "mosquitto version "); ok {
		switch {
		case strings.HasSuffix(v, " running"):
			ev.Kind, ev.Detail = BrokerUp, msg
			return
		case strings.HasSuffix(v, " terminating"):
			ev.Kind, ev.Detail = BrokerDown, msg
			return
		case strings.HasSuffix(v, " starting"):
			out.skip = true
			return
		}
	}
	for _, prefix := range []string{"New client connected from ", "New bridge connected from "} {
		if rest, ok := strings.CutPrefix(msg, prefix); ok {
			if !mosquittoConnected(rest, ev) {
				out.reject("message", "expected \""+prefix+"ADDRESS as ID (p2, c1, k60[, u'USER']).\"")
				return
			}
			ev.Kind, ev.Detail = Accepted, msg
			return
		}
	}
	if rest, ok := strings.CutPrefix(msg, "Client "); ok {
		for _, c := range mosquittoClosed {
			if id, ok := strings.CutSuffix(rest, c.suffix); ok {
				closed(ev, id, c.reason, msg)
				return
			}
		}
		switch {
		case strings.Contains(rest, " disconnected: ") && strings.HasSuffix(rest, "."):
			id, _, _ := strings.Cut(rest, " disconnected: ") // strerror(errno)
			closed(ev, id, SocketError, msg)
			return
		case strings.Contains(rest, " disconnected due to ") && strings.HasSuffix(rest, "."):
			id, _, _ := strings.Cut(rest, " disconnected due to ")
			closed(ev, id, ReasonOther, msg)
			return
		case strings.Contains(rest, " disconnected, ") && strings.HasSuffix(rest, "."):
			id, _, _ := strings.Cut(rest, " disconnected, ")
			closed(ev, id, ReasonOther, msg)
			return
		case strings.Contains(rest, " sending "), strings.Contains(rest, " received "),
			strings.Contains(rest, " negotiated "), strings.Contains(rest, " connected with too large Will payload"):
			out.skip = true // a bridge's packet trace, TLS details
			return
		}
	}
	if rest, ok := strings.CutPrefix(msg, "Sending CONNACK to "); ok {
		if mosquittoConnack(rest, ev) {
			ev.Detail = msg
			return
		}
	}
	if rest, ok := strings.CutPrefix(msg, "Socket error on client "); ok {
		if id, ok := strings.CutSuffix(rest, ", disconnecting."); ok {
			closed(ev, id, SocketError, msg)
			return
		}
	}
	if rest, ok := strings.CutPrefix(msg, "Bad socket read/write on client "); ok {
		if i := strings.LastIndex(rest, ": "); i >= 0 {
			closed(ev, rest[:i], SocketError, msg)
			return
		}
	}
	for _, prefix := range mosquittoSkipped {
		if strings.HasPrefix(msg, prefix) {
			out.skip = true
			return
		}
	}
	if msg == "" {
		out.reject("message", "expected a message after the stamp, found none")
		return
	}
	out.reject("message", "expected one of Mosquitto's messages")
}

// mosquittoConnack reads "ID (SP, RC)" of Mosquitto's "Sending CONNACK
// to ID (SP, RC)" (log_type debug, src/send_connack.c) into ev as a
// Refused event when RC is not 0, and reports whether it did. Mosquitto
// names the client's address instead of its id when the id is not set
// yet (a refusal for a bad password): Client is then that address.
func mosquittoConnack(rest string, ev *Event) bool {
	i := strings.LastIndex(rest, " (")
	if i < 0 || !strings.HasSuffix(rest, ")") {
		return false
	}
	sp, rc, ok := strings.Cut(rest[i+2:len(rest)-1], ", ")
	if !ok || (sp != "0" && sp != "1") {
		return false
	}
	code, n := smallNumber(rc)
	if n != len(rc) || n == 0 || code == 0 || code > 255 {
		return false
	}
	ev.Kind, ev.Client, ev.Code = Refused, rest[:i], uint8(code)
	return true
}

// closed fills ev as a Closed event.
func closed(ev *Event, id string, r Reason, detail string) {
	if id == "<unknown>" { // Mosquitto's name for a connection that sent no CONNECT
		id = ""
	}
	ev.Kind, ev.Client, ev.Reason, ev.Detail = Closed, id, r, detail
}

// mosquittoConnected reads "ADDRESS as ID (p2, c1, k60[, u'USER'])." into
// ev. The address has no spaces; the id may hold anything, so it ends at
// the first " (" after which the rest of the line is the parameters.
func mosquittoConnected(rest string, ev *Event) bool {
	addr, rest, ok := strings.Cut(rest, " as ")
	if !ok || addr == "" || strings.ContainsAny(addr, " ") {
		return false
	}
	for i := 0; ; {
		j := strings.Index(rest[i:], " (")
		if j < 0 {
			return false
		}
		i += j
		if mosquittoParams(rest[i+2:], ev) {
			ev.Client, ev.Peer = rest[:i], addr
			return true
		}
		i += 2
	}
}

// mosquittoParams reads "[pN, ]cN, kN[, u'USER'])." into ev: Mosquitto
// 1.6 and later write the protocol (p2 for MQTT 3.1.1, p5 for MQTT 5),
// 1.5 does not; the username is there when the client gave one.
func mosquittoParams(s string, ev *Event) bool {
	body, ok := strings.CutSuffix(s, ").")
	if !ok {
		return false
	}
	if rest, ok := strings.CutPrefix(body, "p"); ok {
		_, n := smallNumber(rest)
		if n == 0 || !strings.HasPrefix(rest[n:], ", ") {
			return false
		}
		body = rest[n+2:]
	}
	rest, ok := strings.CutPrefix(body, "c")
	if !ok {
		return false
	}
	clean, n := smallNumber(rest)
	if n == 0 || !strings.HasPrefix(rest[n:], ", k") {
		return false
	}
	rest = rest[n+3:]
	keepalive, n := smallNumber(rest)
	if n == 0 {
		return false
	}
	rest = rest[n:]
	user := ""
	if rest != "" {
		u, ok := strings.CutPrefix(rest, ", u'")
		if !ok {
			return false
		}
		if user, ok = strings.CutSuffix(u, "'"); !ok {
			return false
		}
	}
	ev.Keepalive, ev.User, ev.Clean = keepalive, user, -1
	if clean != 0 {
		ev.Clean = 1
	}
	return true
}

// smallNumber reads up to 6 decimal digits at the start of s and returns
// their value and count (0 if s starts with no digit or has more).
func smallNumber(s string) (v, n int) {
	for n < len(s) && isDigit(s[n]) {
		if n == 6 {
			return 0, 0
		}
		v = v*10 + int(s[n]-'0')
		n++
	}
	return v, n
}
