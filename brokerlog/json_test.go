package brokerlog

import (
	"strings"
	"testing"
	"time"
)

// TestEMQXLines reads EMQX rule-engine events with the members
// emqx_rule_events.erl gives them (eventmsg_connected,
// eventmsg_disconnected; the examples of columns_with_exam), as a rule
// selecting "*" from "$events/client_connected" and
// "$events/client_disconnected" writes them.
func TestEMQXLines(t *testing.T) {
	tests := []struct {
		line string
		want want
	}{
		{`{"event":"client.connected","clientid":"c_emqx","username":"u_emqx","mountpoint":null,"peername":"192.168.0.10:56431","sockname":"0.0.0.0:1883","proto_name":"MQTT","proto_ver":5,"keepalive":60,"clean_start":true,"expiry_interval":3600,"is_bridge":false,"conn_props":{"User-Property":{"foo":"bar"}},"connected_at":1645002753259,"timestamp":1645002753261,"node":"emqx@127.0.0.1","client_attrs":{}}`,
			want{kind: Accepted, client: "c_emqx", user: "u_emqx", peer: "192.168.0.10:56431", keepalive: 60, clean: 1,
				at: "2022-02-16T09:12:33.259Z", res: time.Millisecond}},
		{`{"event":"client.disconnected","reason":"normal","clientid":"c_emqx","username":"u_emqx","peername":"192.168.0.10:56431","sockname":"0.0.0.0:1883","proto_name":"MQTT","proto_ver":5,"disconn_props":{},"connected_at":1645002753259,"disconnected_at":1645003578536,"timestamp":1645003578537,"node":"emqx@127.0.0.1"}`,
			want{kind: Closed, client: "c_emqx", user: "u_emqx", peer: "192.168.0.10:56431", reason: ClientDisconnect,
				at: "2022-02-16T09:26:18.536Z", detail: "normal"}},
		{`{"event":"client.disconnected","reason":"takenover","clientid":"c","disconnected_at":1645003578536}`,
			want{kind: Closed, client: "c", reason: Takeover}},
		{`{"event":"client.disconnected","reason":"discarded","clientid":"c","disconnected_at":1645003578536}`,
			want{kind: Closed, client: "c", reason: Takeover}},
		{`{"event":"client.disconnected","reason":"keepalive_timeout","clientid":"c","disconnected_at":1645003578536}`,
			want{kind: Closed, client: "c", reason: KeepaliveTimeout}},
		{`{"event":"client.disconnected","reason":"sock_closed","clientid":"c","disconnected_at":1645003578536}`,
			want{kind: Closed, client: "c", reason: SocketError}},
		{`{"event":"client.disconnected","reason":"tcp_closed","clientid":"c","disconnected_at":1645003578536}`,
			want{kind: Closed, client: "c", reason: SocketError}},
		{`{"event":"client.disconnected","reason":"kicked","clientid":"c","disconnected_at":1645003578536}`,
			want{kind: Closed, client: "c", reason: AdminAction}},
		{`{"event":"client.disconnected","reason":"not_authorized","clientid":"c","disconnected_at":1645003578536}`,
			want{kind: Closed, client: "c", reason: NotAuthorized}},
		{`{"event":"client.disconnected","reason":"protocol_error","clientid":"c","disconnected_at":1645003578536}`,
			want{kind: Closed, client: "c", reason: ProtocolError}},
		{`{"event":"client.disconnected","reason":"internal_error","clientid":"c","disconnected_at":1645003578536}`,
			want{kind: Closed, client: "c", reason: ReasonOther}},
		{`{"event":"client.disconnected","clientid":"c","timestamp":1645003578536}`,
			want{kind: Closed, client: "c", at: "2022-02-16T09:26:18.536Z"}},
		// a rule that selected some members, without "event"
		{`{"clientid":"c","reason":"normal","disconnected_at":1645003578536}`, want{kind: Closed, client: "c", reason: ClientDisconnect}},
		{`{"clientid":"c","connected_at":"1645003578536","keepalive":30,"clean_start":false}`,
			want{kind: Accepted, client: "c", keepalive: 30, clean: -1, at: "2022-02-16T09:26:18.536Z"}},
		// other events
		{`{"event":"client.connack","reason_code":"success","clientid":"c","timestamp":1645003578536}`, want{skip: true}},
		{`{"event":"message.publish","clientid":"c","topic":"t/a","payload":"x","timestamp":1645003578536}`, want{skip: true}},

		{`{"event":"client.connected","connected_at":1645002753259}`, want{reject: "clientid"}},
		{`{"event":"client.connected","clientid":7,"connected_at":1645002753259}`, want{reject: "clientid"}},
		{`{"event":"client.connected","clientid":"c"}`, want{reject: "timestamp"}},
		// which of two client ids would the broker mean? (encoding/json takes the last)
		{`{"event":"client.connected","clientid":"a","clientid":"b","connected_at":1645002753259}`, want{reject: "clientid"}},
		{`{"event":"client.connected","clientid":"a","ClientID":"b","connected_at":1645002753259}`, want{reject: "ClientID"}},
		{`{"event":"client.connected","clientid":"c","connected_at":-1}`, want{reject: "connected_at"}},
		{`{"event":"client.connected","clientid":"c","connected_at":1.5e12}`, want{reject: "connected_at"}},
		{`{"event":"client.connected","clientid":"c","connected_at":99999999999999999999}`, want{reject: "connected_at"}},
		{`{"event":"client.connected","clientid":"c","connected_at":1645002753259,"peername":1}`, want{reject: "peername"}},
		{`{"event":5}`, want{reject: "event"}},
		{`{"clientid":"c"}`, want{reject: "event"}},
		{`["client.connected"]`, want{reject: "-"}},
		{`{"clientid":"c",`, want{reject: "-"}},
		{`null`, want{reject: "-"}},
	}
	for _, tt := range tests {
		check(t, tt.line, parseOne(EMQX, nil, tt.line), tt.want)
	}
}

// TestAWSIoTLines reads AWS IoT Core lifecycle events with the members
// the Developer Guide's "Lifecycle events" page lists and the reasons of
// its disconnectReason table.
func TestAWSIoTLines(t *testing.T) {
	tests := []struct {
		line string
		want want
	}{
		{`{"clientId":"186b5","timestamp":1573002230757,"eventType":"connected","sessionIdentifier":"a4666d2a7d844ae4ac5d7b38c9cb7967","principalIdentifier":"12345678901234567890123456789012","ipAddress":"192.0.2.0","versionNumber":0}`,
			want{kind: Accepted, client: "186b5", peer: "192.0.2.0", user: "12345678901234567890123456789012",
				at: "2019-11-06T01:03:50.757Z", res: time.Millisecond}},
		{`{"clientId":"186b5","timestamp":1573002340451,"eventType":"disconnected","sessionIdentifier":"a4666d2a7d844ae4ac5d7b38c9cb7967","principalIdentifier":"12345678901234567890123456789012","clientInitiatedDisconnect":true,"disconnectReason":"CLIENT_INITIATED_DISCONNECT","versionNumber":0}`,
			want{kind: Closed, client: "186b5", user: "12345678901234567890123456789012", reason: ClientDisconnect, detail: "CLIENT_INITIATED_DISCONNECT"}},
		{`{"clientId":"c","timestamp":1573002340451,"eventType":"disconnected","disconnectReason":"MQTT_KEEP_ALIVE_TIMEOUT"}`,
			want{kind: Closed, client: "c", reason: KeepaliveTimeout}},
		{`{"clientId":"c","timestamp":1573002340451,"eventType":"disconnected","disconnectReason":"DUPLICATE_CLIENTID"}`,
			want{kind: Closed, client: "c", reason: Takeover}},
		{`{"clientId":"c","timestamp":1573002340451,"eventType":"disconnected","disconnectReason":"CONNECTION_LOST"}`,
			want{kind: Closed, client: "c", reason: SocketError}},
		{`{"clientId":"c","timestamp":1573002340451,"eventType":"disconnected","disconnectReason":"CLIENT_ERROR"}`,
			want{kind: Closed, client: "c", reason: ProtocolError}},
		{`{"clientId":"c","timestamp":1573002340451,"eventType":"disconnected","disconnectReason":"AUTH_ERROR"}`,
			want{kind: Closed, client: "c", reason: NotAuthorized}},
		{`{"clientId":"c","timestamp":1573002340451,"eventType":"disconnected","disconnectReason":"API_INITIATED_DISCONNECT"}`,
			want{kind: Closed, client: "c", reason: AdminAction}},
		{`{"clientId":"c","timestamp":1573002340451,"eventType":"disconnected","disconnectReason":"SERVER_INITIATED_DISCONNECT"}`,
			want{kind: Closed, client: "c", reason: ServerDisconnect}},
		{`{"clientId":"c","timestamp":1573002340451,"eventType":"disconnected","disconnectReason":"THROTTLED"}`,
			want{kind: Closed, client: "c", reason: ReasonOther}},
		{`{"clientId":"c","timestamp":1573002340451,"eventType":"disconnected","clientInitiatedDisconnect":true}`,
			want{kind: Closed, client: "c", reason: ClientDisconnect}},
		{`{"clientId":"c","timestamp":1573002340451,"eventType":"subscribed","topics":["a/b"]}`, want{skip: true}},

		{`{"clientId":"c","timestamp":1573002340451}`, want{reject: "eventType"}},
		{`{"timestamp":1573002340451,"eventType":"connected"}`, want{reject: "clientId"}},
		{`{"clientId":"c","eventType":"connected"}`, want{reject: "timestamp"}},
		{`{"clientId":"c","timestamp":"soon","eventType":"connected"}`, want{reject: "timestamp"}},
		{`{"clientId":"c","timestamp":1573002340451,"eventType":"disconnected","clientInitiatedDisconnect":"yes"}`,
			want{reject: "clientInitiatedDisconnect"}},
		{`not json`, want{reject: "-"}},
	}
	for _, tt := range tests {
		check(t, tt.line, parseOne(AWSIoT, nil, tt.line), tt.want)
	}
}

// TestJSONArray reads AWS IoT events as a JSON array: each element is a
// record, on the line it starts; a bad element is one reject and the
// next is still read.
func TestJSONArray(t *testing.T) {
	const ev = `{"clientId":"c","timestamp":1573002230757,"eventType":"connected"}`
	tests := []struct {
		name    string
		in      string
		events  int
		rejects []int // the lines of the rejects
		lines   []int // the lines of the events
	}{
		{"one line", "[" + ev + "," + ev + "]", 2, nil, []int{1, 1}},
		{"pretty", "[\n  " + ev + ",\n  " + ev + "\n]\n", 2, nil, []int{2, 3}},
		{"empty", "[]", 0, nil, nil},
		{"bad element", "[\n" + ev + ",\n{\"clientId\":\"c\"},\n" + ev + "\n]", 2, []int{3}, []int{2, 4}},
		{"scalar element", "[\n" + ev + ",\n42,\n\"x\",\n" + ev + "]", 2, []int{3, 4}, []int{2, 5}},
		{"strings with brackets", "[{\"clientId\":\"c]}\\\"[{\",\"timestamp\":1,\"eventType\":\"connected\"}]", 1, nil, []int{1}},
		{"not closed", "[\n" + ev + ",\n" + ev, 2, []int{3}, []int{2, 3}},
		{"cut short", "[\n" + ev + ",\n{\"clientId\":\"c\",", 1, []int{3}, []int{2}},
		{"trailing", "[" + ev + "]\nmore", 1, []int{2}, []int{1}},
		{"syntax error", "[" + ev + ",{\"a\" 1}]", 1, []int{1}, []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, err := Read(strings.NewReader(tt.in), "array.json", Options{Format: AWSIoT})
			if err != nil {
				t.Fatal(err)
			}
			var lines []int
			for _, e := range log.Events {
				lines = append(lines, e.Line)
			}
			var rejects []int
			for _, r := range log.Rejects {
				rejects = append(rejects, r.Line)
			}
			if len(log.Events) != tt.events || !equalInts(lines, tt.lines) || !equalInts(rejects, tt.rejects) {
				t.Errorf("events on lines %v, rejects on lines %v (%v); want %v and %v", lines, rejects, log.Rejects, tt.lines, tt.rejects)
			}
			checkAccounting(t, log)
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestJSONDialects: each dialect names its members so that encoding/json
// tells them apart (no two the same but for case), and says what jsonEvent
// and detectJSON need of it.
func TestJSONDialects(t *testing.T) {
	for _, d := range []*jsonDialect{&emqxEvents, &awsIoTEvents} {
		for i, a := range d.names {
			for _, b := range d.names[i+1:] {
				if a != "" && strings.EqualFold(a, b) {
					t.Errorf("%v: members %q and %q are one to encoding/json", d.format, a, b)
				}
			}
		}
		for _, k := range []jsonMember{memberEvent, memberClient, memberTimestamp, memberReason} {
			if d.names[k] == "" {
				t.Errorf("%v: member %d has no name", d.format, k)
			}
		}
		for _, k := range d.telling {
			if d.names[k] == "" {
				t.Errorf("%v: telling member %d has no name", d.format, k)
			}
		}
		if d.connected == "" || d.disconnected == "" || d.noEvent == "" || d.reason == nil {
			t.Errorf("%v: incomplete: %+v", d.format, d)
		}
	}
}
