package redact_test

import (
	"fmt"

	"github.com/stormaudit/stormaudit/redact"
)

func ExampleScanJSON() {
	extra := `{"fw":"1.4.2","mqtt":{"url":"mqtts://dev-17:hunter2@broker:8883","password":"hunter2"},"peers":["aa:bb:cc:dd:ee:ff"]}`
	redact.ScanJSON("extra", extra, func(h redact.Hit) {
		fmt.Printf("%s: %v\n", h.Field, h.Kind)
	})
	// Output:
	// extra.mqtt.url: URL password
	// extra.mqtt.password: password
	// extra.peers[]: MAC address
}

func ExampleRedactor() {
	r := redact.New([]byte("example key; use a random one"))
	fmt.Println(r.String("client_id", "dev-AA-BB-CC-DD-EE-FF"))
	fmt.Println(r.String("client_id", "dev-aabb.ccdd.eeff"))
	fmt.Println(r.JSON("extra", `{"fw": "1.4.2", "mqtt": {"url": "mqtt://dev:hunter2@broker", "password": "hunter2"}}`))
	for _, c := range r.Replaced() {
		fmt.Printf("%s: %d %v\n", c.Field, c.Values, c.Kind)
	}
	// Output:
	// dev-mac-51d2bb14328ca1e0
	// dev-mac-51d2bb14328ca1e0
	// {"fw":"1.4.2","mqtt":{"url":"mqtt://dev:secret-ae0f66f40aa35c0e@broker","password":"secret-ae0f66f40aa35c0e"}}
	// client_id: 2 MAC address
	// extra.mqtt.password: 1 password
	// extra.mqtt.url: 1 URL password
}
