package simulate

import (
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// A cold boot: nobody records a disconnect, every device's first record
// is a backoff_wait at attempt 0, and the first records spread uniformly
// over the startup spread.
func TestColdBootSpreadsTheFirstAttempts(t *testing.T) {
	pol := window(t, 1)
	pol.StartupSpreadS = 60
	recs, _, _ := run(t, Config{Devices: 1000, Policy: pol, ColdBoot: true, Seed: 7, Horizon: 3 * time.Minute})
	first := map[string]*auditfmt.Record{}
	perDecile := make([]int, 10)
	for i := range recs {
		r := &recs[i]
		if r.Outcome == auditfmt.Disconnected {
			t.Fatalf("a cold boot recorded a disconnect: %+v", r)
		}
		if first[r.ClientID] == nil {
			first[r.ClientID] = r
			if r.Outcome != auditfmt.BackoffWait || r.Attempt != 0 {
				t.Fatalf("first record %+v, want a backoff_wait at attempt 0", r)
			}
			s := float64(at(r)) / 1e6
			if s < 0 || s >= 60 {
				t.Fatalf("first record at +%gs, want within the 60 s spread", s)
			}
			perDecile[int(s/6)]++
		}
	}
	if len(first) != 1000 {
		t.Fatalf("%d devices started, want 1000", len(first))
	}
	for k, n := range perDecile { // 100 expected in each; 5 standard deviations is ±47
		if n < 53 || n > 147 {
			t.Errorf("%d first records in [%d s, %d s), want about 100: %v", n, 6*k, 6*k+6, perDecile)
		}
	}
	// without a spread every device starts at once
	pol.StartupSpreadS = 0
	recs, _, _ = run(t, Config{Devices: 50, Policy: pol, ColdBoot: true, Horizon: time.Minute})
	if at(&recs[0]) != 0 || at(&recs[49]) != 0 {
		t.Errorf("without a spread, first records at %d and %d µs, want 0", at(&recs[0]), at(&recs[49]))
	}
}

// The outbox queues at its rate while the device is offline, up to the
// policy's limit, beyond which the records say what it dropped, and the
// record after a connect reports the backlog sent: all at once, or a
// batch a second.
func TestOutboxQueuesAndFlushes(t *testing.T) {
	for _, tc := range []struct {
		name        string
		limit       float64
		batch       int
		wantAtFirst int64 // outbox_depth on the connected record ending the outage, with a limit
	}{
		{"unbounded, all at once", 0, 0, 20},
		{"a limit of 8", 8, 0, 8},
		{"a batch of 5 a second", 0, 5, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pol := window(t, 0.5)
			pol.OutboxLimit = tc.limit
			cfg := Config{Devices: 1, Policy: pol, Outage: 10 * time.Second, OutboxPerS: 2, FlushBatch: tc.batch,
				Flaps: 1, FlapUp: 3 * time.Second, FlapDown: 5 * time.Second, Horizon: 30 * time.Second}
			recs, _, _ := run(t, cfg)
			var conn, drop *auditfmt.Record
			for i := range recs {
				r := &recs[i]
				if r.Has&(auditfmt.HasOutboxDepth|auditfmt.HasOutboxFlushed) != auditfmt.HasOutboxDepth|auditfmt.HasOutboxFlushed {
					t.Fatalf("record %+v lacks the outbox fields", r)
				}
				switch {
				case conn == nil && r.Outcome == auditfmt.Connected:
					conn = r
				case conn != nil && drop == nil && r.Outcome == auditfmt.Disconnected:
					drop = r
				}
			}
			if conn == nil || drop == nil {
				t.Fatalf("no connect and drop in %d records", len(recs))
			}
			// what a full outbox dropped: said with a limit alone, and up to
			// the connect, all that the limit did not keep
			var dropped int64
			for i := range recs {
				r := &recs[i]
				if (r.Has&auditfmt.HasOutboxDropped != 0) != (tc.limit > 0) {
					t.Fatalf("record %+v: outbox_dropped present %v, with a limit %v", r, r.Has&auditfmt.HasOutboxDropped != 0, tc.limit > 0)
				}
				if r == conn {
					break
				}
				dropped += r.OutboxDropped
			}
			dropped += conn.OutboxDropped
			if d := float64(at(conn)) / 1e6 * 2; tc.limit > 0 && (dropped < int64(d-tc.limit)-1 || dropped > int64(d-tc.limit)) {
				t.Errorf("dropped %d by the connect (+%gs), want the %g queued beyond the limit of %g", dropped, d/2, d-tc.limit, tc.limit)
			}
			// the device queued 2 a second from the drop to its connect,
			// just after the 10 s outage (its last draw ends within 0.5 s)
			up := float64(at(conn)) / 1e6
			want := min(int64(2*up), tc.wantAtFirst)
			if tc.limit == 0 && (conn.OutboxDepth < 20 || conn.OutboxDepth > 21) || tc.limit > 0 && conn.OutboxDepth != want {
				t.Errorf("outbox_depth %d at the connect (+%gs), want %d", conn.OutboxDepth, up, want)
			}
			if tc.batch == 0 && (drop.OutboxFlushed != conn.OutboxDepth || drop.OutboxDepth != 0) {
				t.Errorf("at the drop: flushed %d, depth %d; want all %d flushed", drop.OutboxFlushed, drop.OutboxDepth, conn.OutboxDepth)
			}
			if d := drop.OutboxFlushed + drop.OutboxDepth - conn.OutboxDepth; tc.batch > 0 && (d < -1 || d > 0) { // each rounded down
				t.Errorf("at the drop: flushed %d + left %d, want the %d waiting at the connect", drop.OutboxFlushed, drop.OutboxDepth, conn.OutboxDepth)
			}
			if tc.batch > 0 && drop.OutboxFlushed > int64(tc.batch)*int64(float64(at(drop)-at(conn))/1e6+1) {
				t.Errorf("flushed %d in %v, more than a batch of %d a second", drop.OutboxFlushed, time.Duration(at(drop)-at(conn))*time.Microsecond, tc.batch)
			}
		})
	}
}

// With AttemptIDs, the records of one attempt share its id, and no two
// attempts of a device share one; a disconnect carries none.
func TestAttemptIDsNameEachAttempt(t *testing.T) {
	recs, _, _ := run(t, Config{Devices: 20, Policy: preset(t, "full-jitter"), Outage: 30 * time.Second, AttemptIDs: true,
		DevicesPerHost: 4, Horizon: 2 * time.Minute})
	open := map[string]string{} // client -> the id of its attempt in flight
	used := map[string]bool{}   // ids begun
	for i := range recs {
		r := &recs[i]
		switch r.Outcome {
		case auditfmt.Disconnected:
			if r.AttemptID != "" {
				t.Fatalf("disconnect with attempt_id %q", r.AttemptID)
			}
		case auditfmt.BackoffWait:
			if used[r.AttemptID] || r.AttemptID == "" {
				t.Fatalf("backoff_wait with attempt_id %q, used before or empty", r.AttemptID)
			}
			used[r.AttemptID], open[r.ClientID] = true, r.AttemptID
		default:
			if r.AttemptID != open[r.ClientID] {
				t.Fatalf("%s with attempt_id %q, want the attempt in flight %q", r.Outcome, r.AttemptID, open[r.ClientID])
			}
		}
	}
	if len(used) < 40 {
		t.Errorf("%d attempts, want at least 2 a device", len(used))
	}
}
