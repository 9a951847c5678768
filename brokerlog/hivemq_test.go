package brokerlog

import (
	"testing"
	"time"
)

// TestHiveMQLines reads event.log lines as HiveMQ writes them: the
// messages of com.hivemq.logging.EventLog (hivemq-community-edition) with
// the reasons of com.hivemq.util.ReasonStrings, behind the stamp of the
// EVENT-FILE appender's pattern "%-24(%d)- %msg%n%ex" in conf/logback.xml.
func TestHiveMQLines(t *testing.T) {
	tests := []struct {
		line string
		want want
	}{
		{"2026-12-01 15:15:18,123 - Client ID: sensor-1, IP: 10.0.4.17, Clean Start: true, Session Expiry: 0 connected.",
			want{kind: Accepted, client: "sensor-1", peer: "10.0.4.17", clean: 1, at: "2026-12-01T15:15:18.123Z", res: time.Millisecond}},
		{"2026-12-01 15:15:18,123 - Client ID: sensor-1, IP: 10.0.4.17, Clean Start: false, Session Expiry: 4294967295 connected.",
			want{kind: Accepted, client: "sensor-1", peer: "10.0.4.17", clean: -1}},
		{"2026-12-01 15:15:18,123 - Client ID: a, IP: b, IP: 10.0.4.17, Clean Start: UNKNOWN, Session Expiry: UNKNOWN connected.",
			want{kind: Accepted, client: "a, IP: b", peer: "10.0.4.17"}},
		{"2026-12-01 15:15:18,123 - Client ID: UNKNOWN, IP: UNKNOWN, Clean Start: true, Session Expiry: 0 connected.",
			want{kind: Accepted, clean: 1}},
		{"2026-12-01 15:15:19,001 - Client ID: sensor-1, IP: 10.0.4.17 disconnected gracefully.",
			want{kind: Closed, client: "sensor-1", peer: "10.0.4.17", reason: ClientDisconnect}},
		{"2026-12-01 15:15:19,001 - Client ID: sensor-1, IP: 10.0.4.17 disconnected gracefully. Reason given by client: bye, IP: x disconnected ungracefully.",
			want{kind: Closed, client: "sensor-1", peer: "10.0.4.17", reason: ClientDisconnect, detail: "bye, IP: x disconnected ungracefully."}},
		{"2026-12-01 15:15:19,001 - Client ID: sensor-1, IP: 10.0.4.17 disconnected ungracefully.",
			want{kind: Closed, client: "sensor-1", peer: "10.0.4.17", reason: SocketError}},
		{"2026-12-01 15:15:19,001 - Client ID: sensor-1, IP: 10.0.4.17 disconnected ungracefully from TCP Listener on port: 1883.",
			want{kind: Closed, client: "sensor-1", peer: "10.0.4.17", reason: SocketError}},
		{"2026-12-01 15:15:19,001 - Client ID: sensor-1, IP: 10.0.4.17 was disconnected. reason: Another client connected with the same client id..",
			want{kind: Closed, client: "sensor-1", peer: "10.0.4.17", reason: Takeover, detail: "Another client connected with the same client id."}},
		{"2026-12-01 15:15:19,001 - Client ID: s, IP: 10.0.4.17 was disconnected. reason: The client was idle for too long without sending an MQTT control packet..",
			want{kind: Closed, client: "s", peer: "10.0.4.17", reason: KeepaliveTimeout}},
		{"2026-12-01 15:15:19,001 - Client ID: s, IP: 10.0.4.17 was disconnected. reason: Re-authentication failed, authenticator timed out.",
			want{kind: Closed, client: "s", peer: "10.0.4.17", reason: NotAuthorized}},
		{"2026-12-01 15:15:19,001 - Client ID: s, IP: 10.0.4.17 was disconnected. reason: Disconnected via extension system.",
			want{kind: Closed, client: "s", peer: "10.0.4.17", reason: AdminAction}},
		{"2026-12-01 15:15:19,001 - Client ID: s, IP: 10.0.4.17 was disconnected. reason: PUBACK with incorrect fixed header was sent..",
			want{kind: Closed, client: "s", peer: "10.0.4.17", reason: ProtocolError}},
		{"2026-12-01 15:15:19,001 - Client ID: s, IP: 10.0.4.17 was disconnected. reason: Connect timed out..",
			want{kind: Closed, client: "s", peer: "10.0.4.17", reason: ReasonOther}},
		{"2026-12-01 15:15:19,001 - Outgoing publish message was dropped. Receiving client: s, topic: t, qos: 1, reason: The client message queue is full.",
			want{skip: true}},
		{"2026-12-01 15:15:19,001 - Outgoing MQTT packet was dropped. Receiving client: s, messageType: PUBREL, reason: queue full.", want{skip: true}},
		{"2026-12-01 15:15:19,001 - Received AUTH from Client ID: s, IP: 10.0.4.17, reason code: CONTINUE_AUTHENTICATION.", want{skip: true}},
		{"2026-12-01 15:15:19,001 - Client ID: s session has expired at 2026-12-01 17:15:19. All persistent data for this client has been removed.",
			want{skip: true}},

		{"2026-12-01 15:15:19,001 - Client ID: s, IP: 10.0.4.17 did something new.", want{reject: "message"}},
		{"2026-12-01 15:15:19,001 - HiveMQ 2030 says hello", want{reject: "message"}},
		{"2026-12-01 15:15:19 - Client ID: s, IP: 10.0.4.17 disconnected gracefully.", want{reject: "stamp"}},
		{"\tat com.hivemq.Something.method(Something.java:42)", want{reject: "stamp"}},
	}
	for _, tt := range tests {
		check(t, tt.line, parseOne(HiveMQ, nil, tt.line), tt.want)
	}
	// HiveMQ stamps the JVM's zone
	out := parseOne(HiveMQ, time.FixedZone("", -5*3600), tests[0].line)
	if got := out.ev.Time().Format(time.RFC3339Nano); got != "2026-12-01T20:15:18.123Z" {
		t.Errorf("in UTC-5: %s", got)
	}
}
