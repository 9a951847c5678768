package realcorpus

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// Truth is what a broker.log says of the outage.
type Truth struct {
	// Died is when the recorder killed the broker; Back when the restarted
	// broker said it was running; Stopped when the recorder began to stop
	// the fleet (the zero time if the log has no such mark).
	Died, Back, Stopped time.Time
	// Reconnected holds, for each client the broker had connected before
	// it died, its first accepted connect after Back that the client kept:
	// a connection the client itself closed within Kept of its connect
	// (two reconnect owners racing, one tearing down the other's socket)
	// never served it.
	Reconnected map[string]time.Time
	// Lost counts the clients connected when the broker died.
	Lost int
	// Connects holds every connect the restarted broker accepted before
	// the fleet was stopped, in order: "New client connected ... as ID";
	// PerClient counts them by client id.
	Connects  []time.Time
	PerClient map[string]int

	pending map[string]time.Time // a client's first connect after Back, until it proves kept
}

// Kept is how long a client must keep a connection for it to count as
// its reconnect.
const Kept = 500 * time.Millisecond

// ParseBrokerLog reads a broker.log.
func ParseBrokerLog(r io.Reader) (*Truth, error) {
	t := &Truth{Reconnected: map[string]time.Time{}, PerClient: map[string]int{}, pending: map[string]time.Time{}}
	up := map[string]bool{} // connected before the broker died
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		stamp, msg, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			return nil, fmt.Errorf("broker.log:%d: expected a stamp and a line", n)
		}
		at, err := time.Parse(StampTime, stamp)
		if err != nil {
			return nil, fmt.Errorf("broker.log:%d: stamp: %w", n, err)
		}
		t.take(at, msg, up)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if t.Died.IsZero() || t.Back.IsZero() {
		return nil, fmt.Errorf("broker.log: no kill and restart marks")
	}
	t.Lost = len(up)
	for id, at := range t.pending {
		t.Reconnected[id] = at
	}
	t.pending = nil
	return t, nil
}

// take reads one line of the log.
func (t *Truth) take(at time.Time, msg string, up map[string]bool) {
	switch msg {
	case KillMark:
		t.Died = at
		return
	case StopMark:
		t.Stopped = at
		return
	}
	// mosquitto's own lines begin with its one-second stamp
	_, text, _ := strings.Cut(msg, ": ")
	if !t.Died.IsZero() && t.Back.IsZero() {
		if strings.HasPrefix(text, "mosquitto version ") && strings.HasSuffix(text, " running") {
			t.Back = at
		}
		return
	}
	t.settle(at)
	if id, ok := closedClient(text); ok {
		if p, ok := t.pending[id]; ok && at.Sub(p) < Kept {
			delete(t.pending, id) // torn down at once: not its reconnect
		}
		return
	}
	id, ok := connectedClient(text)
	if !ok {
		return
	}
	if t.Died.IsZero() {
		up[id] = true
		return
	}
	if !t.Stopped.IsZero() {
		return
	}
	t.Connects = append(t.Connects, at)
	t.PerClient[id]++
	_, seen := t.Reconnected[id]
	if _, waiting := t.pending[id]; !seen && !waiting && up[id] {
		t.pending[id] = at
	}
}

// settle takes the pending connects older than Kept at time now as kept.
func (t *Truth) settle(now time.Time) {
	for id, at := range t.pending {
		if now.Sub(at) >= Kept {
			t.Reconnected[id] = at
			delete(t.pending, id)
		}
	}
}

// closedClient returns the client id of a line that says the client
// closed its connection: "Client ID closed its connection." or "Client
// ID disconnected.".
func closedClient(text string) (string, bool) {
	rest, ok := strings.CutPrefix(text, "Client ")
	if !ok {
		return "", false
	}
	for _, end := range []string{" closed its connection.", " disconnected."} {
		if id, ok := strings.CutSuffix(rest, end); ok {
			return id, true
		}
	}
	return "", false
}

// connectedClient returns the client id of a "New client connected from
// ADDR as ID (p2, c0, k30)." line.
func connectedClient(text string) (string, bool) {
	rest, ok := strings.CutPrefix(text, "New client connected from ")
	if !ok {
		return "", false
	}
	_, rest, ok = strings.Cut(rest, " as ")
	if !ok {
		return "", false
	}
	id, _, ok := strings.Cut(rest, " (")
	return id, ok
}

// TTR returns each lost client's time to recover, from the broker's death
// to its first connect after it, sorted; clients that never came back are
// left out.
func (t *Truth) TTR() []time.Duration {
	var out []time.Duration
	for _, at := range t.Reconnected {
		out = append(out, at.Sub(t.Died))
	}
	slices.Sort(out)
	return out
}

// Rank returns the nearest-rank p-quantile of sorted xs.
func Rank(xs []time.Duration, p float64) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	k := int(math.Ceil(p*float64(len(xs)))) - 1
	return xs[min(max(k, 0), len(xs)-1)]
}

// PeakPerSecond returns the most connects in any window [t, t+1s) and
// the window's start.
func (t *Truth) PeakPerSecond() (int, time.Time) {
	best, at, j := 0, time.Time{}, 0
	for i, c := range t.Connects {
		for j < len(t.Connects) && t.Connects[j].Sub(c) < time.Second {
			j++
		}
		if j-i > best {
			best, at = j-i, c
		}
	}
	return best, at
}

// containsRunning reports whether a mosquitto line says it is running.
func containsRunning(line string) bool {
	return strings.Contains(line, "mosquitto version ") && strings.HasSuffix(line, " running")
}
