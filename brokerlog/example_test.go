package brokerlog_test

import (
	"fmt"
	"strings"

	"github.com/stormaudit/stormaudit/brokerlog"
)

func ExampleRead() {
	const mosquittoLog = `1796185184: New connection from 127.0.0.1:40118 on port 1883.
1796185184: New client connected from 127.0.0.1:40118 as sensor-0003 (p5, c1, k60, u'fleet').
1796185184: New connection from 127.0.0.1:40130 on port 1883.
1796185184: Client sensor-0003 already connected, closing old connection.
1796185184: New client connected from 127.0.0.1:40130 as sensor-0003 (p5, c1, k60, u'fleet').
1796185188: Client sensor-0003 has exceeded timeout, disconnecting.
1796185189: Something the next Mosquitto will say
`
	log, err := brokerlog.Read(strings.NewReader(mosquittoLog), "mosquitto.log", brokerlog.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %d lines: %d events, %d skipped, %d rejected\n",
		log.Format, log.Lines, len(log.Events), log.Skipped, log.Rejected)
	for _, e := range log.Events {
		fmt.Println(e.Time().Format("15:04:05"), e.Kind, e.Client, e.Peer, e.Reason)
	}
	for _, r := range log.Rejects {
		fmt.Println(r)
	}
	// Output:
	// mosquitto: 7 lines: 4 events, 2 skipped, 1 rejected
	// 04:19:44 accepted sensor-0003 127.0.0.1:40118 unknown
	// 04:19:44 closed sensor-0003  takeover
	// 04:19:44 accepted sensor-0003 127.0.0.1:40130 unknown
	// 04:19:48 closed sensor-0003  keepalive-timeout
	// line 7: message: expected one of Mosquitto's messages
}
