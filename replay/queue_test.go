package replay

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// returning is a plan of n devices, each connecting once, the first at
// first and the others every gap after it.
func returning(n int, first, gap time.Duration) *Plan {
	p := &Plan{Name: "test"}
	for i := range n {
		p.Devices = append(p.Devices, Device{ID: fmt.Sprintf("dev-%05d", i), Keepalive: 30})
		p.Connects = append(p.Connects, Connect{At: first + gap*time.Duration(i), Device: int32(i)})
	}
	return p
}

// redelivery returns the counts of rep's redelivery that a test holds
// exactly.
func redelivery(rep *Report) string {
	return fmt.Sprintf("published %d, redelivered %d, dup-flagged %d, duplicates %d, lost %d, drained %d",
		rep.Published, rep.Redelivered, rep.DupFlagged, rep.Duplicates, rep.Lost, rep.Drained)
}

// TestQueuedEmbedded: every device away from the start gets the messages
// published for it while it was away on its return, at QoS 1 and 2, in
// both protocols; nothing is lost or duplicated, and the embedded broker
// (mochi) flags every message it sends from a session's store with DUP.
func TestQueuedEmbedded(t *testing.T) {
	b := embedded(t, BrokerOptions{})
	for _, proto := range []byte{MQTT311, MQTT5} {
		for _, qos := range []byte{1, 2} {
			rep, err := Run(context.Background(), returning(20, time.Second, 10*time.Millisecond), Options{Broker: b.Addr(),
				Protocol: proto, Hold: 100 * time.Millisecond, Queue: &Queue{Messages: 10, QoS: qos}, Setup: b.Setup})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := redelivery(rep), "published 200, redelivered 200, dup-flagged 200, duplicates 0, lost 0, drained 20"; got != want {
				t.Errorf("protocol %d, QoS %d: %s, want %s", proto, qos, got, want)
			}
			if rep.RedeliveryPeakPerS == 0 || rep.Waves == nil || sum(rep.Waves.Redelivered) != 200 || sum(rep.Waves.Connects) != 20 {
				t.Errorf("protocol %d, QoS %d: peak %d, waves %+v", proto, qos, rep.RedeliveryPeakPerS, rep.Waves)
			}
		}
	}
	if got := b.Accepted(); got != 80 {
		t.Errorf("the broker counted %d connects, want the replays' 80 (not the set-up's)", got)
	}
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// TestQueuedLimits: a session holds at most --max-queued messages (the
// rest are lost), and with --max-inflight 1 a device that takes 20 ms to
// acknowledge each of 10 messages drains in no less than 180 ms, where
// without the window the broker sends them all at once.
func TestQueuedLimits(t *testing.T) {
	q := &Queue{Messages: 10, QoS: 1, AckDelay: 20 * time.Millisecond}
	for _, tc := range []struct {
		opts BrokerOptions
		want string
		slow bool // drains no faster than one message an ack delay
	}{
		{BrokerOptions{MaxQueued: 4}, "published 50, redelivered 20, dup-flagged 20, duplicates 0, lost 30, drained 0", false},
		{BrokerOptions{}, "published 50, redelivered 50, dup-flagged 50, duplicates 0, lost 0, drained 5", false},
		{BrokerOptions{MaxInflight: 1}, "published 50, redelivered 50, dup-flagged 50, duplicates 0, lost 0, drained 5", true},
		{BrokerOptions{MaxQueued: 6, MaxInflight: 2}, "published 50, redelivered 40, dup-flagged 40, duplicates 0, lost 10, drained 0", true},
	} {
		b := embedded(t, tc.opts)
		rep, err := Run(context.Background(), returning(5, time.Second, 10*time.Millisecond), Options{Broker: b.Addr(),
			Hold: 100 * time.Millisecond, Queue: q, Setup: b.Setup})
		if err != nil {
			t.Fatal(err)
		}
		if got := redelivery(rep); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.opts, got, tc.want)
		}
		if tc.slow && rep.Drained > 0 && rep.DrainP50S < 0.18 || !tc.slow && rep.DrainP99S >= 0.18 {
			t.Errorf("%+v: drained in p50 %.3f s, p99 %.3f s", tc.opts, rep.DrainP50S, rep.DrainP99S)
		}
		for _, d := range rep.PerDevice {
			if tc.slow && d.DrainS >= 0 && d.DrainS < 0.18 {
				t.Errorf("%+v: %s drained in %.3f s", tc.opts, d.ClientID, d.DrainS)
			}
		}
	}
}

// restartPlan is the plan of TestQueuedBrokerRestart: devices 0-9 come
// back at 500 ms, are dropped by the broker's restart at 750 ms (down
// 50 ms) with their 5 messages received and none acknowledged (each
// takes a device 1 s), and connect again at 1 s; devices 10-19 are away
// across the restart and come back at 2.5 s. Their messages are
// published at 0, 100 ... 400 ms and at 0, 500 ... 2,000 ms: none within
// 100 ms of a return or 250 ms of the restart, so that a loaded machine's
// lateness does not move one to the other side.
func restartPlan() *Plan {
	p := &Plan{Name: "test"}
	for i := range 20 {
		p.Devices = append(p.Devices, Device{ID: fmt.Sprintf("dev-%05d", i), Keepalive: 30})
	}
	for _, at := range []time.Duration{500 * time.Millisecond, time.Second} {
		for i := range 10 {
			p.Connects = append(p.Connects, Connect{At: at, Device: int32(i)})
		}
	}
	for i := 10; i < 20; i++ {
		p.Connects = append(p.Connects, Connect{At: 2500 * time.Millisecond, Device: int32(i)})
	}
	return p
}

// restartQueue is the queue of TestQueuedBrokerRestart.
var restartQueue = Queue{Messages: 5, QoS: 1, AckDelay: time.Second}

// restartAt is the broker restart of TestQueuedBrokerRestart.
func restartAt(stop, start func() error) *Restart {
	return &Restart{At: 750 * time.Millisecond, Down: 50 * time.Millisecond, Stop: stop, Start: start}
}

// TestQueuedBrokerRestart restarts the embedded broker mid-drain, and
// counts duplicates and losses exactly. With persistence the sessions
// survive: devices 0-9 get their 5 messages again (QoS 1 redelivers
// what was not acknowledged, with DUP), 50 duplicates, and devices 10-19
// lose nothing. Without it, devices 0-9 got theirs before the restart,
// and devices 10-19 lose all 50: those held in the sessions the restart
// forgot, and those published while they had none.
func TestQueuedBrokerRestart(t *testing.T) {
	for _, tc := range []struct {
		persistent bool
		want       string
	}{
		// mochi flags with DUP all it sends from a session's store: 5 a
		// device on return, 5 more after the restart
		{true, "published 100, redelivered 150, dup-flagged 150, duplicates 50, lost 0, drained 20"},
		{false, "published 100, redelivered 50, dup-flagged 50, duplicates 0, lost 50, drained 10"},
	} {
		b := embedded(t, BrokerOptions{Persistent: tc.persistent})
		rep, err := Run(context.Background(), restartPlan(), Options{Broker: b.Addr(), Queue: &restartQueue, Setup: b.Setup,
			Restart: restartAt(b.Stop, b.Start)})
		if err != nil {
			t.Fatal(err)
		}
		if got := redelivery(rep); got != tc.want {
			t.Errorf("persistent %v: %s, want %s", tc.persistent, got, tc.want)
		}
		checkPerDevice(t, rep, tc.persistent)
	}
}

// checkPerDevice holds each device of TestQueuedBrokerRestart to its
// group's counts.
func checkPerDevice(t *testing.T, rep *Report, persistent bool) {
	t.Helper()
	for i, d := range rep.PerDevice {
		want := DeviceRedelivery{ClientID: d.ClientID, Published: 5, Redelivered: 5, DupFlagged: d.DupFlagged, DrainS: d.DrainS}
		switch {
		case i < 10 && persistent:
			want.Redelivered, want.Duplicates = 10, 5
		case i >= 10 && !persistent:
			want.Redelivered, want.Lost = 0, 5
		}
		if d.DupFlagged < d.Duplicates {
			t.Errorf("%s: %d duplicates, %d of them flagged DUP", d.ClientID, d.Duplicates, d.DupFlagged)
		}
		if d != want {
			t.Errorf("persistent %v: %+v, want %+v", persistent, d, want)
		}
	}
}

// TestQueuedMosquitto: the same against Mosquitto, with persistence on,
// restarted with SIGTERM (it saves its sessions) mid-drain: the messages
// sent before the restart and not acknowledged come again with DUP, and
// Mosquitto flags only those (a queued message's first sending has no
// DUP).
func TestQueuedMosquitto(t *testing.T) {
	var logBuf bytes.Buffer
	// Mosquitto started as root saves as its own user: a directory it can
	// reach and write to
	dir, err := os.MkdirTemp("", "mosquitto-db-")
	if err == nil {
		err = os.Chmod(dir, 0o777)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	m := startMosquitto(t, fmt.Sprintf("persistence true\npersistence_location %s/\n", dir), &logBuf)
	rep, err := Run(context.Background(), restartPlan(), Options{Broker: m.Addr(), Queue: &restartQueue,
		Restart: restartAt(m.Stop, m.Start)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := redelivery(rep), "published 100, redelivered 150, dup-flagged 50, duplicates 50, lost 0, drained 20"; got != want {
		t.Errorf("%s, want %s\n%s", got, want, logBuf.String())
	}
	checkPerDevice(t, rep, true)
}

// TestSessionKeptOrMadeAgain: the third connect of prime finds a
// persistent session kept, and makes one where the broker has none (as
// when a late-ended clearing connection made it forget it), so that
// every queue is there when the plan starts. (The race itself is not
// made here: it needs the broker's goroutine paused between two lines.)
func TestSessionKeptOrMadeAgain(t *testing.T) {
	b := embedded(t, BrokerOptions{})
	r := &run{ctx: context.Background(), opts: Options{Broker: b.Addr(), Protocol: MQTT311, ConnectTimeout: DefaultConnectTimeout,
		Queue: &Queue{Messages: 1, QoS: 1}}}
	id := "dev-kept"
	for _, step := range []struct {
		clean, lost bool
		want        bool // kept
		what        string
	}{
		{false, true, false, "a device the broker has no session of (never seen, or forgotten): none kept, one made"},
		{false, true, true, "the session just made: kept, not made again"},
		{false, true, true, "and still kept"},
	} {
		kept, err := r.session(id, step.clean, QueueTopic(id), step.lost)
		if err != nil {
			t.Fatalf("%s: %v", step.what, err)
		}
		if kept != step.want {
			t.Errorf("%s: kept %v", step.what, kept)
		}
		b.mu.Lock()
		_, subscribed := b.srv.Topics.Subscribers(QueueTopic(id)).Subscriptions[id]
		b.mu.Unlock()
		if !subscribed {
			t.Errorf("%s: the session holds no subscription to the queue", step.what)
		}
	}
}

// TestQueuedExpiry: three messages queued for each device while it is
// away 12 s, published 12, 8 and 4 s before its return, valid for 6 s.
// Over MQTT 5 each carries the expiry and Mosquitto drops the two that
// expired while queued: the device receives one, nothing stale, and the
// two are counted expired, not lost. Over 3.1.1 nothing carries it: all
// three come, and the two older than 6 s are counted stale. Either way
// every device drained what it could receive.
func TestQueuedExpiry(t *testing.T) {
	m := startMosquitto(t, "", new(bytes.Buffer))
	for _, tc := range []struct {
		proto byte
		want  string
	}{
		{MQTT5, "redelivered 5, stale 0, expired 10, lost 0, drained 5"},
		{MQTT311, "redelivered 15, stale 10, expired 0, lost 0, drained 5"},
	} {
		t.Run(fmt.Sprint(tc.proto), func(t *testing.T) {
			t.Parallel()
			plan := returning(5, 12*time.Second, 10*time.Millisecond)
			for i := range plan.Devices {
				plan.Devices[i].ID = fmt.Sprintf("exp%d-%d", tc.proto, i)
			}
			rep, err := Run(context.Background(), plan, Options{Broker: m.Addr(), Protocol: tc.proto, Hold: 200 * time.Millisecond,
				Queue: &Queue{Messages: 3, QoS: 1, Expiry: 6 * time.Second}})
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("redelivered %d, stale %d, expired %d, lost %d, drained %d", rep.Redelivered, rep.Stale, rep.Expired, rep.Lost, rep.Drained)
			if got != tc.want || rep.ExpiryS != 6 {
				t.Errorf("%s (expiry %gs), want %s", got, rep.ExpiryS, tc.want)
			}
		})
	}
}
