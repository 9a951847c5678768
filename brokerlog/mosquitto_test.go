package brokerlog

import (
	"strings"
	"testing"
	"time"
)

// want is what a table test expects of one record.
type want struct {
	kind      Kind
	client    string
	reason    Reason
	peer      string
	user      string
	keepalive int
	clean     int8
	at        string        // RFC 3339, "" to not check
	res       time.Duration // 0 to not check
	detail    string        // "" to not check
	skip      bool
	reject    string // the field of a reject; "-" for the record as a whole
}

// parseOne reads one record of format f.
func parseOne(f Format, tz *time.Location, line string) outcome {
	p := &parser{format: f, tz: tz}
	if tz == nil {
		p.tz = time.UTC
	}
	var out outcome
	p.parse([]byte(line), &out)
	return out
}

func check(t *testing.T, line string, out outcome, w want) {
	t.Helper()
	switch {
	case w.reject != "":
		field := w.reject
		if field == "-" {
			field = ""
		}
		if out.why == "" || out.field != field {
			t.Errorf("%q: got %+v, want a reject of field %q", line, out, field)
		}
		return
	case out.why != "":
		t.Errorf("%q: rejected (%s: %s), want %+v", line, out.field, out.why, w)
		return
	case w.skip != out.skip:
		t.Errorf("%q: skip = %v, want %v (%+v)", line, out.skip, w.skip, out.ev)
		return
	case w.skip:
		return
	}
	e := out.ev
	if e.Kind != w.kind || e.Client != w.client || e.Reason != w.reason || e.Peer != w.peer || e.User != w.user ||
		e.Keepalive != w.keepalive || e.Clean != w.clean {
		t.Errorf("%q:\ngot  kind=%v client=%q reason=%v peer=%q user=%q keepalive=%d clean=%d\nwant kind=%v client=%q reason=%v peer=%q user=%q keepalive=%d clean=%d",
			line, e.Kind, e.Client, e.Reason, e.Peer, e.User, e.Keepalive, e.Clean,
			w.kind, w.client, w.reason, w.peer, w.user, w.keepalive, w.clean)
	}
	if w.at != "" {
		at, err := time.Parse(time.RFC3339Nano, w.at)
		if err != nil {
			t.Fatal(err)
		}
		if e.At != at.UnixNano() {
			t.Errorf("%q: At = %s, want %s", line, e.Time().Format(time.RFC3339Nano), w.at)
		}
	}
	if w.res != 0 && e.Res != w.res {
		t.Errorf("%q: Res = %v, want %v", line, e.Res, w.res)
	}
	if w.detail != "" && e.Detail != w.detail {
		t.Errorf("%q: Detail = %q, want %q", line, e.Detail, w.detail)
	}
}

// TestMosquittoLines reads Mosquitto's messages as its source writes them
// (the format strings of log__printf in src/handle_connect.c, src/loop.c,
// src/mosquitto.c and src/net.c on the 1.5, 1.6, 2.0 and develop
// branches), under each kind of stamp. Lines marked "2.0.11" were written
// by Mosquitto 2.0.11 (testdata/mosquitto-*.log, testdata/realclients).
func TestMosquittoLines(t *testing.T) {
	tests := []struct {
		line string
		want want
	}{
		// stamps: epoch (2.0.11), log_timestamp_format (2.0.11), the corpus recorder
		{"1796185183: New client connected from 127.0.0.1:40100 as sensor-0001 (p2, c1, k30).",
			want{kind: Accepted, client: "sensor-0001", peer: "127.0.0.1:40100", keepalive: 30, clean: 1,
				at: "2026-12-02T04:19:43Z", res: time.Second}},
		{"2026-12-02T04:19:51: New client connected from 127.0.0.1:48134 as sensor-0003 (p5, c1, k60, u'fleet').",
			want{kind: Accepted, client: "sensor-0003", peer: "127.0.0.1:48134", user: "fleet", keepalive: 60, clean: 1,
				at: "2026-12-02T04:19:51Z", res: time.Second}},
		{"2026-12-02 04:20:38: Client sensor-0002 closed its connection.",
			want{kind: Closed, client: "sensor-0002", reason: SocketError, at: "2026-12-02T04:20:38Z"}},
		{"2026-12-02T04:20:38.250: Client sensor-0002 disconnected.",
			want{kind: Closed, client: "sensor-0002", reason: ClientDisconnect, at: "2026-12-02T04:20:38.25Z", res: time.Millisecond}},
		{"2026-12-02T05:20:38+01:00: Client sensor-0002 disconnected.",
			want{kind: Closed, client: "sensor-0002", reason: ClientDisconnect, at: "2026-12-02T04:20:38Z"}},
		{"2026-12-01T15:15:18.705731Z 1796138118: New client connected from 127.0.0.1:54611 as pyman-0002 (p2, c0, k30).",
			want{kind: Accepted, client: "pyman-0002", peer: "127.0.0.1:54611", keepalive: 30, clean: -1,
				at: "2026-12-01T15:15:18.705731Z", res: time.Microsecond}},
		{"2026-12-01T15:15:28.7Z corpus: SIGKILL sent to the broker",
			want{kind: BrokerDown, at: "2026-12-01T15:15:28.7Z", res: time.Microsecond, detail: "corpus: SIGKILL sent to the broker"}},
		{"2026-12-01T15:15:48.340068Z corpus: restarting the broker",
			want{kind: Mark, detail: "corpus: restarting the broker"}},
		{"2026-12-01T15:16:58.363679Z corpus: stopping the fleet", want{kind: Mark}},
		{"2026-12-01T15:15:48.362940Z 1796138148: mosquitto version 2.0.11 running",
			want{kind: BrokerUp, at: "2026-12-01T15:15:48.36294Z"}},
		{"2026-12-01T15:15:48.362940123Z 2026-12-01T15:15:48: Client a disconnected.",
			want{kind: Closed, client: "a", reason: ClientDisconnect, res: time.Nanosecond}},

		// syslog and journal prefixes: rsyslog's RFC 3339 stamp, or the
		// yearless traditional one before Mosquitto's own stamp
		{"2026-12-02T04:19:43.123456+00:00 gw mosquitto[812]: 1796185183: Client a disconnected.",
			want{kind: Closed, client: "a", reason: ClientDisconnect, at: "2026-12-02T04:19:43.123456Z", res: time.Microsecond}},
		{"2026-12-02T05:19:43+01:00 gw mosquitto: Client a disconnected.",
			want{kind: Closed, client: "a", reason: ClientDisconnect, at: "2026-12-02T04:19:43Z", res: time.Second}},
		{"Dec  2 04:19:43 gw mosquitto[812]: 1796185183: Client a disconnected.",
			want{kind: Closed, client: "a", reason: ClientDisconnect, at: "2026-12-02T04:19:43Z", res: time.Second}},
		{"Dec  2 04:19:43 gw mosquitto[812]: Client a disconnected.", want{reject: "stamp"}},
		// a leap second would roll into the next day, as 24:00:00 would: neither is read
		{"2026-12-02T23:59:60: Client a disconnected.", want{reject: "stamp"}},
		{"2026-12-02T24:00:00: Client a disconnected.", want{reject: "stamp"}},
		{"Dec  2 04:19:43 gw sshd[812]: 1796185183: Client a disconnected.", want{reject: "stamp"}},
		{"anF  2 04:19:43 gw mosquitto[812]: 1796185183: Client a disconnected.", want{reject: "stamp"}},
		{"2026-12-02T04:19:43.123456+00:00 gw sshd[812]: Accepted publickey", want{reject: "message"}},

		// the broker
		{"1796185182: mosquitto version 2.0.11 starting", want{skip: true}},
		{"1796185182: mosquitto version 2.0.11 running", want{kind: BrokerUp, detail: "mosquitto version 2.0.11 running"}},
		{"1796185189: mosquitto version 2.0.11 terminating", want{kind: BrokerDown}},
		{"1796185182: Config loaded from /etc/mosquitto/mosquitto.conf.", want{skip: true}},
		{"1796185182: Opening ipv4 listen socket on port 1883.", want{skip: true}},
		{"1796185182: Opening ipv6 listen socket on port 1883.", want{skip: true}},
		{"1796185182: Opening websockets listen socket on port 9001.", want{skip: true}},
		{"1796185182: Saving in-memory database to /var/lib/mosquitto/mosquitto.db.", want{skip: true}},
		{"1796185182: Error: Address already in use", want{skip: true}},
		{"1796185182: Warning: Unable to increase maximum allowed connections. This session may be limited to 512 connections.", want{skip: true}},

		// accepted connections
		{"1796185183: New connection from 127.0.0.1:40100 on port 1883.", want{skip: true}},
		{"1796185183: New connection from 10.0.0.5 on port 1883.", want{skip: true}}, // 1.6
		{"1796185183: New client connected from 10.0.0.5 as dev-1 (c1, k60, u'bob').", // 1.5
			want{kind: Accepted, client: "dev-1", peer: "10.0.0.5", user: "bob", keepalive: 60, clean: 1}},
		{"1796185183: New client connected from 10.0.0.5 as dev-1 (p2, c0, k0).", // 1.6
			want{kind: Accepted, client: "dev-1", peer: "10.0.0.5", clean: -1}},
		{"1796185183: New client connected from ::1:50432 as dev (2) (p2, c1, k60).",
			want{kind: Accepted, client: "dev (2)", peer: "::1:50432", keepalive: 60, clean: 1}},
		{"1796185183: New client connected from 10.0.0.5:1 as a as b (p2, c1, k60, u'o'brien (x)').",
			want{kind: Accepted, client: "a as b", peer: "10.0.0.5:1", user: "o'brien (x)", keepalive: 60, clean: 1}},
		{"1796185183: New bridge connected from 10.0.0.9:41000 as edge.site1 (p4, c0, k60).",
			want{kind: Accepted, client: "edge.site1", peer: "10.0.0.9:41000", keepalive: 60, clean: -1}},
		{"1796185183: New client connected from 127.0.0.1:40100 as sensor-0001 (p2, c1, k30)", want{reject: "message"}},
		{"1796185183: New client connected from 127.0.0.1:40100 as sensor-0001 (p2, c1, k9999999).", want{reject: "message"}},
		{"1796185183: New client connected from 127.0.0.1:40100 as sensor-0001.", want{reject: "message"}},
		{"1796185183: No will message specified.", want{skip: true}},
		{"1796185183: Sending CONNACK to sensor-0001 (0, 0)", want{skip: true}},
		{"1796185183: Received PINGREQ from sensor-0006", want{skip: true}},
		{"1796185183: Sending PINGRESP to sensor-0006", want{skip: true}},
		{"1796185183: Received DISCONNECT from sensor-0001", want{skip: true}},
		{"1796185183: Bad client sensor-0005 sending multiple CONNECT messages.", want{skip: true}},
		{"1796185183: Client connection from 10.0.0.7 denied: max_connections exceeded.", want{skip: true}},
		{"1796185183: Client bridge-x sending CONNECT", want{skip: true}},

		// closed connections: 2.0 (src/loop.c)
		{"1796185184: Client sensor-0003 already connected, closing old connection.", want{kind: Closed, client: "sensor-0003", reason: Takeover}},
		{"1796185184: Client sensor-0002 closed its connection.", want{kind: Closed, client: "sensor-0002", reason: SocketError}},
		{"1796185184: Client <unknown> closed its connection.", want{kind: Closed, reason: SocketError}},
		{"1796185184: Client sensor-0001 disconnected.", want{kind: Closed, client: "sensor-0001", reason: ClientDisconnect}},
		{"1796185184: Client sensor-0004 has exceeded timeout, disconnecting.", want{kind: Closed, client: "sensor-0004", reason: KeepaliveTimeout}},
		{"1796185184: Client sensor-0005 disconnected due to protocol error.", want{kind: Closed, client: "sensor-0005", reason: ProtocolError}},
		{"1796185184: Client x disconnected due to malformed packet.", want{kind: Closed, client: "x", reason: ProtocolError}},
		{"1796185184: Client x disconnected due to oversize packet.", want{kind: Closed, client: "x", reason: ProtocolError}},
		{"1796185184: Client x disconnected due to oversize payload.", want{kind: Closed, client: "x", reason: ProtocolError}},
		{"1796185184: Client x disconnected due to using not allowed feature (QoS too high, retain not supported, or bad AUTH method).",
			want{kind: Closed, client: "x", reason: ProtocolError}},
		{"1796185184: Client x disconnected due to out of memory.", want{kind: Closed, client: "x", reason: ReasonOther}},
		{"1796185184: Client x disconnected, not authorised.", want{kind: Closed, client: "x", reason: NotAuthorized}},
		{"1796185184: Client x been disconnected by administrative action.", want{kind: Closed, client: "x", reason: AdminAction}},
		{"1796185184: Client x disconnected: Connection reset by peer.", want{kind: Closed, client: "x", reason: SocketError}},
		{"1796185184: Bad socket read/write on client x: The connection was lost.", want{kind: Closed, client: "x", reason: SocketError}},
		// 1.6 and 1.5
		{"1796185184: Socket error on client sensor-9, disconnecting.", want{kind: Closed, client: "sensor-9", reason: SocketError}},
		{"1796185184: Client x disconnected, no longer authorised.", want{kind: Closed, client: "x", reason: NotAuthorized}},
		// develop (2.1)
		{"1796185184: Client x disconnected, session taken over.", want{kind: Closed, client: "x", reason: Takeover}},
		{"1796185184: Client x disconnected, server busy.", want{kind: Closed, client: "x", reason: ServerDisconnect}},
		{"1796185184: Client x disconnected, connection rate exceeded.", want{kind: Closed, client: "x", reason: ReasonOther}},
		{"1796185184: Client x disconnected due to exceeding the receive maximum.", want{kind: Closed, client: "x", reason: ProtocolError}},
		// client ids with spaces and the words of the messages
		{"1796185184: Client a disconnected. b disconnected.", want{kind: Closed, client: "a disconnected. b", reason: ClientDisconnect}},

		// rejects
		{"1796185184: Client x did something new.", want{reject: "message"}},
		{"1796185184: Something Mosquitto 3 will say", want{reject: "message"}},
		{"1796185184: ", want{reject: "message"}},
		{"1796185184 New client connected", want{reject: "stamp"}},
		{"New client connected from 127.0.0.1:40100 as sensor-0001 (p2, c1, k30).", want{reject: "stamp"}},
		{"99999999999: Client x disconnected.", want{reject: "stamp"}},
		{"2026-13-01T00:00:00: Client x disconnected.", want{reject: "stamp"}},
		{"2026-02-29T00:00:00: Client x disconnected.", want{reject: "stamp"}},
		{"2026-12-01T15:15:18.0123456789Z 1: x", want{reject: "stamp"}},
		{"2026-12-01T15:15:18Zcorpus: x", want{reject: "stamp"}},
	}
	for _, tt := range tests {
		check(t, tt.line, parseOne(Mosquitto, nil, tt.line), tt.want)
	}
}

// TestMosquittoTZ: log_timestamp_format writes localtime() with no zone;
// Options.TZ says which zone that was. A stamp that names its zone keeps
// it.
func TestMosquittoTZ(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	out := parseOne(Mosquitto, berlin, "2026-12-02T05:19:51: Client a disconnected.")
	if got := out.ev.Time().Format(time.RFC3339); got != "2026-12-02T04:19:51Z" {
		t.Errorf("in CET: %s", got)
	}
	out = parseOne(Mosquitto, berlin, "2026-12-02T05:19:51-02:00: Client a disconnected.")
	if got := out.ev.Time().Format(time.RFC3339); got != "2026-12-02T07:19:51Z" {
		t.Errorf("zoned: %s", got)
	}
	// the epoch stamp has no zone to misread
	out = parseOne(Mosquitto, berlin, "1796185183: Client a disconnected.")
	if got := out.ev.Time().Format(time.RFC3339); got != "2026-12-02T04:19:43Z" {
		t.Errorf("epoch: %s", got)
	}
}

// TestMosquittoMessagesDocumented checks that each message the reader
// maps to an event is one Mosquitto writes: the suffixes of mosquittoClosed
// are the format strings of src/loop.c after "Client %s".
func TestMosquittoMessagesDocumented(t *testing.T) {
	for _, c := range mosquittoClosed {
		if !strings.HasPrefix(c.suffix, " ") || !strings.HasSuffix(c.suffix, ".") {
			t.Errorf("suffix %q: Mosquitto's messages continue \"Client %%s\" with a space and end with a period", c.suffix)
		}
		out := parseOne(Mosquitto, nil, "1: Client id"+c.suffix)
		if out.ev.Kind != Closed || out.ev.Client != "id" || out.ev.Reason != c.reason {
			t.Errorf("%q: got %+v", c.suffix, out)
		}
	}
}

// TestMosquittoLogTypeAll reads a real Mosquitto 2.0.11 log written with
// log_type all (testdata/mosquitto-logtype-all.log): the lines that
// continue a message (a will's topic, each topic of a SUBSCRIBE or
// UNSUBSCRIBE, on a line that begins with a tab, and log_type subscribe's
// "ID QOS TOPIC") belong to the message before them and are no rejects.
func TestMosquittoLogTypeAll(t *testing.T) {
	log := readFile(t, "testdata/mosquitto-logtype-all.log", Options{})
	checkAccounting(t, log)
	if log.Rejected != 0 {
		t.Fatalf("%d rejects: %v", log.Rejected, log.Rejects)
	}
	counts := map[Kind]int{}
	for _, e := range log.Events {
		counts[e.Kind]++
	}
	if counts[Accepted] != 3 || counts[Closed] != 5 || counts[Refused] != 2 || counts[BrokerUp] != 1 || counts[BrokerDown] != 1 ||
		counts[Will] != 3 || counts[Status] != 0 {
		t.Errorf("events %v, want 3 accepted, 5 closed, 2 refused, the broker up and down, 3 wills and no status "+
			"(the clients publish to status/x, not to their wills' topics)", counts)
	}
	for _, e := range log.Events {
		if e.Kind == Will && e.Detail != "status/"+e.Client {
			t.Errorf("%s's will on %q, want status/%s", e.Client, e.Detail, e.Client)
		}
	}
	var codes []uint8
	for _, e := range log.Events {
		if e.Kind == Refused {
			codes = append(codes, e.Code)
			if e.Client != "127.0.0.1" {
				t.Errorf("refused %q, want the address Mosquitto names", e.Client)
			}
		}
	}
	if len(codes) != 2 || codes[0] != 5 || codes[1] != 135 {
		t.Errorf("refusal codes %v, want [5 135]", codes)
	}
}

// TestMosquittoContinuations pins which lines continue the one before.
func TestMosquittoContinuations(t *testing.T) {
	p := &parser{format: Mosquitto, tz: time.UTC}
	for _, tc := range []struct {
		line string
		want want
	}{
		{"1796613059: Received SUBSCRIBE from d 0", want{skip: true}},
		{"1796613059: \tcmd/a (QoS 1)", want{skip: true}},
		{"1796613059: d 0 1 cmd/a", want{skip: true}},
		{"\tcmd/b", want{skip: true}},
		{"1796613059: d 0 0 cmd/b", want{skip: true}},
		{"1796613059: Sending SUBACK to d 0", want{skip: true}},
		// the subscription is over: a line that begins with the id is read for itself
		{"1796613059: d 0 0 cmd/b", want{reject: "message"}},
		{"1796613059: New client connected from 127.0.0.1:1 as d (p2, c1, k5).",
			want{kind: Accepted, client: "d", peer: "127.0.0.1:1", keepalive: 5, clean: 1}},
	} {
		var out outcome
		p.parse([]byte(tc.line), &out)
		check(t, tc.line, out, tc.want)
	}
}

// TestMosquittoWillsAndStatus reads real lines of devices that declare a
// will and say their presence on its topic (testdata/mosquitto-presence.log):
// a Will for every accept that declared one, its topic from the line
// after, and a Status for each device's own publish to it, none for any
// other publish.
func TestMosquittoWillsAndStatus(t *testing.T) {
	log := readFile(t, "testdata/mosquitto-presence.log", Options{})
	checkAccounting(t, log)
	if log.Rejected != 0 {
		t.Fatalf("%d rejects: %v", log.Rejected, log.Rejects)
	}
	counts := map[Kind]int{}
	accepted := ""
	for _, e := range log.Events {
		counts[e.Kind]++
		switch e.Kind {
		case Accepted:
			accepted = e.Client
		case Will:
			if e.Client != accepted || e.Detail != "status/"+e.Client {
				t.Errorf("a will of %s on %q after the accept of %s", e.Client, e.Detail, accepted)
			}
		case Status:
			if !strings.Contains(e.Detail, "'status/"+e.Client+"'") {
				t.Errorf("a status of %s: %q", e.Client, e.Detail)
			}
		}
	}
	if counts[Accepted] != 7 || counts[Will] != 7 || counts[Status] != 6 || counts[Closed] != 3 || counts[BrokerUp] != 2 {
		t.Errorf("events %v, want 7 accepts, each with its will, 6 status publishes, 3 keepalive timeouts and the broker up twice", counts)
	}
}
