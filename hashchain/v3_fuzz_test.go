package hashchain

import (
	"bytes"
	"testing"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// FuzzDecodeRecordBytes3: B from a proof is untrusted. Decoding never
// panics, and what decodes encodes back to the same bytes.
//
//	go test -run XXX -fuzz FuzzDecodeRecordBytes3 ./hashchain
func FuzzDecodeRecordBytes3(f *testing.F) {
	for i, r := range []auditfmt.Record{
		{ClientID: "dev-1", RecordedAt: 1764512250e9, Attempt: 2, BackoffDelayS: 0.5, Outcome: auditfmt.BackoffWait, Line: 7},
		{ClientID: "dev-2", RecordedAt: 1764512250e9 + 1, OffsetMin: -90, Outcome: auditfmt.Connected, CleanSession: true,
			Has: auditfmt.HasDeviceSeq | auditfmt.HasCeiling, DeviceSeq: 3, CeilingS: 8, HostID: "gw-a", Stage: auditfmt.StageLink,
			Extra: `{"rssi": -70}`, Envelope: `{"level":"info"}`, Line: 9},
		{ClientID: "dev-3", RecordedAt: 1764512250e9 + 2, Outcome: auditfmt.Disconnected, Has: auditfmt.HasInboundRedelivered | auditfmt.HasInboundDuplicates,
			InboundRedelivered: 1500, InboundDuplicates: 3, Envelope: `{"level":"info"}`, Line: 10},
		{ClientID: "dev-4", RecordedAt: 1764512250e9 + 3, Outcome: auditfmt.Connected, Has: auditfmt.HasInboundRedelivered | auditfmt.HasInboundDuplicates |
			auditfmt.HasOutboxDropped | auditfmt.HasInboundExpired, InboundRedelivered: 40, InboundDuplicates: 1, OutboxDropped: 1 << 53,
			InboundExpired: 2, Line: 11},
	} {
		f.Add(AppendRecordBytes3(nil, &r, int64(i), "logs/gw-a.ndjson"))
	}
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, seq, source, err := DecodeRecordBytes3(b)
		if err != nil {
			return
		}
		if again := AppendRecordBytes3(nil, &r, seq, source); !bytes.Equal(again, b) {
			t.Fatalf("decoded %x, encodes to %x", b, again)
		}
	})
}
