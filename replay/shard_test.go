package replay

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestPlanShard: the shards of a plan hold each device once, dealt in
// turn, with all its connects in order.
func TestPlanShard(t *testing.T) {
	p := spread(10, time.Second)
	p.Connects = append(p.Connects, Connect{At: 2 * time.Second, Device: 4, Attempt: 1})
	devices, connects := 0, 0
	for i := range 3 {
		s := p.Shard(i, 3)
		for k, d := range s.Devices {
			if d != p.Devices[3*k+i] {
				t.Errorf("shard %d/3 device %d is %s, want %s", i, k, d.ID, p.Devices[3*k+i].ID)
			}
		}
		for _, c := range s.Connects {
			if want := p.Devices[3*int(c.Device)+i]; c.Attempt == 1 && want.ID != "dev-00004" {
				t.Errorf("shard %d/3: the second connect is %s's", i, want.ID)
			}
		}
		devices, connects = devices+len(s.Devices), connects+len(s.Connects)
	}
	if devices != 10 || connects != 11 {
		t.Errorf("the shards hold %d devices and %d connects, want 10 and 11", devices, connects)
	}
}

// TestMergeIsTheWhole: the shards' reports, read back from their JSON,
// merge into the figures the whole replay's outcomes give, exactly.
func TestMergeIsTheWhole(t *testing.T) {
	const n, devices = 3, 40
	var whole []outcome
	for k := range 2 * devices {
		o := outcome{result: result{attempted: true, kind: accepted, lateness: time.Duration(k%7) * time.Millisecond,
			opened: time.Duration(k) * 10 * time.Millisecond, connack: time.Duration(k%11) * time.Millisecond,
			at: time.Duration(k)*10*time.Millisecond + time.Millisecond}, due: time.Duration(k) * 10 * time.Millisecond, device: int32(k % devices)}
		switch k % 9 {
		case 3:
			o.kind, o.code = refused, 0x9f
		case 5:
			o.kind = timedOutKind
		case 7:
			o.kind, o.errno = local, "EMFILE (the process's descriptors)"
		}
		whole = append(whole, o)
	}
	want := &Report{Plan: "p", Speed: 1, Devices: devices, ConnectsScheduled: len(whole), Shards: n,
		BrokerDid: BrokerDid{RefusedByCode: map[string]int{}, WillsDelivered: 6}, ReplayDid: ReplayDid{LocalErrors: map[string]int{}}}
	want.sum(whole, devices)
	var reps []*Report
	for i := range n {
		r := &Report{Plan: "p", Speed: 1, BrokerDid: BrokerDid{RefusedByCode: map[string]int{}, WillsDelivered: 2}, ReplayDid: ReplayDid{LocalErrors: map[string]int{}}}
		var outs []outcome
		for _, o := range whole {
			if int(o.device)%n == i {
				o.device /= n
				outs = append(outs, o)
			}
		}
		r.Devices, r.ConnectsScheduled = len(p3(devices, n, i)), len(outs)
		run := &run{opts: Options{Shard: &Shard{I: i, N: n}}, start: time.Unix(1e9, 0)}
		r.Samples = run.samples(r, outs)
		var buf bytes.Buffer
		if err := WriteJSON(&buf, r); err != nil {
			t.Fatal(err)
		}
		back, err := ReadJSON(&buf)
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, back[0])
	}
	reps[0], reps[2] = reps[2], reps[0] // in any order
	got, err := Merge(reps)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merged:\n%+v\nthe whole:\n%+v", got, want)
	}
	for _, tc := range []struct {
		reps []*Report
		want string
	}{
		{reps[:2], "shard 0/3 is missing (2 reports given)"},
		{[]*Report{reps[0], reps[0], reps[1]}, "again"},
		{[]*Report{withShards(reps[0], 1<<40)}, "shard 0/1099511627776 is missing (1 reports given)"},
		{[]*Report{reps[0], reps[1], reps[2], reps[0]}, "4 reports given of 3 shards"},
		{[]*Report{reps[0], reps[1], {Plan: "x"}}, "has no samples"},
		{[]*Report{reps[0], reps[1], withPlan(reps[2], "what-if")}, "is of another plan"},
		{[]*Report{reps[0], reps[1], edit(reps[2], func(r *Report) { r.Samples.Plan = "another" })}, "is of another plan"},
		{[]*Report{reps[0], reps[1], edit(reps[2], func(r *Report) { r.Speed = 2 })}, "is not of the replay of report 1"},
		{[]*Report{reps[0], reps[1], edit(reps[2], func(r *Report) { r.Interrupted = true })}, "was interrupted"},
		{[]*Report{reps[0], reps[1], edit(reps[2], func(r *Report) { r.Devices = -5 })}, "expected the connects scheduled sampled, and at most as many devices"},
		{[]*Report{reps[0], reps[1], edit(reps[2], func(r *Report) { r.ConnectsScheduled++ })}, "expected the connects scheduled sampled"},
		{[]*Report{reps[0], reps[1], edit(reps[2], func(r *Report) { r.Samples.Wills = -1 })}, "expected counts >= 0"},
		{[]*Report{reps[0], reps[1], edit(reps[2], func(r *Report) { r.Samples.AcceptErrors["EMFILE"] = 1 })}, `"accept ..." count >= 0`},
		{[]*Report{reps[0], reps[1], edit(reps[2], func(r *Report) { r.Samples.Connects[0].LateUs = -1 })}, "a time of -1 µs"},
		{[]*Report{reps[0], reps[1], edit(reps[2], func(r *Report) { r.Samples.Connects[0].Device = 99 })}, "expected a device below the shard's"},
		{[]*Report{reps[0], reps[1], edit(reps[2], func(r *Report) { r.Samples.Connects[0].Kind, r.Samples.Connects[0].Errno = "accepted", "EMFILE" })},
			"expected an errno on a local failure alone"},
	} {
		if _, err := Merge(tc.reps); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Merge: %v, want an error with %q", err, tc.want)
		}
	}
}

// p3 returns the devices k < n with k mod shards = i.
func p3(n, shards, i int) []int {
	var out []int
	for k := i; k < n; k += shards {
		out = append(out, k)
	}
	return out
}

func withShards(r *Report, n int) *Report {
	c, s := *r, *r.Samples
	s.Shards, c.Samples = n, &s
	return &c
}

// edit returns a copy of r, its samples copied too, changed by f.
func edit(r *Report, f func(*Report)) *Report {
	c, s := *r, *r.Samples
	s.Connects = slices.Clone(s.Connects)
	s.AcceptErrors = maps.Clone(s.AcceptErrors)
	c.Samples = &s
	f(&c)
	return &c
}

func withPlan(r *Report, plan string) *Report {
	c := *r
	c.Plan = plan
	return &c
}

// TestShardsTogether: three shards replayed at once from one start
// against one broker merge into the counts of the whole plan replayed
// by one: every connect accepted once, every device recovered, and the
// wills each shard's observer counts are its own devices' alone.
func TestShardsTogether(t *testing.T) {
	b := embedded(t, BrokerOptions{})
	p := spread(90, 600*time.Millisecond)
	for k := range 30 { // a second connect for a third of them: their first connection is dropped, and the broker sends its will
		p.Connects = append(p.Connects, Connect{At: 800*time.Millisecond + time.Duration(k)*5*time.Millisecond, Device: int32(3 * k), Attempt: 1})
	}
	whole, err := Run(context.Background(), p, Options{Broker: b.Addr(), Hold: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(2 * time.Second) // room for a loaded machine to reach Run
	reps := make([]*Report, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reps[i], errs[i] = Run(context.Background(), p.Shard(i, 3), Options{Broker: b.Addr(), Hold: 300 * time.Millisecond,
				Shard: &Shard{I: i, N: 3}, StartAt: start})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	m, err := Merge(reps)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(m.Devices, m.ConnectsScheduled, m.ConnectsAttempted, m.ConnectsAccepted, m.Recovered, m.WillsDelivered, m.BusiestSeconds)
	if want := fmt.Sprint(whole.Devices, whole.ConnectsScheduled, whole.ConnectsAttempted, whole.ConnectsAccepted, whole.Recovered, whole.WillsDelivered, whole.BusiestSeconds); got != want || m.ConnectsAccepted != 120 || m.WillsDelivered != 30 {
		t.Errorf("merged shards: devices, scheduled, attempted, accepted, recovered, wills, busiest seconds %s; the whole %s (want 120 accepted, 30 wills)", got, want)
	}
}
