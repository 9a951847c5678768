package brokerlog

import (
	"bytes"
	"encoding/json"
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
// (which differ in case: clientid and clientId).
func detectJSON(text []byte) Format {
	var m object
	if json.Unmarshal(text, &m) != nil {
		return Detect
	}
	for _, k := range []string{"eventType", "clientId", "sessionIdentifier", "principalIdentifier"} {
		if _, ok := m[k]; ok {
			return AWSIoT
		}
	}
	for _, k := range []string{"clientid", "peername", "connected_at", "disconnected_at"} {
		if _, ok := m[k]; ok {
			return EMQX
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

// emqx reads an EMQX rule-engine event (apps/emqx_rule_engine/src/
// emqx_rule_events.erl, eventmsg_connected and eventmsg_disconnected), as
// a rule that selects from "$events/client_connected" and
// "$events/client_disconnected" writes it. The "event" member is
// "client.connected" or "client.disconnected"; a rule that selected
// without it is read by its members (disconnected_at, reason:
// disconnected; connected_at: connected). Events of other kinds are
// skipped.
func (p *parser) emqx(text []byte, out *outcome) {
	var m struct {
		Event          json.RawMessage `json:"event"`
		ClientID       json.RawMessage `json:"clientid"`
		Username       json.RawMessage `json:"username"`
		Peername       json.RawMessage `json:"peername"`
		Keepalive      json.RawMessage `json:"keepalive"`
		CleanStart     json.RawMessage `json:"clean_start"`
		Reason         json.RawMessage `json:"reason"`
		ConnectedAt    json.RawMessage `json:"connected_at"`
		DisconnectedAt json.RawMessage `json:"disconnected_at"`
		Timestamp      json.RawMessage `json:"timestamp"`
	}
	if !decodeObject(text, &m, out) {
		return
	}
	ev := &out.ev
	event, _ := str(m.Event, "event", out)
	if out.why != "" {
		return
	}
	switch {
	case event == "client.connected":
		ev.Kind = Accepted
	case event == "client.disconnected":
		ev.Kind = Closed
	case event != "":
		out.skip = true // another event: message.publish, session.subscribed, client.connack, ...
		return
	case m.DisconnectedAt != nil || m.Reason != nil:
		ev.Kind = Closed
	case m.ConnectedAt != nil:
		ev.Kind = Accepted
	default:
		out.reject("event", "expected \"client.connected\" or \"client.disconnected\", or the members connected_at or disconnected_at")
		return
	}
	id, ok := str(m.ClientID, "clientid", out)
	if !ok {
		if out.why == "" {
			out.reject("clientid", "expected the client id, found none")
		}
		return
	}
	ev.Client = id
	stamp, raw := "connected_at", m.ConnectedAt
	if ev.Kind == Closed {
		stamp, raw = "disconnected_at", m.DisconnectedAt
	}
	if raw == nil {
		stamp, raw = "timestamp", m.Timestamp
	}
	if !millis(raw, stamp, ev, out) {
		if out.why == "" {
			out.reject(stamp, "expected Unix milliseconds, found none")
		}
		return
	}
	ev.Peer, _ = str(m.Peername, "peername", out)
	ev.User, _ = str(m.Username, "username", out)
	if ka, ok := integer(m.Keepalive, "keepalive", out); ok && ka >= 0 && ka <= 65535 {
		ev.Keepalive = int(ka)
	}
	if ev.Kind == Accepted {
		if clean, ok := boolean(m.CleanStart, "clean_start", out); ok {
			ev.Clean = -1
			if clean {
				ev.Clean = 1
			}
		}
	} else {
		ev.Detail, _ = str(m.Reason, "reason", out)
		ev.Reason = emqxReason(ev.Detail)
	}
}

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

// awsIoT reads an AWS IoT Core lifecycle event (the Developer Guide's
// "Lifecycle events"): the payload of $aws/events/presence/connected/ID
// and $aws/events/presence/disconnected/ID, as a rule writes it. Events of
// other types (subscribed, unsubscribed, connect_failed) are skipped.
func (p *parser) awsIoT(text []byte, out *outcome) {
	var m struct {
		EventType                 json.RawMessage `json:"eventType"`
		ClientID                  json.RawMessage `json:"clientId"`
		Timestamp                 json.RawMessage `json:"timestamp"`
		IPAddress                 json.RawMessage `json:"ipAddress"`
		PrincipalIdentifier       json.RawMessage `json:"principalIdentifier"`
		SessionIdentifier         json.RawMessage `json:"sessionIdentifier"`
		DisconnectReason          json.RawMessage `json:"disconnectReason"`
		ClientInitiatedDisconnect json.RawMessage `json:"clientInitiatedDisconnect"`
	}
	if !decodeObject(text, &m, out) {
		return
	}
	ev := &out.ev
	typ, ok := str(m.EventType, "eventType", out)
	switch {
	case out.why != "":
		return
	case !ok:
		out.reject("eventType", "expected \"connected\" or \"disconnected\", found none")
		return
	case typ == "connected":
		ev.Kind = Accepted
	case typ == "disconnected":
		ev.Kind = Closed
	default:
		out.skip = true
		return
	}
	id, ok := str(m.ClientID, "clientId", out)
	if !ok {
		if out.why == "" {
			out.reject("clientId", "expected the client id, found none")
		}
		return
	}
	ev.Client = id
	if !millis(m.Timestamp, "timestamp", ev, out) {
		if out.why == "" {
			out.reject("timestamp", "expected Unix milliseconds, found none")
		}
		return
	}
	ev.Peer, _ = str(m.IPAddress, "ipAddress", out)
	ev.User, _ = str(m.PrincipalIdentifier, "principalIdentifier", out)
	ev.Session, _ = str(m.SessionIdentifier, "sessionIdentifier", out)
	if ev.Kind == Closed {
		ev.Detail, _ = str(m.DisconnectReason, "disconnectReason", out)
		ev.Reason = awsReason(ev.Detail)
		if initiated, _ := boolean(m.ClientInitiatedDisconnect, "clientInitiatedDisconnect", out); ev.Reason == ReasonUnknown && initiated {
			ev.Reason = ClientDisconnect
		}
	}
}

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
