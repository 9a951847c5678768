package analyze

import (
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/simulate"
)

// TestGlimpses checks what a watched survey shows while it reads: the
// glimpses grow, the first comes after one device, and the last, once
// every record is read, counts what the survey's own activity holds,
// second by second (the simulated fleet's clocks agree, so no offset
// moves it).
func TestGlimpses(t *testing.T) {
	dir, _ := simDataset(t, simulate.Config{Devices: 200, Outage: 20 * time.Second, Policy: simPreset(t, "full-jitter"), Seed: 3,
		OutboxPerS: 1, Flaps: 1, FlapUp: 5 * time.Second, FlapDown: 10 * time.Second})
	var gs []*Glimpse
	o, err := SurveyWatched(dir, Options{}, time.Hour, func(g *Glimpse) { gs = append(gs, g) })
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Result.Summary.Fleet.ClockOffsets) > 0 {
		t.Fatal("the simulated fleet has clock offsets: its glimpse and activity differ by them")
	}
	// an hour apart: the first device, then every device once all are read
	// (the last one only)
	if len(gs) != 2 || gs[0].Devices != 1 {
		t.Fatalf("%d glimpses (first of %d devices), want 2: after the first device and after the last", len(gs), gs[0].Devices)
	}
	last := gs[len(gs)-1]
	if last.Devices != o.Result.Summary.Devices || last.Records != o.Result.Summary.Records {
		t.Errorf("last glimpse: %d devices, %d records; the check read %d, %d", last.Devices, last.Records, o.Result.Summary.Devices, o.Result.Summary.Records)
	}
	first, end, ok := last.Span()
	if !ok {
		t.Fatal("the last glimpse has no activity")
	}
	n := int((end-first)/int64(time.Second)) + 1
	want := o.Activity.Histogram(first, time.Second, n)
	for _, width := range []time.Duration{time.Second, 5 * time.Second} {
		got := last.Histogram(first, width, n)
		k := int(width / time.Second)
		for b := range got {
			var w Bucket
			for _, s := range want[min(b*k, n):min(b*k+k, n)] {
				for i := range w.Opens {
					w.Opens[i] += s.Opens[i]
				}
				w.Connects, w.Flushed = w.Connects+s.Connects, w.Flushed+s.Flushed
			}
			w.Start = got[b].Start
			if got[b] != w {
				t.Fatalf("width %v, bucket %d: glimpse %+v, activity %+v", width, b, got[b], w)
			}
		}
	}
	if tot := flushed(want); tot == 0 {
		t.Fatal("no flush in the fleet's activity: the flush count is untested")
	}
}

func flushed(bs []Bucket) int64 {
	var n int64
	for _, b := range bs {
		n += b.Flushed
	}
	return n
}
