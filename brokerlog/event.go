package brokerlog

import (
	"fmt"
	"strconv"
	"time"
)

// Kind is what an event says happened. The zero value is not a valid kind.
type Kind uint8

// The kinds of event.
const (
	Accepted   Kind = iota + 1 // the broker accepted a connection: CONNACK success, "New client connected"
	Closed                     // a connection ended; Reason says how
	BrokerUp                   // the broker said it is running
	BrokerDown                 // the broker said it is terminating, or the recorder killed it
	Mark                       // a note the recorder wrote into the log; Detail holds it
	Refused                    // the broker answered a CONNECT with a refusal: a CONNACK whose reason code (Code) is not 0
	// Will: the connection the broker just accepted of Client declared a
	// Last Will, on the topic Detail holds (Mosquitto, log_type debug or
	// all: "Will message specified (N bytes) (rR, qQ)." and the topic on
	// the next line). The broker sends it when it ends the connection
	// other than on the client's DISCONNECT, and not when it dies.
	Will
	// Status: Client published to its own will's topic (Mosquitto,
	// log_type debug or all: "Received PUBLISH from ID (..., 'TOPIC', ...)"):
	// it said its presence itself, as a device that announces itself
	// "online" on each connect does.
	Status
)

var kindNames = [...]string{
	Accepted:   "accepted",
	Closed:     "closed",
	BrokerUp:   "broker-up",
	BrokerDown: "broker-down",
	Mark:       "mark",
	Refused:    "refused",
	Will:       "will",
	Status:     "status",
}

// String returns the kind's name, for example "broker-up".
func (k Kind) String() string {
	if k == 0 || int(k) >= len(kindNames) {
		return "Kind(" + strconv.Itoa(int(k)) + ")"
	}
	return kindNames[k]
}

// Reason says why a connection was closed. The zero value, ReasonUnknown,
// is what events of other kinds carry, and what a Closed event carries
// when the log does not say.
type Reason uint8

// The reasons. Each broker's own words are mapped onto these as
// docs/brokerlog.md tabulates; Event.Detail keeps the words.
const (
	ReasonUnknown    Reason = iota // the log does not say
	ClientDisconnect               // the client sent DISCONNECT (a normal, graceful close)
	KeepaliveTimeout               // the broker heard nothing for 1.5 keepalive periods
	SocketError                    // the connection ended without DISCONNECT: reset, EOF, I/O error
	Takeover                       // a new connection with the same client id closed this one
	ProtocolError                  // the client broke the protocol: malformed or oversize packet, bad sequence
	NotAuthorized                  // authentication or authorisation failed or expired
	AdminAction                    // an operator or a plugin closed it (kick, API, extension)
	ServerDisconnect               // the broker closed it for reasons of its own (shutdown, maintenance)
	ReasonOther                    // a reason the log gives that fits none of the above
)

var reasonNames = [...]string{
	ReasonUnknown:    "unknown",
	ClientDisconnect: "client-disconnect",
	KeepaliveTimeout: "keepalive-timeout",
	SocketError:      "socket-error",
	Takeover:         "takeover",
	ProtocolError:    "protocol-error",
	NotAuthorized:    "not-authorized",
	AdminAction:      "admin-action",
	ServerDisconnect: "server-disconnect",
	ReasonOther:      "other",
}

// String returns the reason's name, for example "keepalive-timeout".
func (r Reason) String() string {
	if int(r) >= len(reasonNames) {
		return "Reason(" + strconv.Itoa(int(r)) + ")"
	}
	return reasonNames[r]
}

// ParseReason returns the reason named s (as String writes it).
func ParseReason(s string) (Reason, bool) {
	for r, name := range reasonNames {
		if name == s {
			return Reason(r), true
		}
	}
	return 0, false
}

// Format is a broker log format. The zero value, Detect, asks Read to
// tell the format from the content.
type Format uint8

// The formats Read knows.
const (
	Detect    Format = iota // tell the format from the first lines
	Mosquitto               // Mosquitto's log: "EPOCH: message", a log_timestamp_format stamp, the corpus recorder's form, or behind a syslog prefix
	EMQX                    // EMQX rule-engine client_connected / client_disconnected events, one JSON object a line
	AWSIoT                  // AWS IoT Core lifecycle events: JSON lines or a JSON array
	HiveMQ                  // HiveMQ's event.log
)

var formatNames = [...]string{
	Detect:    "detect",
	Mosquitto: "mosquitto",
	EMQX:      "emqx",
	AWSIoT:    "aws-iot",
	HiveMQ:    "hivemq",
}

// String returns the format's name, for example "aws-iot".
func (f Format) String() string {
	if int(f) >= len(formatNames) {
		return "Format(" + strconv.Itoa(int(f)) + ")"
	}
	return formatNames[f]
}

// ParseFormat returns the format named s (as String writes it).
func ParseFormat(s string) (Format, error) {
	for f, name := range formatNames {
		if name == s {
			return Format(f), nil
		}
	}
	return 0, fmt.Errorf("brokerlog: unknown format %q (want detect, mosquitto, emqx, aws-iot or hivemq)", s)
}

// Event is one thing a broker log says happened, in the same terms
// whichever broker wrote it.
type Event struct {
	// At is when it happened, in nanoseconds since the Unix epoch (UTC).
	At int64
	// Res is the resolution of the stamp At was read from: 1 s for
	// Mosquitto's epoch and log_timestamp_format stamps (10^-n s for a
	// fraction of n digits), 1 µs for the corpus recorder's, 1 ms for
	// EMQX's, AWS IoT's and HiveMQ's. The event happened in
	// [At-Late, At+Res).
	Res time.Duration
	// Late is how much later than the event its stamp may be: 0 but for a
	// stamp taken when the line was read (the corpus recorder's), which a
	// loaded machine may take late. Mosquitto's own stamp on the same line
	// bounds it: the line was written in that second, so Late is the time
	// from the second's start to the recorder's stamp.
	Late time.Duration
	// Kind is what happened.
	Kind Kind
	// Client is the MQTT client id, as the broker wrote it; "" for events
	// that concern no client, and for a connection the broker could not
	// name (Mosquitto's "<unknown>", HiveMQ's "UNKNOWN").
	Client string
	// Reason says why a Closed connection ended.
	Reason Reason
	// Detail holds the broker's own words: Mosquitto's message, EMQX's
	// reason, AWS IoT's disconnectReason, HiveMQ's reason text; for a
	// Mark, the recorder's note.
	Detail string
	// Peer is the client's address as the broker wrote it: "ip:port", or
	// only the ip where the log gives no port (AWS IoT, HiveMQ, Mosquitto
	// 1.x); "" when not given.
	Peer string
	// User is the username (Mosquitto, EMQX) or principal (AWS IoT) the
	// connection authenticated as; "" when not given.
	User string
	// Session is the broker's id for the connection where the log gives
	// one (AWS IoT's sessionIdentifier).
	Session string
	// Keepalive is the keepalive in seconds the client declared when it
	// connected; 0 when not given (or when the client asked for none).
	Keepalive int
	// Clean is +1 when the client asked for a clean session (MQTT 3) or a
	// clean start (MQTT 5), -1 when it did not, and 0 when the log does
	// not say.
	Clean int8
	// Code is the reason code of a Refused event's CONNACK (MQTT 3.1.1:
	// 1 to 5; MQTT 5: 128 and above); 0 for other kinds.
	Code uint8
	// Line is where the event was read: the 1-based line of the file, or
	// for a JSON array the line on which its element starts.
	Line int
}

// Time returns At as a time.Time in UTC.
func (e Event) Time() time.Time { return time.Unix(0, e.At).UTC() }

// Reject is a record Read did not understand.
type Reject struct {
	Line   int    // 1-based line (for a JSON array, the line its element starts on)
	Field  string // what was wrong: "stamp", "message", a JSON member's name, or "" for the record as a whole
	Reason string // what was expected and what was found
	Text   string // the record verbatim, cut to MaxRejectText bytes
	Length int    // the record's full length in bytes
}

// String returns "line N: field: reason".
func (r Reject) String() string {
	s := "line " + strconv.Itoa(r.Line) + ": "
	if r.Field != "" {
		s += r.Field + ": "
	}
	return s + r.Reason
}
