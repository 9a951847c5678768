package realcorpus

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// Truth is what a broker.log says of the outages.
//
// Died, Back, Reconnected and Lost describe the first outage (for the
// corpus's first scenarios, its only one); Outages describes each.
type Truth struct {
	// Died is when the first outage began (the recorder's kill or freeze
	// mark); Back when it ended (the restarted broker said it was running,
	// or the recorder restored the link); Stopped when the recorder began
	// to stop the fleet (the zero time if the log has no such mark).
	Died, Back, Stopped time.Time
	// Reconnected holds, for each client the broker had connected before
	// the first outage, its first accepted connect after Back (and before
	// the next outage) that the client kept: a connection the client
	// itself closed within Kept of its connect (two reconnect owners
	// racing, one tearing down the other's socket) never served it.
	Reconnected map[string]time.Time
	// Lost counts the clients the broker accepted before the first outage.
	Lost int
	// Connects holds every connect the broker accepted after Back and
	// before the fleet was stopped, in order: "New client connected ...
	// as ID"; PerClient counts them by client id.
	Connects  []time.Time
	PerClient map[string]int
	// PerClientAll counts by client id every connect the broker accepted
	// before the fleet was stopped, from the start of the log: before,
	// between and after the outages.
	PerClientAll map[string]int
	// ConnectsBy holds the times of those connects by client id, in
	// order: when a client lost in one outage and not back before the
	// next came back at last, for one.
	ConnectsBy map[string][]time.Time
	// Outages are the outages in the order they began.
	Outages []OutageTruth
	// Timeouts are the broker's keepalive timeouts, in order: "Client ID
	// has exceeded timeout, disconnecting."
	Timeouts []Timeout

	conn    map[string]bool      // the clients the broker has connected now
	pending map[string]time.Time // a client's first connect after Back, until it proves kept
}

// OutageTruth is one outage as the broker's log tells it.
type OutageTruth struct {
	Kind OutageKind // Kill, Freeze or Refuse
	// Start is the recorder's kill, freeze or refuse mark; Back the
	// restarted broker's "running" line (Kill) or the recorder's
	// link-restored (Freeze) or serving-again (Refuse) mark.
	Start, Back time.Time
	// Lost are the clients the broker had connected at Start, sorted: for a
	// Kill every one of them lost its connection; for a Freeze the broker
	// still held them and timed them out later.
	Lost []string
	// Reconnected holds each lost client's first connect the broker
	// accepted after Back and before the next outage began that the client
	// kept (see Truth.Reconnected); a lost client missing here had not
	// come back by the next outage (or by the stop mark).
	Reconnected map[string]time.Time
	// AppBack is when the recorder's application came back after the
	// outage (its mark), the zero time without one: no device can have
	// been served before it.
	AppBack time.Time
}

// lost reports whether client id is among o.Lost.
func (o *OutageTruth) lost(id string) bool {
	_, ok := slices.BinarySearch(o.Lost, id)
	return ok
}

// TTR returns each lost client's time to recover, from Start to its
// reconnect, sorted; clients that did not come back are left out.
func (o *OutageTruth) TTR() []time.Duration {
	var out []time.Duration
	for _, at := range o.Reconnected {
		out = append(out, at.Sub(o.Start))
	}
	slices.Sort(out)
	return out
}

// Timeout is a session the broker dropped because its client sent nothing
// for 1.5 keepalives.
type Timeout struct {
	At     time.Time
	Client string
}

// Kept is how long a client must keep a connection for it to count as
// its reconnect.
const Kept = 500 * time.Millisecond

// ParseBrokerLog reads a broker.log.
func ParseBrokerLog(r io.Reader) (*Truth, error) {
	t, up, err := readTruth(r)
	if err != nil {
		return nil, err
	}
	if len(t.Outages) == 0 {
		return nil, fmt.Errorf("broker.log: no kill, freeze or refuse mark")
	}
	if t.current().Back.IsZero() {
		return nil, fmt.Errorf("broker.log: the outage at %s never ended (no restart or restore)", t.current().Start.Format(StampTime))
	}
	t.closeOutage()
	first := &t.Outages[0]
	t.Died, t.Back, t.Reconnected, t.Lost = first.Start, first.Back, first.Reconnected, len(up)
	t.conn, t.pending = nil, nil
	return t, nil
}

// readTruth reads a broker.log as far as it goes, and returns the
// clients connected before the first outage.
func readTruth(r io.Reader) (*Truth, map[string]bool, error) {
	t := &Truth{PerClient: map[string]int{}, PerClientAll: map[string]int{}, ConnectsBy: map[string][]time.Time{}, conn: map[string]bool{},
		pending: map[string]time.Time{}}
	up := map[string]bool{} // connected before the first outage
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		stamp, msg, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			return nil, nil, fmt.Errorf("broker.log:%d: expected a stamp and a line", n)
		}
		at, err := time.Parse(StampTime, stamp)
		if err != nil {
			return nil, nil, fmt.Errorf("broker.log:%d: stamp: %w", n, err)
		}
		if err := t.take(at, msg, up); err != nil {
			return nil, nil, fmt.Errorf("broker.log:%d: %w", n, err)
		}
	}
	return t, up, sc.Err()
}

// current returns the outage under way or last ended, nil before the first.
func (t *Truth) current() *OutageTruth {
	if len(t.Outages) == 0 {
		return nil
	}
	return &t.Outages[len(t.Outages)-1]
}

// down reports whether an outage is under way.
func (t *Truth) down() bool {
	o := t.current()
	return o != nil && o.Back.IsZero()
}

// take reads one line of the log.
func (t *Truth) take(at time.Time, msg string, up map[string]bool) error {
	switch msg {
	case KillMark, FreezeMark, RefuseMark:
		if t.down() {
			return fmt.Errorf("%q while the outage of %s is under way", msg, t.current().Start.Format(StampTime))
		}
		t.closeOutage()
		o := OutageTruth{Kind: Kill, Start: at, Lost: slices.Sorted(maps.Keys(t.conn)), Reconnected: map[string]time.Time{}}
		switch msg {
		case FreezeMark:
			o.Kind = Freeze
		case RefuseMark:
			o.Kind = Refuse // the proxy closes every connection: the broker logs each close
		default:
			clear(t.conn) // every connection dies with the broker
		}
		t.Outages = append(t.Outages, o)
		return nil
	case RestoreMark, ServeMark:
		if o := t.current(); o != nil && (o.Kind == Freeze || o.Kind == Refuse) && o.Back.IsZero() {
			o.Back = at
		}
		return nil
	case StopMark:
		t.Stopped = at
		return nil
	case AppMark:
		if o := t.current(); o != nil {
			o.AppBack = at
		}
		return nil
	}
	// mosquitto's own lines begin with its one-second stamp
	_, text, _ := strings.Cut(msg, ": ")
	if t.down() && t.current().Kind == Kill {
		if containsRunning(text) {
			t.current().Back = at
		}
		return nil
	}
	t.settle(at)
	if id, ok := timedOut(text); ok {
		delete(t.conn, id)
		t.Timeouts = append(t.Timeouts, Timeout{At: at, Client: id})
		return nil
	}
	if id, ok := closedClient(text); ok {
		delete(t.conn, id)
		if p, ok := t.pending[id]; ok && at.Sub(p) < Kept && t.Stopped.IsZero() {
			delete(t.pending, id) // torn down at once: not its reconnect (the recorder stopping the fleet is not)
		}
		return nil
	}
	id, ok := connectedClient(text)
	if !ok || strings.HasPrefix(id, recorderClientPrefix) { // the recorder's own clients are no devices
		return nil
	}
	t.conn[id] = true
	if !t.Stopped.IsZero() {
		return nil
	}
	t.PerClientAll[id]++
	t.ConnectsBy[id] = append(t.ConnectsBy[id], at)
	o := t.current()
	if o == nil {
		up[id] = true
		return nil
	}
	if o.Back.IsZero() {
		return nil // through a frozen or refusing link: cannot be
	}
	t.Connects = append(t.Connects, at)
	t.PerClient[id]++
	_, seen := o.Reconnected[id]
	if _, waiting := t.pending[id]; !seen && !waiting && o.lost(id) {
		t.pending[id] = at
	}
	return nil
}

// closeOutage takes the connects still pending of the current outage as
// kept: the client did not close them (a new outage may have).
func (t *Truth) closeOutage() {
	if o := t.current(); o != nil {
		for id, at := range t.pending {
			o.Reconnected[id] = at
		}
	}
	clear(t.pending)
}

// settle takes the pending connects older than Kept at time now as kept.
func (t *Truth) settle(now time.Time) {
	o := t.current()
	for id, at := range t.pending {
		if now.Sub(at) >= Kept {
			o.Reconnected[id] = at
			delete(t.pending, id)
		}
	}
}

// closedClient returns the client id of a line that says the client
// closed its connection or had it closed for something the client did:
// "Client ID closed its connection.", "Client ID disconnected.", "Socket
// error on client ID, disconnecting." or "Client ID already connected,
// closing old connection." (the client connected again over it).
func closedClient(text string) (string, bool) {
	if rest, ok := strings.CutPrefix(text, "Socket error on client "); ok {
		return strings.CutSuffix(rest, ", disconnecting.")
	}
	rest, ok := strings.CutPrefix(text, "Client ")
	if !ok {
		return "", false
	}
	for _, end := range []string{" closed its connection.", " disconnected.", " already connected, closing old connection."} {
		if id, ok := strings.CutSuffix(rest, end); ok {
			return id, true
		}
	}
	return "", false
}

// timedOut returns the client id of a "Client ID has exceeded timeout,
// disconnecting." line.
func timedOut(text string) (string, bool) {
	rest, ok := strings.CutPrefix(text, "Client ")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, " has exceeded timeout, disconnecting.")
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

// TTR returns each lost client's time to recover from the first outage,
// from the broker's death to its first connect after it, sorted; clients
// that never came back are left out.
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
