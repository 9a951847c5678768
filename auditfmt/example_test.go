package auditfmt_test

import (
	"fmt"

	"github.com/stormaudit/stormaudit/auditfmt"
)

func ExampleDecoder_Decode() {
	lines := []string{
		`{"client_id": "dev-0001", "attempt": 3, "backoff_delay_s": 0.21, "outcome": "backoff_wait", "clean_session": false, "recorded_at": "2026-11-30T14:17:34.979964+00:00", "fw": "1.4.2"}`,
		`{"message": "mqtt_reconnect", "audit": {"client_id": "dev-0002", "attempt": 0, "backoff_delay_s": 0, "outcome": "connected", "clean_session": true, "recorded_at": "2026-11-30T15:17:35-05:00", "reason_code": 0}}`,
		`{"client_id": "dev-0003", "attempt": 1, "backoff_delay_s": -1.5, "outcome": "backoff_wait", "clean_session": false, "recorded_at": "2026-11-30T14:17:36Z"}`,
	}
	var d auditfmt.Decoder
	var rec auditfmt.Record
	for n, line := range lines {
		if err := d.Decode([]byte(line), &rec); err != nil {
			fmt.Println(&auditfmt.LineError{File: "incident.ndjson", Line: int64(n + 1), Err: err})
			continue
		}
		fmt.Printf("%s %v at %s UTC, reason code given: %v, extra %q, envelope %q\n", rec.ClientID, rec.Outcome,
			rec.Time().UTC().Format("15:04:05.000"), rec.Has&auditfmt.HasReasonCode != 0, rec.Extra, rec.Envelope)
	}
	// Output:
	// dev-0001 backoff_wait at 14:17:34.979 UTC, reason code given: false, extra "{\"fw\":\"1.4.2\"}", envelope ""
	// dev-0002 connected at 20:17:35.000 UTC, reason code given: true, extra "", envelope "{\"message\":\"mqtt_reconnect\"}"
	// incident.ndjson:3: backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found -1.5
}
