package replay

import (
	"context"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestLocalFailuresAreNotTheBrokers: a replay that runs out of
// descriptors counts its failed connects as this machine's, and the
// embedded broker's failures to accept too, never as the broker's
// ("failed (no broker)"), and is inconclusive; the embedded broker
// accepts again once descriptors are free (mochi's own listener stopped
// for good at the first failure).
func TestLocalFailuresAreNotTheBrokers(t *testing.T) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Skip("no RLIMIT_NOFILE here:", err)
	}
	b := embedded(t, BrokerOptions{})
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd here:", err)
	}
	low := lim
	low.Cur = uint64(len(fds) + 40) // room for about 20 devices and the broker's ends
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), spread(120, 200*time.Millisecond), Options{Broker: b.Addr(), Wills: b.Wills, AcceptErrors: b.AcceptErrors,
		ConnectTimeout: time.Second, Hold: 50 * time.Millisecond})
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	rep.Judge(DefaultConnackSLO, time.Minute)
	local := 0
	for _, n := range rep.LocalErrors {
		local += n
	}
	if rep.ConnectsFailed != 0 || local == 0 || !rep.Inconclusive || rep.Held {
		t.Errorf("out of descriptors: %d failed (no broker), %d local errors %v, inconclusive %v: %s", rep.ConnectsFailed, local, rep.LocalErrors, rep.Inconclusive, rep.Verdict)
	}
	rep, err = Run(context.Background(), spread(20, 50*time.Millisecond), Options{Broker: b.Addr(), Wills: b.Wills, Hold: 50 * time.Millisecond})
	if err != nil || rep.ConnectsAccepted != 20 {
		t.Errorf("with descriptors again: %v, %d of 20 accepted", err, rep.ConnectsAccepted)
	}
}
