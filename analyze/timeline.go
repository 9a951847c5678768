package analyze

import (
	"math"
	"slices"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// Ref says where a record is: the dataset file (an index into
// Result.Files) and row, and the input (an index into Result.Sources) and
// line it was read from. File is -1 for a record read without a dataset;
// Row is -1 too for a line that is no record (a line rejected at ingest).
type Ref struct {
	File   int32
	Source int32
	Row    int64
	Line   int64
}

// Event is one audit record as the analyzers see it. The analyzers hold
// millions: the 8-byte fields come first and the smaller ones after, so
// that the only padding is what rounds those up to 8 bytes.
type Event struct {
	At          int64   // recorded_at, Unix nanoseconds
	Delay       float64 // backoff_delay_s
	Ceiling     float64 // ceiling_s; NaN when absent
	Attempt     int64
	Seq         int64  // device_seq; -1 when absent
	Outbox      int64  // outbox_depth; -1 when absent
	Flushed     int64  // outbox_flushed; -1 when absent
	Redelivered int64  // inbound_redelivered; -1 when absent
	Duplicates  int64  // inbound_duplicates; -1 when absent
	AttemptKey  uint64 // a 64-bit hash of attempt_id (see AttemptKey); 0 when absent
	// Dropped and Expired are outbox_dropped and inbound_expired, -1 when
	// absent, at most math.MaxInt32 (a greater count is held as that: see
	// docs/rules.md, "What an outage cost"); they fill what was padding
	Dropped, Expired int32
	Reason           int16 // reason_code (0..255); -1 when absent
	Outcome          auditfmt.Outcome
	Fail             auditfmt.FailureClass
	Stage            auditfmt.Stage
	Clean            bool
	Presence         int8 // session_present: -1 absent, 0 false, 1 true
	Ref              Ref
}

// AttemptKey returns the key Event.AttemptKey holds for the attempt_id id:
// the FNV-1a 64 hash of its bytes, 1 for a hash of 0 (0 is no attempt_id).
// Equal ids give equal keys; different ids rarely do (among n ids, two
// share a key with a chance of about n²/2^65), so a rule that joins
// records by attempt reads a shared key as "the same attempt, almost
// surely". It does not allocate.
func AttemptKey(id string) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := 0; i < len(id); i++ {
		h = (h ^ uint64(id[i])) * prime
	}
	return max(h, 1)
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
//
// An episode is a loss unless it is a start: the records of a device that
// has not been connected before them (in this stage, in the log, or since
// it was stopped) and that did not record a disconnect are the device
// starting, not recovering. A loss is inferred when the log has no record
// of it: the episode began with a new attempt after a connected record.
type Episode struct {
	Start, End int64 // Unix ns; End is NoTime when the device did not reconnect
	Attempts   int   // attempts made during it
	// First and Last are the indices in Device.Events of the record that
	// began it and of the connected record that ended it (-1 if none).
	First, Last int
	Starting    bool // a start, not a loss
	Inferred    bool // a loss the log has no record of
	// Churn is true for an inferred loss without evidence: its one attempt
	// connected within PromptConnect of its socket-open, and nothing
	// failed. The device reconnected while connected; it lost nothing.
	Churn bool
	// Lost is when the connection was lost, as best the records say: Start,
	// but for an inferred loss of a device that churns (its backoff_wait
	// is a reconnect it chose, not the loss noticed), the socket-open of the
	// episode's first attempt, the first sign that the broker was gone.
	Lost int64
}

// Loss reports whether the episode is a lost connection: not a start,
// and not churn.
func (e *Episode) Loss() bool { return !e.Starting && !e.Churn }

// StageLine is the timeline of one stage other than the MQTT session: a
// device that records its link (Wi-Fi, modem) or address (DHCP, DNS)
// attempts has one for each, built from that stage's records alone as the
// session's is from its own.
type StageLine struct {
	Stage    auditfmt.Stage
	Sessions []Session
	Episodes []Episode
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
	Sessions []Session // of the MQTT session stage (stage absent or "session")
	Episodes []Episode
	// Stages holds the sessions and episodes of the other stages (link,
	// address) when the device's records have them. Attempts holds every
	// stage's attempts, each with its Stage.
	Stages []StageLine
	// Reordered counts the connected records Build moved before the
	// counter reset they caused (see ReorderWindow), and ReorderGap is the
	// widest gap between such a pair.
	Reordered  int
	ReorderGap int64
	// Secrets are the values of its records, other than its client_id,
	// that look like credentials or hardware identifiers (secret-in-log).
	Secrets []Secret

	refs int32 // consumers still reading it (fanOut)
}

// ReorderWindow is how far apart two threads of one client may write a
// counter reset and the connected record that caused it, in the wrong
// order, for Build to put them back in the order they happened.
const ReorderWindow = 50 * time.Millisecond

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
	c.Stages, c.Secrets = slices.Clone(d.Stages), slices.Clone(d.Secrets)
	for i := range c.Stages {
		c.Stages[i].Sessions, c.Stages[i].Episodes = slices.Clone(c.Stages[i].Sessions), slices.Clone(c.Stages[i].Episodes)
	}
	return &c
}

// reset empties d for the device id, keeping its slices' memory.
func (d *Device) reset(id string) {
	*d = Device{ID: id, Events: d.Events[:0], Attempts: d.Attempts[:0], Sessions: d.Sessions[:0], Episodes: d.Episodes[:0], Stages: d.Stages[:0], Secrets: d.Secrets[:0], refs: d.refs}
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
		seq = false
	}
	d.Reordered, d.ReorderGap = 0, 0
	if !seq {
		d.reorder()
	}
	d.Attempts, d.Sessions, d.Episodes, d.Stages = d.Attempts[:0], d.Sessions[:0], d.Episodes[:0], d.Stages[:0]
	var st [auditfmt.StageService + 1]stageBuild
	for k := range st {
		st[k] = stageBuild{cur: -1, up: -1, ep: -1}
	}
	for i := range d.Events {
		e := &d.Events[i]
		k := e.Stage
		if k == 0 || k > auditfmt.StageService {
			k = auditfmt.StageSession
		}
		d.step(&st[k], i)
	}
	d.judgeLosses(d.Episodes)
	for i := range d.Stages {
		d.judgeLosses(d.Stages[i].Episodes)
	}
	d.summarise()
}

// reorder puts back in the order they happened a counter reset and the
// connected record that caused it, when two threads of one client wrote
// them the other way round: a session-stage counter record (backoff_wait,
// attempt_failed, refused) whose attempt is lower than the counter record
// before it (since the client last stopped or gave up), with no connected
// record since, immediately followed by a connected record of the session
// stage stamped within ReorderWindow of it, and, for a backoff_wait,
// before its own socket-open could have been due (else the connect is that
// attempt's). The connected record moves before it.
func (d *Device) reorder() {
	last, up := -1, false
	for i := range d.Events {
		e := &d.Events[i]
		if !isSessionStage(e.Stage) {
			continue
		}
		switch e.Outcome {
		case auditfmt.Connected:
			up = true
		case auditfmt.Stopped, auditfmt.GaveUp:
			last, up = -1, false
		case auditfmt.BackoffWait, auditfmt.AttemptFailed, auditfmt.Refused:
			if last >= 0 && !up && e.Attempt < d.Events[last].Attempt && i+1 < len(d.Events) && causedBy(e, &d.Events[i+1]) {
				d.Reordered++
				d.ReorderGap = max(d.ReorderGap, abs64(d.Events[i+1].At-e.At))
				d.Events[i], d.Events[i+1] = d.Events[i+1], d.Events[i]
				up = true // the counter record, now at i+1, comes next
				continue
			}
			last, up = i, false
		}
	}
}

// causedBy reports whether the counter reset e, written just before n,
// was caused by n: n is a connected record of the session stage stamped
// within ReorderWindow of e, and, when e is a backoff_wait, before e's own
// socket-open could have been due (else n is e's outcome).
func causedBy(e, n *Event) bool {
	if n.Outcome != auditfmt.Connected || !isSessionStage(n.Stage) || abs64(n.At-e.At) > int64(ReorderWindow) {
		return false
	}
	return e.Outcome != auditfmt.BackoffWait || n.At < addSat(e.At, nanos(e.Delay))-int64(UnscheduledEarly)
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// stageBuild is Build's state for one stage: the open attempt, session
// and episode (indices, -1 for none) and the last failure's class.
type stageBuild struct {
	cur, up, ep int
	lastFail    auditfmt.FailureClass
	line        int  // index in Device.Stages, +1; 0 for the session stage or none yet
	wasUp       bool // the stage has been connected (since the device last stopped)
}

// lines returns the sessions and episodes a stage's records build: the
// device's own for the MQTT session, a StageLine's for the others.
func (d *Device) lines(s *stageBuild, stage auditfmt.Stage) (*[]Session, *[]Episode) {
	if stage == auditfmt.StageSession || stage == 0 {
		return &d.Sessions, &d.Episodes
	}
	if s.line == 0 {
		d.Stages = append(d.Stages, StageLine{Stage: stage})
		s.line = len(d.Stages)
	}
	l := &d.Stages[s.line-1]
	return &l.Sessions, &l.Episodes
}

// step takes event i into the timeline of its stage.
func (d *Device) step(s *stageBuild, i int) {
	e := &d.Events[i]
	sessions, episodes := d.lines(s, e.Stage)
	endSession := func(at int64) {
		if s.up >= 0 {
			(*sessions)[s.up].Down, s.up = at, -1
		}
	}
	openEpisode := func(loss bool) {
		if s.ep < 0 {
			*episodes = append(*episodes, Episode{Start: e.At, End: NoTime, First: i, Last: -1,
				Starting: !loss && !s.wasUp, Inferred: !loss && s.wasUp})
			s.ep = len(*episodes) - 1
		}
	}
	open := func() *Attempt { // the attempt awaiting its outcome, or nil
		if s.cur >= 0 && d.Attempts[s.cur].Outcome < 0 {
			return &d.Attempts[s.cur]
		}
		return nil
	}
	switch e.Outcome {
	case auditfmt.Disconnected:
		endSession(e.At)
		openEpisode(true)
		s.cur, s.lastFail = -1, 0
	case auditfmt.BackoffWait:
		endSession(e.At)
		openEpisode(false)
		(*episodes)[s.ep].Attempts++
		d.Attempts = append(d.Attempts, Attempt{Number: e.Attempt, Start: e.At, Delay: e.Delay, Ceiling: e.Ceiling,
			Open: addSat(e.At, nanos(e.Delay)), Backoff: i, Outcome: -1, Stage: e.Stage, AfterErr: s.lastFail})
		s.cur, s.lastFail = len(d.Attempts)-1, 0
	case auditfmt.RateLimitedWait:
		if a := open(); a != nil {
			a.Wait += e.Delay
			a.Open = addSat(a.Open, nanos(e.Delay))
		}
	case auditfmt.AttemptFailed, auditfmt.Refused:
		if a := open(); a != nil {
			a.Outcome = i
		}
		switch {
		case authFailure(e):
			s.lastFail = auditfmt.FailAuth // a reason code says so even without a failure_class
		case e.Fail != 0:
			s.lastFail = e.Fail
		default:
			s.lastFail = auditfmt.FailUnknown
		}
	case auditfmt.GaveUp, auditfmt.Stopped:
		endSession(e.At)
		s.cur = -1
		if e.Outcome == auditfmt.Stopped {
			s.wasUp = false // what follows is the client starting again
		}
	case auditfmt.Connected:
		if a := open(); a != nil {
			a.Outcome = i
		}
		if s.ep >= 0 {
			ep := &(*episodes)[s.ep]
			ep.End, ep.Last, s.ep = e.At, i, -1
		}
		endSession(e.At)
		*sessions = append(*sessions, Session{Up: e.At, Down: NoTime, UpIndex: i})
		s.up, s.lastFail, s.wasUp = len(*sessions)-1, 0, true
	}
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

// Lost reports whether the device lost its connection (in the session
// stage) at least once in the log.
func (d *Device) Lost() bool {
	for i := range d.Episodes {
		if d.Episodes[i].Loss() {
			return true
		}
	}
	return false
}

// Outage returns the session-stage episode the device is still in at the
// end of its records (a loss, or a start that never connected), if any.
func (d *Device) Outage() (*Episode, bool) {
	if k := len(d.Episodes) - 1; k >= 0 && d.Episodes[k].End == NoTime && !d.Episodes[k].Churn {
		return &d.Episodes[k], true
	}
	return nil, false
}

// Recovered reports whether the device recovered from every loss: it lost
// its connection and connected after its last loss (whether it then
// stayed up, stopped on purpose or lost the session again is another
// matter).
func (d *Device) Recovered() bool {
	last := -1
	for i := range d.Episodes {
		if d.Episodes[i].Loss() {
			last = i
		}
	}
	return last >= 0 && d.Episodes[last].End != NoTime
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
