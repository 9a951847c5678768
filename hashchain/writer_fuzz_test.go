package hashchain

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// FuzzLogLine chains a record built from the fuzzer's values the way
// Writer.Append does, twice, encodes its lines as the Writer's encoders
// do, and checks that the log reader verifies both lines and reads back
// the same record: whatever Append accepts, the log can read.
func FuzzLogLine(f *testing.F) {
	f.Fuzz(func(t *testing.T, clientID, hostID, recordID, extra string, attempt int64, delay float64, ns int64, offset int16, outcome, stage, has uint8) {
		r := auditfmt.Record{
			ClientID: clientID, HostID: hostID, RecordID: recordID, Extra: extra,
			Attempt: attempt, BackoffDelayS: delay, RecordedAt: ns, OffsetMin: offset,
			Outcome: auditfmt.Outcome(outcome), Stage: auditfmt.Stage(stage), Has: auditfmt.Presence(has),
			Schema: 1, CeilingS: delay, DeviceSeq: attempt, ReasonCode: attempt & 0xff,
			OutboxDepth: attempt, OutboxFlushed: attempt >> 1,
		}
		c := chainer{chains: NewChains(testLog, false)}
		s := newLogState(fuzzLogName, testLog, -1)
		for n := int64(1); n <= 2; n++ {
			var e entry
			pos, err := c.add(&e, &r)
			if err != nil {
				var fe *auditfmt.FieldError
				if !errors.As(err, &fe) && !bytes.Contains([]byte(err.Error()), []byte("does not read back")) {
					t.Fatalf("add: error %T %v", err, err)
				}
				return
			}
			if pos.Seq != n-1 || pos.Index != n-1 {
				t.Fatalf("position %+v", pos)
			}
			line, leaf := encodeEntry(nil, &e)
			if err := s.verify(line[:len(line)-1], n); err != nil {
				t.Fatalf("the log reader rejects the line the writer wrote for %+v: %v\n%s", r, err, line)
			}
			if n == 1 && s.tree.Root() != leaf {
				t.Fatalf("leaf %x, the reader's tree %x", leaf, s.tree.Root())
			}
			got, want := s.rec, r
			if !bytes.Equal(recordBytes(t, &got), recordBytes(t, &want)) {
				t.Fatalf("reads back as %s, want %s", recordBytes(t, &got), recordBytes(t, &want))
			}
		}
	})
}
