package brokerlog

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// object is a JSON object's members, undecoded: what detection looks at.
type object map[string]json.RawMessage

// decodeObject decodes text, which must be one JSON object, into the
// struct v of json.RawMessage fields.
func decodeObject(text []byte, v any, out *outcome) bool {
	trimmed := bytes.TrimLeft(text, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		out.reject("", "expected a JSON object, found "+found(text))
		return false
	}
	if err := json.Unmarshal(text, v); err != nil {
		out.reject("", "expected a JSON object: "+err.Error())
		return false
	}
	if k, ok := repeatedMember(text); ok {
		out.reject(k, "expected each member once, found "+strconv.Quote(k)+" twice (which one would the broker mean?)")
		return false
	}
	return true
}

// repeatedMember returns a member name the object text (valid JSON)
// holds twice at its top level, compared as encoding/json matches them
// to fields (case-insensitively); ok is false when none repeats.
func repeatedMember(text []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(text))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", false
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return "", false
		}
		k, _ := t.(string)
		if seen[strings.ToLower(k)] {
			return k, true
		}
		seen[strings.ToLower(k)] = true
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return "", false
		}
	}
	return "", false
}

// detectJSON tells EMQX's events from AWS IoT's by their member names
// (which differ in case: clientid and clientId), AWS IoT's first.
func detectJSON(text []byte) Format {
	var m object
	if json.Unmarshal(text, &m) != nil {
		return Detect
	}
	for _, d := range [...]*jsonDialect{&awsIoTEvents, &emqxEvents} {
		for _, k := range d.telling {
			if _, ok := m[d.names[k]]; ok {
				return d.format
			}
		}
	}
	return Detect
}

// present reports whether a member was given (and is not null).
func present(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// str returns the string member named k; ok is false when it is absent
// or null. A member of another type sets out's reject.
func str(raw json.RawMessage, k string, out *outcome) (string, bool) {
	if !present(raw) {
		return "", false
	}
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : n-1]), true // no escapes: the text is the value (the decoder checked the syntax)
	}
	var v string // on the heap (json.Unmarshal keeps &v), so only here
	if err := json.Unmarshal(raw, &v); err != nil {
		out.reject(k, "expected a string, found "+found(raw))
		return "", false
	}
	return v, true
}

// integer returns the integer member named k, written as a JSON number
// or as a string of digits.
func integer(raw json.RawMessage, k string, out *outcome) (v int64, ok bool) {
	if !present(raw) {
		return 0, false
	}
	s := string(raw)
	if len(s) >= 2 && s[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			s = ""
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		out.reject(k, "expected an integer, found "+found(raw))
		return 0, false
	}
	return v, true
}

// boolean returns the boolean member named k.
func boolean(raw json.RawMessage, k string, out *outcome) (v, ok bool) {
	switch string(raw) {
	case "", "null":
		return false, false
	case "true":
		return true, true
	case "false":
		return false, true
	}
	out.reject(k, "expected true or false, found "+found(raw))
	return false, false
}

// millis reads the Unix millisecond stamp named k into ev.
func millis(raw json.RawMessage, k string, ev *Event, out *outcome) bool {
	v, ok := integer(raw, k, out)
	if !ok {
		return false
	}
	if v < 0 || v > maxEpochMillis {
		out.reject(k, "expected Unix milliseconds between 0 and "+strconv.FormatInt(maxEpochMillis, 10)+", found "+strconv.FormatInt(v, 10))
		return false
	}
	ev.At, ev.Res = v*int64(time.Millisecond), time.Millisecond
	return true
}

// found describes a JSON value for an error message, cut short.
func found(raw []byte) string {
	s := string(raw)
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return s
}

// A jsonMember is one thing a JSON connection event may say; a
// jsonDialect names the member that says it.
type jsonMember int

const (
	memberEvent           jsonMember = iota // the kind of event
	memberClient                            // the client id
	memberConnectedAt                       // when a connection was made (Unix ms)
	memberDisconnectedAt                    // when a connection ended (Unix ms)
	memberTimestamp                         // when the event happened, without the above
	memberPeer                              // the client's address
	memberUser                              // its user name or principal
	memberSession                           // its session
	memberKeepalive                         // its keepalive, in seconds
	memberCleanStart                        // whether it connected with clean start
	memberReason                            // why a connection ended
	memberClientInitiated                   // whether the client ended it
	nMembers
)

// A jsonDialect is one broker's JSON connection events, as data: which
// member says what, how the event member names a connection and a
// disconnection, and what a disconnect reason means. jsonEvent reads
// every dialect the same way.
type jsonDialect struct {
	format Format
	// names holds the name of each member, "" where the dialect has
	// none. An event's members are matched to them as encoding/json
	// matches members to a struct's fields, case-insensitively: decode
	// builds that struct.
	names [nMembers]string
	// telling are the members whose names, exactly as written, tell the
	// dialect's events from the other's (detectJSON).
	telling []jsonMember
	// connected and disconnected are the event member's values for the
	// two kinds; events of other kinds are skipped.
	connected, disconnected string
	// byMembers: an event without the event member, or with it "", is
	// told by the members it has (a disconnection's stamp or reason make
	// it a disconnection, a connection's stamp a connection), where
	// otherwise it is rejected (without the member) or skipped ("").
	byMembers bool
	// noEvent is the rejection of an event whose kind is not told.
	noEvent string
	// reason maps the reason member of a disconnection to a Reason.
	reason func(string) Reason

	fields reflect.Type // a struct of a json.RawMessage for each name, tagged with it
}

// newJSONDialect returns d with the struct type its events decode into.
func newJSONDialect(d jsonDialect) jsonDialect {
	var fields []reflect.StructField
	for _, name := range d.names {
		if name != "" {
			fields = append(fields, reflect.StructField{
				Name: "M" + strconv.Itoa(len(fields)),
				Type: reflect.TypeFor[json.RawMessage](),
				Tag:  reflect.StructTag(`json:"` + name + `"`),
			})
		}
	}
	d.fields = reflect.StructOf(fields)
	return d
}

// decode decodes text, which must be one JSON object, into its members:
// nil for those it does not have and those the dialect does not name.
func (d *jsonDialect) decode(text []byte, out *outcome) (m [nMembers]json.RawMessage, ok bool) {
	v := reflect.New(d.fields)
	if !decodeObject(text, v.Interface(), out) {
		return m, false
	}
	v, k := v.Elem(), 0
	for i, name := range d.names {
		if name != "" {
			m[i] = v.Field(k).Bytes()
			k++
		}
	}
	return m, true
}

// jsonEvent reads one connection event of the dialect d.
func (p *parser) jsonEvent(d *jsonDialect, text []byte, out *outcome) {
	m, ok := d.decode(text, out)
	if !ok {
		return
	}
	ev, name := &out.ev, &d.names
	event, ok := str(m[memberEvent], name[memberEvent], out)
	switch {
	case out.why != "":
		return
	case event == d.connected:
		ev.Kind = Accepted
	case event == d.disconnected:
		ev.Kind = Closed
	case event == "" && d.byMembers:
		switch {
		case m[memberDisconnectedAt] != nil || m[memberReason] != nil:
			ev.Kind = Closed
		case m[memberConnectedAt] != nil:
			ev.Kind = Accepted
		default:
			out.reject(name[memberEvent], d.noEvent)
			return
		}
	case !ok:
		out.reject(name[memberEvent], d.noEvent)
		return
	default:
		out.skip = true
		return
	}
	id, ok := str(m[memberClient], name[memberClient], out)
	if !ok {
		if out.why == "" {
			out.reject(name[memberClient], "expected the client id, found none")
		}
		return
	}
	ev.Client = id
	stamp := memberConnectedAt
	if ev.Kind == Closed {
		stamp = memberDisconnectedAt
	}
	if m[stamp] == nil {
		stamp = memberTimestamp
	}
	if !millis(m[stamp], name[stamp], ev, out) {
		if out.why == "" {
			out.reject(name[stamp], "expected Unix milliseconds, found none")
		}
		return
	}
	ev.Peer, _ = str(m[memberPeer], name[memberPeer], out)
	ev.User, _ = str(m[memberUser], name[memberUser], out)
	ev.Session, _ = str(m[memberSession], name[memberSession], out)
	if ka, ok := integer(m[memberKeepalive], name[memberKeepalive], out); ok && ka >= 0 && ka <= 65535 {
		ev.Keepalive = int(ka)
	}
	if ev.Kind == Accepted {
		if clean, ok := boolean(m[memberCleanStart], name[memberCleanStart], out); ok {
			ev.Clean = -1
			if clean {
				ev.Clean = 1
			}
		}
		return
	}
	ev.Detail, _ = str(m[memberReason], name[memberReason], out)
	ev.Reason = d.reason(ev.Detail)
	if initiated, _ := boolean(m[memberClientInitiated], name[memberClientInitiated], out); ev.Reason == ReasonUnknown && initiated {
		ev.Reason = ClientDisconnect
	}
}

// emqxEvents are EMQX's rule-engine events (apps/emqx_rule_engine/src/
// emqx_rule_events.erl, eventmsg_connected and eventmsg_disconnected), as
// a rule that selects from "$events/client_connected" and
// "$events/client_disconnected" writes them. The "event" member is
// "client.connected" or "client.disconnected"; a rule that selected
// without it is read by its members (disconnected_at, reason:
// disconnected; connected_at: connected). Events of other kinds
// (message.publish, session.subscribed, client.connack, ...) are skipped.
var emqxEvents = newJSONDialect(jsonDialect{
	format: EMQX,
	names: [nMembers]string{
		memberEvent:          "event",
		memberClient:         "clientid",
		memberConnectedAt:    "connected_at",
		memberDisconnectedAt: "disconnected_at",
		memberTimestamp:      "timestamp",
		memberPeer:           "peername",
		memberUser:           "username",
		memberKeepalive:      "keepalive",
		memberCleanStart:     "clean_start",
		memberReason:         "reason",
	},
	telling:      []jsonMember{memberClient, memberPeer, memberConnectedAt, memberDisconnectedAt},
	connected:    "client.connected",
	disconnected: "client.disconnected",
	byMembers:    true,
	noEvent:      `expected "client.connected" or "client.disconnected", or the members connected_at or disconnected_at`,
	reason:       emqxReason,
})

// emqxReason maps an EMQX disconnect reason to a Reason. EMQX gives the
// shutdown reason of the connection process: normal (the client's
// DISCONNECT with reason code 0), the name of another DISCONNECT reason
// code (emqx_reason_codes.erl), takenover and discarded (a new connection
// with the same client id resumed or discarded the session), kicked,
// keepalive_timeout, sock_closed (tcp_closed in EMQX 4), and others.
func emqxReason(r string) Reason {
	switch r {
	case "":
		return ReasonUnknown
	case "normal", "disconnect_with_will_message", "normal_disconnection":
		return ClientDisconnect
	case "keepalive_timeout":
		return KeepaliveTimeout
	case "sock_closed", "tcp_closed", "ssl_closed", "closed", "sock_error", "tcp_error", "ssl_error",
		"econnreset", "etimedout", "epipe", "enotconn", "einval", "ehostunreach", "econnaborted":
		return SocketError
	case "takenover", "takeovered", "discarded", "session_taken_over":
		return Takeover
	case "kicked", "administrative_action":
		return AdminAction
	case "not_authorized", "auth_expired", "authentication_expired", "bad_username_or_password", "banned",
		"bad_authentication_method":
		return NotAuthorized
	case "protocol_error", "malformed_packet", "frame_too_large", "packet_too_large", "topic_alias_invalid",
		"receive_maximum_exceeded", "unexpected_packet", "payload_format_invalid", "qos_not_supported",
		"retain_not_supported", "topic_name_invalid", "topic_filter_invalid":
		return ProtocolError
	case "server_shutting_down", "shutdown", "server_busy", "server_unavailable":
		return ServerDisconnect
	}
	return ReasonOther
}

// awsIoTEvents are AWS IoT Core's lifecycle events (the Developer Guide's
// "Lifecycle events"): the payloads of $aws/events/presence/connected/ID
// and $aws/events/presence/disconnected/ID, as a rule writes them. Events
// of other types (subscribed, unsubscribed, connect_failed) are skipped.
var awsIoTEvents = newJSONDialect(jsonDialect{
	format: AWSIoT,
	names: [nMembers]string{
		memberEvent:           "eventType",
		memberClient:          "clientId",
		memberTimestamp:       "timestamp",
		memberPeer:            "ipAddress",
		memberUser:            "principalIdentifier",
		memberSession:         "sessionIdentifier",
		memberReason:          "disconnectReason",
		memberClientInitiated: "clientInitiatedDisconnect",
	},
	telling:      []jsonMember{memberEvent, memberClient, memberSession, memberUser},
	connected:    "connected",
	disconnected: "disconnected",
	noEvent:      `expected "connected" or "disconnected", found none`,
	reason:       awsReason,
})

// awsReason maps an AWS IoT disconnectReason to a Reason.
func awsReason(r string) Reason {
	switch strings.ToUpper(r) {
	case "":
		return ReasonUnknown
	case "CLIENT_INITIATED_DISCONNECT":
		return ClientDisconnect
	case "MQTT_KEEP_ALIVE_TIMEOUT":
		return KeepaliveTimeout
	case "CONNECTION_LOST":
		return SocketError
	case "DUPLICATE_CLIENTID":
		return Takeover
	case "CLIENT_ERROR":
		return ProtocolError
	case "AUTH_ERROR", "FORBIDDEN_ACCESS", "CUSTOMAUTH_TTL_EXPIRATION":
		return NotAuthorized
	case "API_INITIATED_DISCONNECT":
		return AdminAction
	case "SERVER_INITIATED_DISCONNECT", "SERVER_ERROR":
		return ServerDisconnect
	}
	return ReasonOther // THROTTLED, WEBSOCKET_TTL_EXPIRATION, ...
}
