package analyze

import (
	"math"
	"slices"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// Ref says where a record is: the dataset file (an index into
// Result.Files) and row, and the input (an index into Result.Sources) and
// line it was read from.
type Ref struct {
	File   int32
	Source int32
	Row    int64
	Line   int64
}

// Event is one audit record as the analyzers see it.
type Event struct {
	At       int64   // recorded_at, Unix nanoseconds
	Delay    float64 // backoff_delay_s
	Ceiling  float64 // ceiling_s; NaN when absent
	Attempt  int64
	Seq      int64 // device_seq; -1 when absent
	Reason   int32 // reason_code; -1 when absent
	Outcome  auditfmt.Outcome
	Fail     auditfmt.FailureClass
	Stage    auditfmt.Stage
	Clean    bool
	Presence int8 // session_present: -1 absent, 0 false, 1 true
	Ref      Ref
}

// Attempt is one connect attempt of a device: the backoff_wait that began
// it, the waits the rate limit imposed, and the record of its outcome.
type Attempt struct {
	Number   int64   // the attempt counter of its backoff_wait
	Start    int64   // when the backoff_wait was recorded, Unix ns
	Delay    float64 // the delay drawn, s
	Ceiling  float64 // ceiling_s of the backoff_wait; NaN when absent
	Wait     float64 // rate_limited_wait imposed before the socket-open, s
	Open     int64   // the derived socket-open: Start + Delay + Wait, Unix ns
	Backoff  int     // index in Device.Events of the backoff_wait
	Outcome  int     // index of the outcome record; -1 when none was recorded
	Stage    auditfmt.Stage
	AfterErr auditfmt.FailureClass // failure class of the failure before it, 0 if none
}

// NoTime marks a time that has not come: the end of a session still up at
// the end of the log, of an outage not over, the loss of a device that
// never lost its connection. (Times before 1970 are negative, so no
// small negative number will do.)
const NoTime = math.MinInt64

// Session is a connected interval: from a connected record to the record
// that ended it (a disconnected record or a new attempt), or to the end of
// the device's records.
type Session struct {
	Up, Down int64 // Unix ns; Down is NoTime while the session is still up at the end
	UpIndex  int   // index in Device.Events of the connected record
}

// Episode is an outage of one device: from the record that shows the
// connection lost (disconnected, or the first attempt) to the connected
// record that ended it, if any.
type Episode struct {
	Start, End int64 // Unix ns; End is NoTime when the device did not reconnect
	Attempts   int   // attempts made during it
}

// Device is one client's reconstructed timeline.
type Device struct {
	ID     string
	Host   string  // host_id of its records ("" if none); the last one if they differ
	Hosts  int     // distinct host_ids among its records
	Clean  bool    // clean_session of its last record
	Mixed  bool    // whether clean_session changed among its records
	Events []Event // in the device's own order (see Build)

	Attempts []Attempt
	Sessions []Session
	Episodes []Episode
}

// seqComplete reports whether every event carries a device_seq.
func (d *Device) seqComplete() bool {
	for i := range d.Events {
		if d.Events[i].Seq < 0 {
			return false
		}
	}
	return true
}

// seqIncreasing reports whether the events' device_seq strictly increase.
func (d *Device) seqIncreasing() bool {
	for i := 1; i < len(d.Events); i++ {
		if d.Events[i].Seq <= d.Events[i-1].Seq {
			return false
		}
	}
	return true
}

// clone returns a copy of d that shares no memory with it.
func (d *Device) clone() *Device {
	c := *d
	c.Events, c.Attempts = slices.Clone(d.Events), slices.Clone(d.Attempts)
	c.Sessions, c.Episodes = slices.Clone(d.Sessions), slices.Clone(d.Episodes)
	return &c
}

// reset empties d for the device id, keeping its slices' memory.
func (d *Device) reset(id string) {
	*d = Device{ID: id, Events: d.Events[:0], Attempts: d.Attempts[:0], Sessions: d.Sessions[:0], Episodes: d.Episodes[:0]}
}

// Build orders the device's events and derives its attempts, sessions and
// episodes. The device's own order is device_seq when every record has
// one and no number repeats, else the order it wrote them in (input and
// line); recorded_at is not trusted to order a device's records, since its
// clock may be wrong.
func (d *Device) Build() {
	bySeq := func(a, b Event) int { return cmp64(a.Seq, b.Seq) }
	byLine := func(a, b Event) int {
		if a.Ref.Source != b.Ref.Source {
			return cmp64(int64(a.Ref.Source), int64(b.Ref.Source))
		}
		return cmp64(a.Ref.Line, b.Ref.Line)
	}
	seq := d.seqComplete()
	order := byLine
	if seq {
		order = bySeq
	}
	if !slices.IsSortedFunc(d.Events, order) {
		slices.SortStableFunc(d.Events, order)
	}
	if seq && !d.seqIncreasing() {
		// a counter that restarted (a reboot) orders nothing: fall back
		slices.SortStableFunc(d.Events, byLine)
	}
	d.Attempts, d.Sessions, d.Episodes = d.Attempts[:0], d.Sessions[:0], d.Episodes[:0]
	var cur *Attempt
	var lastFail auditfmt.FailureClass
	up := -1 // index in Sessions of the open session
	ep := -1 // index in Episodes of the open episode
	endSession := func(at int64) {
		if up >= 0 {
			d.Sessions[up].Down, up = at, -1
		}
	}
	openEpisode := func(at int64) {
		if ep < 0 {
			d.Episodes = append(d.Episodes, Episode{Start: at, End: NoTime})
			ep = len(d.Episodes) - 1
		}
	}
	for i := range d.Events {
		e := &d.Events[i]
		switch e.Outcome {
		case auditfmt.Disconnected:
			endSession(e.At)
			openEpisode(e.At)
			cur, lastFail = nil, 0
		case auditfmt.BackoffWait:
			endSession(e.At)
			openEpisode(e.At)
			d.Episodes[ep].Attempts++
			d.Attempts = append(d.Attempts, Attempt{Number: e.Attempt, Start: e.At, Delay: e.Delay, Ceiling: e.Ceiling,
				Backoff: i, Outcome: -1, Stage: e.Stage, AfterErr: lastFail})
			cur = &d.Attempts[len(d.Attempts)-1]
			cur.Open = addSat(e.At, nanos(e.Delay))
			lastFail = 0
		case auditfmt.RateLimitedWait:
			if cur != nil && cur.Outcome < 0 {
				cur.Wait += e.Delay
				cur.Open = addSat(cur.Open, nanos(e.Delay))
			}
		case auditfmt.AttemptFailed, auditfmt.Refused:
			if cur != nil && cur.Outcome < 0 {
				cur.Outcome = i
			}
			lastFail = e.Fail
			switch {
			case authFailure(e):
				lastFail = auditfmt.FailAuth // a reason code says so even without a failure_class
			case lastFail == 0:
				lastFail = auditfmt.FailUnknown
			}
		case auditfmt.GaveUp, auditfmt.Stopped:
			endSession(e.At)
			cur = nil
		case auditfmt.Connected:
			if cur != nil && cur.Outcome < 0 {
				cur.Outcome = i
			}
			if ep >= 0 {
				d.Episodes[ep].End, ep = e.At, -1
			}
			endSession(e.At)
			d.Sessions = append(d.Sessions, Session{Up: e.At, Down: NoTime, UpIndex: i})
			up = len(d.Sessions) - 1
			lastFail = 0
		}
	}
	d.summarise()
}

func (d *Device) summarise() {
	d.Mixed = false
	for i := range d.Events {
		e := &d.Events[i]
		if i > 0 && e.Clean != d.Events[i-1].Clean {
			d.Mixed = true
		}
		d.Clean = e.Clean
	}
}

// openInLog reports whether the log shows the socket-open of attempt a of d:
// its outcome was recorded, or the device wrote a record at or after the
// open. A last attempt still waiting when the device's records end (the
// log was collected before its socket-open, or the device stopped) is
// not counted: a rate limit may yet have deferred it.
func openInLog(d *Device, a *Attempt) bool {
	return a.Outcome >= 0 || len(d.Events) > 0 && a.Open <= d.Events[len(d.Events)-1].At
}

// Recovered reports whether the device ends connected after an outage,
// and when it connected for good.
func (d *Device) Recovered() (at int64, ok bool) {
	if len(d.Sessions) == 0 || d.Sessions[len(d.Sessions)-1].Down != NoTime {
		return 0, false
	}
	return d.Sessions[len(d.Sessions)-1].Up, true
}

// LostAt returns when the device first lost its connection: the start of
// its first episode, or NoTime if it never did.
func (d *Device) LostAt() int64 {
	if len(d.Episodes) == 0 {
		return NoTime
	}
	return d.Episodes[0].Start
}

// addSat returns a+d for d >= 0, saturating at math.MaxInt64.
func addSat(a, d int64) int64 {
	if a > math.MaxInt64-d {
		return math.MaxInt64
	}
	return a + d
}

func nanos(s float64) int64 {
	if !(s < 1e9) {
		return math.MaxInt64 / 4
	}
	return int64(math.Round(s * 1e9))
}

func cmp64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
