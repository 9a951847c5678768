package replay

import (
	"errors"
	"net"
	"sync"
	"syscall"
	"time"
)

// localErrnos are the errors of a socket that this machine, not the
// broker, could not give: a descriptor, a local port, a buffer.
var localErrnos = []struct {
	errno syscall.Errno
	name  string
}{
	{syscall.EMFILE, "EMFILE (the process's descriptors)"},
	{syscall.ENFILE, "ENFILE (the system's descriptors)"},
	{syscall.EADDRNOTAVAIL, "EADDRNOTAVAIL (no local port)"},
	{syscall.EADDRINUSE, "EADDRINUSE (no local port)"},
	{syscall.ENOBUFS, "ENOBUFS (no socket buffer)"},
	{syscall.ENOMEM, "ENOMEM (no memory)"},
}

// localErrno names err when it is a failure of this machine (see
// localErrnos), "" otherwise.
func localErrno(err error) string {
	for _, e := range localErrnos {
		if errors.Is(err, e.errno) {
			return e.name
		}
	}
	return ""
}

// due returns when connect i is due, from the replay's start.
func (r *run) due(i int) time.Duration { return dueAt(r.plan.Connects[i].At, r.opts.Speed) }

// steadyListener is the embedded broker's listener: it counts the
// connections it could not accept for a reason of this machine, and
// waits and tries again, as net/http's server does, where mochi's own
// listener would stop accepting for good at the first (a replay that ran
// out of descriptors left the broker deaf for the rest of the run, and
// every later connect timed out as if the broker had failed).
type steadyListener struct {
	net.Listener
	errs *acceptErrors
}

// Accept returns the next connection; it waits out a local failure
// (5 ms, doubling to 1 s) and returns other errors.
func (l steadyListener) Accept() (net.Conn, error) {
	wait := 5 * time.Millisecond
	for {
		c, err := l.Listener.Accept()
		name := localErrno(err)
		if err == nil || name == "" {
			return c, err
		}
		l.errs.add(name)
		time.Sleep(wait)
		wait = min(2*wait, time.Second)
	}
}

// acceptErrors counts a listener's local failures by error.
type acceptErrors struct {
	mu sync.Mutex
	n  map[string]int64
}

func (a *acceptErrors) add(name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.n == nil {
		a.n = map[string]int64{}
	}
	a.n[name]++
}

// counts returns a copy of the counts.
func (a *acceptErrors) counts() map[string]int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]int64, len(a.n))
	for k, v := range a.n {
		out[k] = v
	}
	return out
}
