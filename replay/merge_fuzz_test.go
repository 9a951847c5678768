package replay

import (
	"bytes"
	"testing"
	"time"
)

// FuzzMerge: a shard's report, however hostile, is read and merged (as
// one shard of one, and as one of two) without a panic, and what the
// merge costs is bounded by what the report holds.
func FuzzMerge(f *testing.F) {
	r := &Report{Plan: "recorded", Speed: 1, Devices: 2, ConnectsScheduled: 2, BrokerDid: BrokerDid{RefusedByCode: map[string]int{}},
		ReplayDid: ReplayDid{LocalErrors: map[string]int{}}}
	outs := []outcome{
		{result: result{attempted: true, kind: accepted, lateness: time.Millisecond, connack: 2 * time.Millisecond, at: 3 * time.Millisecond}, device: 0},
		{result: result{attempted: true, kind: local, errno: "EMFILE (the process's descriptors)"}, due: time.Second, device: 1},
	}
	r.Samples = (&run{opts: Options{Shard: &Shard{I: 0, N: 1, Plan: "d"}}, start: time.Unix(1e9, 0)}).samples(r, outs)
	var buf bytes.Buffer
	if err := WriteJSON(&buf, r); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add(bytes.Replace(buf.Bytes(), []byte(`"shards": 1`), []byte(`"shards": -1`), 1))
	f.Add(bytes.Replace(buf.Bytes(), []byte(`"devices": 2`), []byte(`"devices": 2147483648`), 1))
	f.Fuzz(func(t *testing.T, b []byte) {
		reps, err := ReadJSON(bytes.NewReader(b))
		if err != nil || len(reps) != 1 {
			return
		}
		if m, err := Merge(reps); err == nil {
			m.Judge(time.Second, time.Second)
		}
		Merge([]*Report{reps[0], reps[0]})
	})
}
