package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/hashchain"
	"github.com/stormaudit/stormaudit/internal/safe"
)

// Timeline is one device's timeline and what its records' Refs index.
type Timeline struct {
	Device  *analyze.Device // built (Device.Build)
	Sources []string        // the inputs Ref.Source indexes
	Files   []string        // the dataset's Parquet files Ref.File indexes; nil when there is no lasting dataset
	// Chain holds each record's place in its hash chain, by (Ref.File,
	// Ref.Row), when the records are of a lasting dataset: what `prove
	// --seq` takes (the chain is in dataset order, which need not be the
	// device's own). Nil otherwise.
	Chain map[[2]int64]hashchain.Pos
	// Clock holds the offsets a check found of the device's clock (nil
	// when it found none, or no check ran): its times are then shown as
	// recorded and as corrected onto the fleet's clock.
	Clock []analyze.ClockOffset
}

// deviceClockText says one offset found of a device's clock.
func deviceClockText(o analyze.ClockOffset) string {
	r := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	dir := "ahead of"
	if o.Offset < 0 {
		dir = "behind"
	}
	s := fmt.Sprintf("%v %s ", r(o.Offset.Abs()), dir)
	if o.Basis == analyze.BasisBroker {
		s += fmt.Sprintf("the broker's (resolution %v): its connects against the broker's accepts of them", r(o.Resolution))
	} else {
		s += fmt.Sprintf("the fleet's (resolution %v): it lost the connection at the incident of %s with the rest of the fleet, "+
			"and stamped it that far off", r(o.Resolution), Time(o.LostAt))
	}
	if o.From != analyze.NoTime {
		s += "; from " + Time(o.From) + " on its clock"
	}
	if o.Until != analyze.NoTime {
		s += "; until " + Time(o.Until) + " on its clock"
	}
	return s
}

// corrected returns t, a time on the device's clock, on the fleet's.
func (t Timeline) corrected(at int64) int64 { return at - int64(analyze.OffsetAt(t.Clock, at)) }

// chainOf returns the chain position of the record at ref, if known.
func (t Timeline) chainOf(ref analyze.Ref) (hashchain.Pos, bool) {
	p, ok := t.Chain[[2]int64{int64(ref.File), ref.Row}]
	return p, ok
}

// TimelineText writes the timeline as a table, one line per record in the
// device's own order, then the device's sessions and outages.
func TimelineText(w io.Writer, t Timeline) error {
	d := t.Device
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "device %s: %s, %s, %s, %s", safe.Text(d.ID), plural(len(d.Events), "record"),
		plural(len(d.Attempts), "attempt"), plural(len(d.Sessions), "session"), plural(len(d.Episodes), "outage"))
	if d.Host != "" {
		fmt.Fprintf(bw, "; host %s", safe.Text(d.Host))
		if d.Hosts > 1 {
			fmt.Fprintf(bw, " (and %d others)", d.Hosts-1)
		}
	}
	fmt.Fprintf(bw, "; clean_session %v", d.Clean)
	if d.Mixed {
		fmt.Fprint(bw, " (mixed)")
	}
	if len(d.Events) > 0 {
		if p, ok := t.chainOf(d.Events[0].Ref); ok {
			fmt.Fprintf(bw, "; chain %s", safe.Text(p.Origin))
		}
	}
	fmt.Fprint(bw, "\nrecords in the device's own order (device_seq, else as written)")
	if t.Chain != nil {
		fmt.Fprint(bw, "; chain_seq is a record's place in the hash chain (prove --seq), which orders a device's records "+
			"by recorded_at, then content: records stamped alike may hold their chain places in another order")
	}
	fmt.Fprint(bw, "\n")
	for _, o := range t.Clock {
		fmt.Fprintf(bw, "clock:   %s\n", deviceClockText(o))
	}
	if len(t.Clock) > 0 {
		fmt.Fprint(bw, "corrected: the time on the fleet's clock, the recorded time less the offset\n")
	}
	fmt.Fprint(bw, "\n")
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	head := "time\toutcome\tattempt\tdelay_s\tsocket-open\trecord"
	if len(t.Clock) > 0 {
		head = "time\tcorrected\toutcome\tattempt\tdelay_s\tsocket-open\trecord"
	}
	fmt.Fprintln(tw, head)
	opens := SocketOpens(d)
	for i := range d.Events {
		e := &d.Events[i]
		rec := safe.Text(RefText(t.Sources, e.Ref))
		x := EventExtras(e)
		if p, ok := t.chainOf(e.Ref); ok {
			x = strings.TrimSpace(fmt.Sprintf("chain_seq=%d %s", p.Seq, x))
		}
		if x != "" {
			rec += "  " + x
		}
		at := Time(e.At)
		if len(t.Clock) > 0 {
			at += "\t" + Time(t.corrected(e.At))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", at, e.Outcome, e.Attempt, seconds(e.Delay), opens[i], rec)
	}
	tw.Flush()
	timelineSessions(bw, "", d.Sessions)
	timelineEpisodes(bw, "", d.Episodes, d.Served)
	for _, l := range d.Stages {
		timelineSessions(bw, l.Stage.String()+" ", l.Sessions)
		timelineEpisodes(bw, l.Stage.String()+" ", l.Episodes, nil)
	}
	return bw.Flush()
}

// SocketOpens returns, for each event, the derived socket-open of the
// attempt its backoff_wait began, or "".
func SocketOpens(d *analyze.Device) []string {
	opens := make([]string, len(d.Events))
	for _, a := range d.Attempts {
		opens[a.Backoff] = Time(a.Open)
	}
	return opens
}

// EventExtras lists the optional fields a record has.
func EventExtras(e *analyze.Event) string {
	var parts []string
	if e.Fail != 0 {
		parts = append(parts, "failure_class="+e.Fail.String())
	}
	if e.Reason >= 0 {
		parts = append(parts, fmt.Sprintf("reason_code=%d", e.Reason))
	}
	if e.Stage != 0 {
		parts = append(parts, "stage="+e.Stage.String())
	}
	if !math.IsNaN(e.Ceiling) {
		parts = append(parts, "ceiling_s="+seconds(e.Ceiling))
	}
	if e.Presence >= 0 {
		parts = append(parts, fmt.Sprintf("session_present=%v", e.Presence == 1))
	}
	if e.Seq >= 0 {
		parts = append(parts, fmt.Sprintf("device_seq=%d", e.Seq))
	}
	if e.Outbox >= 0 {
		parts = append(parts, fmt.Sprintf("outbox_depth=%d", e.Outbox))
	}
	if e.Flushed >= 0 {
		parts = append(parts, fmt.Sprintf("outbox_flushed=%d", e.Flushed))
	}
	if e.Redelivered >= 0 {
		parts = append(parts, fmt.Sprintf("inbound_redelivered=%d", e.Redelivered))
	}
	if e.Duplicates >= 0 {
		parts = append(parts, fmt.Sprintf("inbound_duplicates=%d", e.Duplicates))
	}
	if e.Dropped >= 0 {
		parts = append(parts, fmt.Sprintf("outbox_dropped=%d", e.Dropped))
	}
	if e.Expired >= 0 {
		parts = append(parts, fmt.Sprintf("inbound_expired=%d", e.Expired))
	}
	return strings.Join(parts, " ")
}

// timelineSessions writes a stage's sessions under a title of its name
// (none for the MQTT session).
func timelineSessions(w io.Writer, stage string, sessions []analyze.Session) {
	fmt.Fprintf(w, "\n%ssessions:\n", stage)
	if len(sessions) == 0 {
		fmt.Fprintf(w, "  none\n")
	}
	for _, s := range sessions {
		if s.Down == analyze.NoTime {
			fmt.Fprintf(w, "  up %s, still up at the end\n", Time(s.Up))
			continue
		}
		fmt.Fprintf(w, "  up %s, down %s (%s)\n", Time(s.Up), Time(s.Down), Span(s.Up, s.Down))
	}
}

// timelineEpisodes writes a stage's outages; served, for the session,
// says when each was first served (analyze.Device.Served; nil: not asked).
func timelineEpisodes(w io.Writer, stage string, episodes []analyze.Episode, served func(int) int64) {
	fmt.Fprintf(w, "\n%soutages:\n", stage)
	if len(episodes) == 0 {
		fmt.Fprintf(w, "  none\n")
	}
	for k, e := range episodes {
		kind := EpisodeKind(&e)
		if e.End == analyze.NoTime {
			fmt.Fprintf(w, "  %s from %s, not recovered; %s\n", kind, Time(e.Start), plural(e.Attempts, "attempt"))
			continue
		}
		s := ""
		if served != nil {
			if at := served(k); at != analyze.NoTime {
				s = fmt.Sprintf("; first useful service at %s (%s after the loss)", Time(at), Span(e.Start, at))
			}
		}
		fmt.Fprintf(w, "  %s from %s to %s (%s); %s%s\n", kind, Time(e.Start), Time(e.End), Span(e.Start, e.End),
			plural(e.Attempts, "attempt"), s)
	}
}

type timelineDoc struct {
	Device   string            `json:"device"`
	Origin   string            `json:"origin,omitempty"` // its hash chain, when of a lasting dataset
	Host     string            `json:"host,omitempty"`
	Hosts    int               `json:"hosts"`
	Clean    bool              `json:"clean_session"`
	Mixed    bool              `json:"mixed_clean_session"`
	Sources  []string          `json:"sources"`
	Events   []timelineEvent   `json:"events"`
	Attempts []timelineAttempt `json:"attempts"`
	Sessions []timelineSession `json:"sessions"`
	Outages  []timelineOutage  `json:"outages"`
	Stages   []timelineStage   `json:"stages,omitempty"`
	// ClockOffsets are those a check found of the device's clock; each
	// event's corrected_at is then its time on the fleet's clock.
	ClockOffsets []jsonClockOffset `json:"clock_offsets,omitempty"`
}

type timelineEvent struct {
	ChainSeq       *int64   `json:"chain_seq,omitempty"` // its place in the hash chain (prove --seq)
	At             string   `json:"recorded_at"`
	CorrectedAt    string   `json:"corrected_at,omitempty"` // on the fleet's clock, when the device's clock was found off
	Outcome        string   `json:"outcome"`
	Attempt        int64    `json:"attempt"`
	Delay          *float64 `json:"backoff_delay_s"`
	Clean          bool     `json:"clean_session"`
	Ceiling        *float64 `json:"ceiling_s,omitempty"`
	Seq            *int64   `json:"device_seq,omitempty"`
	Reason         *int16   `json:"reason_code,omitempty"`
	Fail           string   `json:"failure_class,omitempty"`
	Stage          string   `json:"stage,omitempty"`
	SessionPresent *bool    `json:"session_present,omitempty"`
	Outbox         *int64   `json:"outbox_depth,omitempty"`
	Flushed        *int64   `json:"outbox_flushed,omitempty"`
	Redelivered    *int64   `json:"inbound_redelivered,omitempty"`
	Duplicates     *int64   `json:"inbound_duplicates,omitempty"`
	Dropped        *int32   `json:"outbox_dropped,omitempty"`
	Expired        *int32   `json:"inbound_expired,omitempty"`
	SocketOpen     string   `json:"socket_open,omitempty"`
	jsonRecord              // source, line, and file and row
}

type timelineAttempt struct {
	Number   int64    `json:"number"`
	Start    string   `json:"start"`
	Delay    *float64 `json:"delay_s"`
	Ceiling  *float64 `json:"ceiling_s,omitempty"`
	Wait     *float64 `json:"wait_s"`
	Open     string   `json:"socket_open"`
	Backoff  int      `json:"event"`
	Outcome  *int     `json:"outcome_event"`
	Stage    string   `json:"stage,omitempty"`
	AfterErr string   `json:"after_failure,omitempty"`
}

// timelineStage is the sessions and outages of a stage other than the
// MQTT session.
type timelineStage struct {
	Stage    string            `json:"stage"`
	Sessions []timelineSession `json:"sessions"`
	Outages  []timelineOutage  `json:"outages"`
}

type timelineSession struct {
	Up    string  `json:"up"`
	Down  *string `json:"down"`
	Event int     `json:"event"`
}

type timelineOutage struct {
	Kind     string  `json:"kind"` // start, loss or loss (inferred)
	Start    string  `json:"start"`
	End      *string `json:"end"`
	Attempts int     `json:"attempts"`
}

// EpisodeKind says what began an episode: the device starting, a loss it
// recorded, or a loss inferred from a new attempt after a connected record.
func EpisodeKind(e *analyze.Episode) string {
	switch {
	case e.Starting:
		return "start"
	case e.Inferred:
		return "loss (inferred)"
	}
	return "loss"
}

// TimelineJSON writes the timeline as one JSON document: the device, its
// events (each with its record's input and line, and dataset file and
// row when t.Files names the file), attempts, sessions and outages.
// Events are numbered from 0 in the order listed; attempts and sessions
// refer to them by that number.
func TimelineJSON(w io.Writer, t Timeline) error {
	d := t.Device
	doc := timelineDoc{Device: d.ID, Host: d.Host, Hosts: d.Hosts, Clean: d.Clean, Mixed: d.Mixed,
		Sources: append([]string{}, t.Sources...), Events: make([]timelineEvent, len(d.Events)),
		Attempts: make([]timelineAttempt, len(d.Attempts))}
	res := &analyze.Result{Sources: t.Sources, Files: t.Files}
	for i := range d.Events {
		doc.Events[i] = timelineEventOf(res, &d.Events[i])
		if p, ok := t.chainOf(d.Events[i].Ref); ok {
			doc.Events[i].ChainSeq, doc.Origin = &p.Seq, p.Origin
		}
		if len(t.Clock) > 0 {
			doc.Events[i].CorrectedAt = Time(t.corrected(d.Events[i].At))
		}
	}
	for i, a := range d.Attempts {
		doc.Attempts[i] = timelineAttemptOf(a)
		doc.Events[a.Backoff].SocketOpen = Time(a.Open)
	}
	doc.Sessions, doc.Outages = sessionsJSON(d.Sessions), outagesJSON(d.Episodes)
	for _, l := range d.Stages {
		doc.Stages = append(doc.Stages, timelineStage{Stage: l.Stage.String(), Sessions: sessionsJSON(l.Sessions), Outages: outagesJSON(l.Episodes)})
	}
	for _, o := range t.Clock {
		doc.ClockOffsets = append(doc.ClockOffsets, jsonClockOffsetOf(o))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

func sessionsJSON(ss []analyze.Session) []timelineSession {
	out := make([]timelineSession, len(ss))
	for i, s := range ss {
		out[i] = timelineSession{Up: Time(s.Up), Down: optTime(s.Down), Event: s.UpIndex}
	}
	return out
}

func outagesJSON(es []analyze.Episode) []timelineOutage {
	out := make([]timelineOutage, len(es))
	for i, e := range es {
		out[i] = timelineOutage{Kind: EpisodeKind(&e), Start: Time(e.Start), End: optTime(e.End), Attempts: e.Attempts}
	}
	return out
}

func timelineEventOf(res *analyze.Result, e *analyze.Event) timelineEvent {
	te := timelineEvent{At: Time(e.At), Outcome: e.Outcome.String(), Attempt: e.Attempt, Delay: number(e.Delay),
		Clean: e.Clean, Ceiling: number(e.Ceiling), jsonRecord: jsonRecordOf(res, e.Ref)}
	if e.Seq >= 0 {
		te.Seq = &e.Seq
	}
	if e.Reason >= 0 {
		te.Reason = &e.Reason
	}
	if e.Fail != 0 {
		te.Fail = e.Fail.String()
	}
	if e.Stage != 0 {
		te.Stage = e.Stage.String()
	}
	if e.Presence >= 0 {
		p := e.Presence == 1
		te.SessionPresent = &p
	}
	if e.Outbox >= 0 {
		te.Outbox = &e.Outbox
	}
	if e.Flushed >= 0 {
		te.Flushed = &e.Flushed
	}
	if e.Redelivered >= 0 {
		te.Redelivered = &e.Redelivered
	}
	if e.Duplicates >= 0 {
		te.Duplicates = &e.Duplicates
	}
	if e.Dropped >= 0 {
		te.Dropped = &e.Dropped
	}
	if e.Expired >= 0 {
		te.Expired = &e.Expired
	}
	return te
}

func timelineAttemptOf(a analyze.Attempt) timelineAttempt {
	ta := timelineAttempt{Number: a.Number, Start: Time(a.Start), Delay: number(a.Delay), Ceiling: number(a.Ceiling),
		Wait: number(a.Wait), Open: Time(a.Open), Backoff: a.Backoff}
	if a.Outcome >= 0 {
		o := a.Outcome
		ta.Outcome = &o
	}
	if a.Stage != 0 {
		ta.Stage = a.Stage.String()
	}
	if a.AfterErr != 0 {
		ta.AfterErr = a.AfterErr.String()
	}
	return ta
}

// optTime formats t, or gives nil (JSON null) for NoTime.
func optTime(t int64) *string {
	if t == analyze.NoTime {
		return nil
	}
	s := Time(t)
	return &s
}

// jsonRecord names a record in a timeline's JSON: its input and line, and
// its dataset file and row when the file is known.
type jsonRecord struct {
	Source string `json:"source"`
	Line   int64  `json:"line"`
	File   string `json:"file,omitempty"`
	Row    *int64 `json:"row,omitempty"`
}

func jsonRecordOf(r *analyze.Result, ref analyze.Ref) jsonRecord {
	rec := jsonRecord{Source: source(r.Sources, ref.Source), Line: ref.Line}
	if ref.File >= 0 && int(ref.File) < len(r.Files) {
		row := ref.Row
		rec.File, rec.Row = r.Files[ref.File], &row
	}
	return rec
}
