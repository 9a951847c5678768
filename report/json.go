package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"github.com/stormaudit/stormaudit/internal/safe"
	"io"
	"math"
	"runtime"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/internal/ordered"
)

type jsonSummary struct {
	Dataset    string          `json:"dataset,omitempty"`
	Sources    []string        `json:"sources"`
	Files      []string        `json:"files"`
	Devices    int             `json:"devices"`
	Records    int64           `json:"records"`
	Rejected   int64           `json:"rejected"`
	Verdict    []string        `json:"verdict"`        // report.Verdict: a line per incident
	Outside    int64           `json:"outside_window"` // records left out by --since/--until
	Since      *string         `json:"since,omitempty"`
	Until      *string         `json:"until,omitempty"`
	Findings   int             `json:"findings"`
	ByRule     map[string]int  `json:"by_rule"`
	BySeverity map[string]int  `json:"by_severity"`
	Policy     jsonPolicy      `json:"policy"`
	Fleet      *jsonFleet      `json:"fleet,omitempty"`
	Notes      []string        `json:"notes"`
	Skipped    []jsonSkip      `json:"skipped"`
	Rules      []jsonRuleEntry `json:"rules"`
}

// jsonSkip is a rule that could not run: it neither passed nor failed.
type jsonSkip struct {
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
}

type jsonPolicy struct {
	Source   string          `json:"source"`
	Name     string          `json:"name,omitempty"`
	Inferred []string        `json:"inferred,omitempty"`
	Basis    string          `json:"basis,omitempty"`
	Policy   json.RawMessage `json:"policy,omitempty"`
}

// jsonStorm is what recovery-storm weighed of an incident's return.
type jsonStorm struct {
	RecoveriesPeakPerS int     `json:"recoveries_peak_per_s"`
	RecoveriesPeakAt   string  `json:"recoveries_peak_at"`
	ExpectedPeakPerS   float64 `json:"expected_peak_per_s"`
	ExpectedPeakAt     string  `json:"expected_peak_at"`
	PolicySource       string  `json:"policy_source"`
	Stormed            bool    `json:"stormed"`
}

type jsonFleet struct {
	Devices   int      `json:"devices"`
	Records   int64    `json:"records"`
	Attempts  int64    `json:"attempts"`
	WindowS   float64  `json:"window_s"`
	Peak      int64    `json:"peak"`
	PeakAt    string   `json:"peak_at,omitempty"`
	Lost      int      `json:"lost"`
	Recovered int      `json:"recovered"`
	TTR50S    float64  `json:"ttr_p50_s"`
	TTR90S    float64  `json:"ttr_p90_s"`
	TTR99S    float64  `json:"ttr_p99_s"`
	TTRMaxS   float64  `json:"ttr_max_s"`
	Fairness  *float64 `json:"fairness"`
	// TTRError is the relative error the percentiles (and fairness) may
	// have when estimated (beyond analyze.ExactDurations losses); absent
	// when they are exact
	TTRError float64 `json:"ttr_relative_error,omitempty"`
	// the outbox flush, beside the socket-opens
	Flushed     int64  `json:"flushed"`
	FlushPeak   int64  `json:"flush_peak"`
	FlushPeakAt string `json:"flush_peak_at,omitempty"`
	// the broker's redelivery, beside them, when the log records one
	Redelivered      int64  `json:"redelivered,omitempty"`
	RedeliveryPeak   int64  `json:"redelivery_peak,omitempty"`
	RedeliveryPeakAt string `json:"redelivery_peak_at,omitempty"`

	Incidents    []jsonIncident    `json:"incidents"`
	ClockOffsets []jsonClockOffset `json:"clock_offsets"`
	Broker       *jsonWitness      `json:"broker,omitempty"`
}

// jsonWitness is summary.fleet.broker: what the broker's logs say beside
// the audit.
type jsonWitness struct {
	Logs      []jsonBrokerLog `json:"logs"`
	Paired    int             `json:"paired"`
	Unaudited int             `json:"unaudited"`
	Unseen    int             `json:"unseen"`
	Takeovers int             `json:"takeovers"`
	Strangers int             `json:"strangers"`
}

type jsonBrokerLog struct {
	Name          string         `json:"name"`
	Format        string         `json:"format"`
	Lines         int            `json:"lines"`
	Events        int            `json:"events"`
	Skipped       int            `json:"skipped"`
	Rejected      int            `json:"rejected"`
	First         *string        `json:"first_at"`
	Last          *string        `json:"last_at"`
	Accepts       int            `json:"accepts"`
	Closes        int            `json:"closes"`
	ClosedBy      map[string]int `json:"closed_by"`
	AcceptsPeak   int            `json:"accepts_peak_per_s"`
	AcceptsPeakAt *string        `json:"accepts_peak_at"`
}

// jsonIncidentBroker is an incident's broker member.
type jsonIncidentBroker struct {
	LostAt         *string        `json:"lost_at"`
	LostAtEarliest *string        `json:"lost_at_earliest"`
	LostAtLatest   *string        `json:"lost_at_latest"`
	LostAtBasis    string         `json:"lost_at_basis"`
	DownAt         *string        `json:"down_at"`
	UpAt           *string        `json:"up_at"`
	FirstAcceptAt  *string        `json:"first_accept_at"`
	Timeouts       int            `json:"keepalive_timeouts"`
	ClosedBy       map[string]int `json:"closed_by"`
	AcceptsPeak    int            `json:"accepts_peak_per_s"`
	AcceptsPeakAt  *string        `json:"accepts_peak_at"`
	Refusals       []jsonRefusal  `json:"refusals"`
	UpThroughout   bool           `json:"up_throughout"`
	Presence       *jsonPresence  `json:"presence,omitempty"`
}

// jsonRefusal is one reason code of the broker's refusals.
type jsonRefusal struct {
	Code   int32  `json:"code"`
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

// jsonMet is one kind of record an incident's devices met while down.
type jsonMet struct {
	Stage   string `json:"stage"`
	Outcome string `json:"outcome"`
	Class   string `json:"failure_class,omitempty"`
	Reason  *int32 `json:"reason_code"`
	Records int    `json:"records"`
	Devices int    `json:"devices"`
}

// jsonUnrecovered is one device of an incident that never came back.
type jsonUnrecovered struct {
	Device   string   `json:"device"`
	State    string   `json:"state"`
	Text     string   `json:"text"`
	LastAt   string   `json:"last_record_at"`
	Stage    string   `json:"stage"`
	DueAt    *string  `json:"due_at"`
	DelayS   *float64 `json:"delay_s"`
	Class    string   `json:"failure_class,omitempty"`
	Reason   *int32   `json:"reason_code"`
	Attempts int      `json:"attempts"`
	CutShort bool     `json:"log_ended_too_soon"`
}

// jsonClockOffset is one device of summary.fleet.clock_offsets.
type jsonClockOffset struct {
	Device      string  `json:"device"`
	OffsetS     float64 `json:"offset_s"`
	ResolutionS float64 `json:"resolution_s"`
	LostAt      *string `json:"lost_at"`
	Basis       string  `json:"basis"`
	From        *string `json:"from"`  // on the device's clock; null: since its first record
	Until       *string `json:"until"` // on the device's clock; null: to its last (a clock that stepped has one)
}

// jsonIncident is one incident of summary.fleet.incidents.
type jsonIncident struct {
	LostAt             string              `json:"lost_at"`
	LostAtEarliest     string              `json:"lost_at_earliest"`
	LostAtLatest       string              `json:"lost_at_latest"`
	LostAtBasis        string              `json:"lost_at_basis"`
	Silent             bool                `json:"silent"`
	Aligned            bool                `json:"aligned,omitempty"`
	TTRFrom            string              `json:"ttr_from"`
	FirstLossAt        string              `json:"first_loss_at"`
	LastLossAt         string              `json:"last_loss_at"`
	DevicesLost        int                 `json:"devices_lost"`
	LossInferred       bool                `json:"loss_inferred"`
	FirstConnectAt     *string             `json:"first_connect_at"`
	Recovered          int                 `json:"recovered"`
	RecoveredBefore    int                 `json:"recovered_before_next"`
	Corrected          int                 `json:"clock_corrected"`
	TTR50S             float64             `json:"ttr_p50_s"`
	TTR90S             float64             `json:"ttr_p90_s"`
	TTR99S             float64             `json:"ttr_p99_s"`
	TTRMaxS            float64             `json:"ttr_max_s"`
	TTRError           float64             `json:"ttr_relative_error,omitempty"`
	ConnectsPeakPerS   int                 `json:"connects_peak_per_s"`
	ConnectsPeakAt     *string             `json:"connects_peak_at"`
	Storm              *jsonStorm          `json:"storm,omitempty"`
	FlushPeakPerS      int64               `json:"flush_peak_per_s"`
	FlushPeakAt        *string             `json:"flush_peak_at"`
	RedeliveryPeakPerS int64               `json:"redelivery_peak_per_s,omitempty"`
	RedeliveryPeakAt   string              `json:"redelivery_peak_at,omitempty"`
	Broker             *jsonIncidentBroker `json:"broker,omitempty"`
	Diagnosis          string              `json:"diagnosis"`
	DiagnosisText      string              `json:"diagnosis_text"`
	Met                []jsonMet           `json:"met"`
	Unrecovered        []jsonUnrecovered   `json:"unrecovered"`
	Service            *jsonService        `json:"service,omitempty"`
	Cost               map[string]jsonCost `json:"cost,omitempty"`
}

// jsonService is an incident's time to first useful service, when its
// devices record the service stage.
type jsonService struct {
	Devices  int            `json:"devices"`
	Served   int            `json:"served"`
	TTS50S   float64        `json:"tts_p50_s"`
	TTS90S   float64        `json:"tts_p90_s"`
	TTS99S   float64        `json:"tts_p99_s"`
	TTSMaxS  float64        `json:"tts_max_s"`
	TTSError float64        `json:"tts_relative_error,omitempty"`
	LagS     float64        `json:"lag_s"`
	Unserved []jsonUnserved `json:"unserved"`
}

// jsonUnserved is a device that reconnected and was not served within
// the lag.
type jsonUnserved struct {
	Device        string  `json:"device"`
	ReconnectedAt string  `json:"reconnected_at"`
	ServedAt      *string `json:"served_at"`
}

type jsonRuleEntry struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	Title    string `json:"title"`
	Help     string `json:"help"`
}

// JSONVersion is the version of the JSON document: its "version" member.
const JSONVersion = 2

// JSON writes the result as one JSON document (see the package
// documentation), ending in a newline: the summary indented, then each
// finding on a line of its own. It encodes the findings a chunk at a
// time on every core, each chunk with its C1 and bidirectional controls
// escaped (a device wrote them: they reach no viewer raw, see
// safe.EscapeWriter): its memory does not grow with their number, and it
// costs far less than the check that found them.
func JSON(w io.Writer, r *analyze.Result) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	summary, err := json.MarshalIndent(jsonSummaryOf(r), "  ", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintf(bw, "{\n  \"version\": %d,\n  \"summary\": ", JSONVersion)
	bw.Write(safe.Escape(summary, safe.JSONEscape))
	bw.WriteString(",\n  \"findings\": [")
	var werr error
	var free sync.Pool // chunks' buffers, written and reused
	for c := range encodeFindings(r, &free) {
		if werr == nil {
			_, werr = bw.Write(c.b)
		}
		free.Put(c.b[:0])
	}
	if werr != nil {
		return werr
	}
	if len(r.Findings) > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteString("]\n}\n")
	return bw.Flush()
}

// jsonChunkFindings is how many findings one goroutine encodes at a time.
const jsonChunkFindings = 128

// jsonChunk is the encoding of findings [from, to), each on a line of
// its own and after a comma but the first.
type jsonChunk struct {
	from, to int
	b        []byte
}

// encodeFindings encodes the findings of r on every core and returns
// their chunks in order; the channel is closed after the last. The caller
// receives every chunk, and may put its buffer in free once written.
func encodeFindings(r *analyze.Result, free *sync.Pool) <-chan *jsonChunk {
	in, out := make(chan *jsonChunk), make(chan *jsonChunk)
	go func() {
		for from := 0; from < len(r.Findings); from += jsonChunkFindings {
			in <- &jsonChunk{from: from, to: min(from+jsonChunkFindings, len(r.Findings))}
		}
		close(in)
	}()
	go ordered.Run(runtime.GOMAXPROCS(0), in, out, func(_ int, c *jsonChunk) {
		if b, ok := free.Get().([]byte); ok {
			c.b = b
		}
		var scratch []byte
		for i := c.from; i < c.to; i++ {
			if i > 0 {
				c.b = append(c.b, ',')
			}
			c.b = append(c.b, "\n    "...)
			c.b = appendJSONFinding(c.b, r, &r.Findings[i], &scratch)
		}
		c.b = safe.Escape(c.b, safe.JSONEscape)
	})
	return out
}

// appendJSONFinding appends f as one JSON object, its explanation
// written in scratch first when it was left to be written. Its records
// name their input and dataset file by index into summary.sources and
// summary.files.
func appendJSONFinding(b []byte, r *analyze.Result, f *analyze.Finding, scratch *[]byte) []byte {
	str := func(b []byte, name, v string) []byte {
		b = append(b, ',', '"')
		b = append(b, name...)
		b = append(b, '"', ':')
		return auditfmt.AppendJSONString(b, v)
	}
	b = append(b, `{"rule":`...)
	b = auditfmt.AppendJSONString(b, f.Rule)
	b = str(b, "kind", f.Kind) // stable across rewordings: what fingerprints hash
	b = str(b, "severity", f.Severity.String())
	b = str(b, "device", f.Device)
	b = str(b, "start", Time(f.Start))
	b = str(b, "end", Time(f.End))
	b = str(b, "message", f.Message)
	b = append(b, `,"explanation":`...)
	b = appendJSONExplanation(b, f, scratch)
	b = append(b, `,"records":[`...)
	for k, ref := range f.Records {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"source":`...)
		b = strconv.AppendInt(b, int64(ref.Source), 10)
		b = append(b, `,"line":`...)
		b = strconv.AppendInt(b, ref.Line, 10)
		if ref.File >= 0 && int(ref.File) < len(r.Files) {
			b = append(b, `,"file":`...)
			b = strconv.AppendInt(b, int64(ref.File), 10)
			b = append(b, `,"row":`...)
			b = strconv.AppendInt(b, ref.Row, 10)
		}
		b = append(b, '}')
	}
	return append(b, ']', '}')
}

func jsonSummaryOf(r *analyze.Result) jsonSummary {
	s := r.Summary
	js := jsonSummary{Dataset: r.Dataset, Sources: append([]string{}, r.Sources...), Files: append([]string{}, r.Files...), Devices: s.Devices,
		Records: s.Records, Rejected: s.Rejected, Verdict: Verdict(r), Outside: s.Outside, Since: windowTime(s.Since), Until: windowTime(s.Until), Findings: len(r.Findings),
		ByRule: map[string]int{}, BySeverity: map[string]int{}, Notes: append([]string{}, s.Notes...),
		Policy: jsonPolicy{Source: s.Policy.Source, Name: s.Policy.Name, Inferred: s.Policy.Inferred, Basis: s.Policy.Basis}}
	if p := s.Policy.Policy; p != nil {
		js.Policy.Policy = p.AppendJSON(nil)
	}
	for _, ri := range rulesOf(r) {
		js.ByRule[ri.ID] = 0
		js.Rules = append(js.Rules, jsonRuleEntry{ID: ri.ID, Severity: ri.Severity.String(), Title: ri.Title, Help: ri.Help})
	}
	if js.Rules == nil {
		js.Rules = []jsonRuleEntry{}
	}
	for _, sev := range []analyze.Severity{analyze.Error, analyze.Warning, analyze.Info} {
		js.BySeverity[sev.String()] = 0
	}
	for _, f := range r.Findings {
		js.ByRule[f.Rule]++
		js.BySeverity[f.Severity.String()]++
	}
	js.Skipped = []jsonSkip{}
	for _, k := range s.Skipped {
		js.Skipped = append(js.Skipped, jsonSkip{Rule: k.Rule, Reason: k.Reason})
	}
	if st := s.Fleet; st != nil {
		js.Fleet = jsonFleetOf(st)
	}
	return js
}

func jsonFleetOf(st *analyze.FleetStats) *jsonFleet {
	jf := &jsonFleet{Devices: st.Devices, Records: st.Records, Attempts: st.Attempts, WindowS: st.Window.Seconds(),
		Peak: st.Peak, Lost: st.Lost, Recovered: st.Recovered,
		TTR50S: st.TTR50.Seconds(), TTR90S: st.TTR90.Seconds(), TTR99S: st.TTR99.Seconds(), TTRMaxS: st.TTRMax.Seconds()}
	if st.Peak > 0 {
		jf.PeakAt = Time(st.PeakAt)
	}
	if st.Flushed > 0 {
		jf.Flushed, jf.FlushPeak, jf.FlushPeakAt = st.Flushed, st.FlushPeak, Time(st.FlushPeakAt)
	}
	if st.Redelivered > 0 {
		jf.Redelivered, jf.RedeliveryPeak, jf.RedeliveryPeakAt = st.Redelivered, st.RedeliveryPeak, Time(st.RedeliveryPeakAt)
	}
	if st.TTR.Len() > 0 {
		jf.Fairness = number(st.Fairness)
	}
	if !st.TTR.Exact() {
		jf.TTRError = analyze.DurationsAccuracy
	}
	jf.Incidents = make([]jsonIncident, 0, len(st.Incidents))
	for i := range st.Incidents {
		jf.Incidents = append(jf.Incidents, jsonIncidentOf(&st.Incidents[i]))
	}
	if w := st.Witness; w != nil {
		jw := &jsonWitness{Logs: []jsonBrokerLog{}, Paired: w.Paired, Unaudited: len(w.Unaudited), Unseen: len(w.Unseen),
			Takeovers: len(w.Takeovers), Strangers: w.Strangers}
		for _, l := range w.Logs {
			jw.Logs = append(jw.Logs, jsonBrokerLog{Name: l.Name, Format: l.Format, Lines: l.Lines, Events: l.Events, Skipped: l.Skipped,
				Rejected: l.Rejected, First: optTime(l.First), Last: optTime(l.Last), Accepts: l.Accepts, Closes: l.Closes,
				ClosedBy: l.ClosedBy, AcceptsPeak: l.AcceptsPeak, AcceptsPeakAt: optTime(l.AcceptsPeakAt)})
		}
		jf.Broker = jw
	}
	jf.ClockOffsets = make([]jsonClockOffset, 0, len(st.ClockOffsets))
	for _, o := range st.ClockOffsets {
		jf.ClockOffsets = append(jf.ClockOffsets, jsonClockOffsetOf(o))
	}
	return jf
}

func jsonClockOffsetOf(o analyze.ClockOffset) jsonClockOffset {
	return jsonClockOffset{Device: o.Device, OffsetS: o.Offset.Seconds(), ResolutionS: o.Resolution.Seconds(), LostAt: optTime(o.LostAt),
		Basis: o.Basis, From: optTime(o.From), Until: optTime(o.Until)}
}

func jsonIncidentOf(in *analyze.Incident) jsonIncident {
	ji := jsonIncident{LostAt: Time(in.LostAt), LostAtEarliest: Time(in.LostAtEarliest), LostAtLatest: Time(in.LostAtLatest),
		LostAtBasis: in.Basis, Silent: in.Silent, Aligned: in.Aligned, TTRFrom: "each device's loss", FirstLossAt: Time(in.FirstLoss), LastLossAt: Time(in.LastLoss), DevicesLost: in.DevicesLost,
		LossInferred: in.LossInferred, FirstConnectAt: optTime(in.FirstConnectAt), Recovered: in.Recovered,
		RecoveredBefore: in.RecoveredBeforeNext, Corrected: in.Corrected, TTR50S: in.TTR50.Seconds(), TTR90S: in.TTR90.Seconds(), TTR99S: in.TTR99.Seconds(), TTRMaxS: in.TTRMax.Seconds(),
		ConnectsPeakPerS: in.ConnectsPeak, ConnectsPeakAt: optTime(in.ConnectsPeakAt),
		FlushPeakPerS: in.FlushPeak, FlushPeakAt: optTime(in.FlushPeakAt)}
	if in.FlushPeak == 0 {
		ji.FlushPeakAt = nil
	}
	if !in.TTR.Exact() {
		ji.TTRError = analyze.DurationsAccuracy
	}
	if st := in.Storm; st != nil {
		src := "declared"
		if st.Inferred {
			src = "inferred"
		}
		ji.Storm = &jsonStorm{RecoveriesPeakPerS: st.Recoveries, RecoveriesPeakAt: Time(st.At), ExpectedPeakPerS: math.Round(st.Expected*100) / 100,
			ExpectedPeakAt: Time(st.ExpectedAt), PolicySource: src, Stormed: st.Stormed}
	}
	if in.RedeliveryPeak > 0 {
		ji.RedeliveryPeakPerS, ji.RedeliveryPeakAt = in.RedeliveryPeak, Time(in.RedeliveryPeakAt)
	}
	if in.Silent {
		ji.TTRFrom = "lost_at"
	}
	if b := in.Broker; b != nil {
		ji.Broker = &jsonIncidentBroker{LostAt: optTime(b.LostAt), LostAtEarliest: optTime(b.LostAtEarliest), LostAtLatest: optTime(b.LostAtLatest),
			LostAtBasis: b.Basis, DownAt: optTime(b.DownAt), UpAt: optTime(b.UpAt), FirstAcceptAt: optTime(b.FirstAcceptAt),
			Timeouts: b.Timeouts, ClosedBy: b.ClosedBy, AcceptsPeak: b.AcceptsPeak, AcceptsPeakAt: optTime(b.AcceptsPeakAt),
			Refusals: []jsonRefusal{}, UpThroughout: b.UpThroughout, Presence: jsonPresenceOf(b.Presence)}
		for _, r := range b.Refusals {
			ji.Broker.Refusals = append(ji.Broker.Refusals, jsonRefusal{Code: r.Code, Reason: analyze.ReasonText(r.Code), Count: r.N})
		}
	}
	ji.Diagnosis, ji.DiagnosisText = in.Diagnosis, DiagnosisText(in)
	ji.Met, ji.Unrecovered = jsonMetOf(in.Met), jsonUnrecoveredOf(in.Unrecovered)
	ji.Cost = jsonCostOf(in)
	if in.ServiceDevices > 0 {
		js := &jsonService{Devices: in.ServiceDevices, Served: in.Served, TTS50S: in.TTS50.Seconds(), TTS90S: in.TTS90.Seconds(),
			TTS99S: in.TTS99.Seconds(), TTSMaxS: in.TTSMax.Seconds(), LagS: analyze.ServiceLag.Seconds(), Unserved: []jsonUnserved{}}
		if !in.TTS.Exact() {
			js.TTSError = analyze.DurationsAccuracy
		}
		for _, u := range in.Unserved {
			js.Unserved = append(js.Unserved, jsonUnserved{Device: u.Device, ReconnectedAt: Time(u.Reconnected), ServedAt: optTime(u.Served)})
		}
		ji.Service = js
	}
	return ji
}

// optCode returns a reason code, nil when absent (negative).
func optCode(c int32) *int32 {
	if c < 0 {
		return nil
	}
	return &c
}

func jsonMetOf(met []analyze.Met) []jsonMet {
	out := make([]jsonMet, 0, len(met))
	for _, m := range met {
		jm := jsonMet{Stage: m.Stage.String(), Outcome: m.Outcome.String(), Reason: optCode(m.Reason), Records: m.Records, Devices: m.Devices}
		if m.Class != 0 {
			jm.Class = m.Class.String()
		}
		out = append(out, jm)
	}
	return out
}

func jsonUnrecoveredOf(us []analyze.Unrecovered) []jsonUnrecovered {
	out := make([]jsonUnrecovered, 0, len(us))
	for i := range us {
		u := &us[i]
		ju := jsonUnrecovered{Device: u.Device, State: u.State, Text: LastStateText(u), LastAt: Time(u.At), Stage: u.Stage.String(),
			DueAt: optTime(u.Due), Reason: optCode(u.Reason), Attempts: u.Attempts, CutShort: u.CutShort}
		if u.Due != analyze.NoTime {
			d := u.Delay
			ju.DelayS = &d
		}
		if u.Class != 0 {
			ju.Class = u.Class.String()
		}
		out = append(out, ju)
	}
	return out
}

// windowTime is a bound of --since/--until, nil when unbounded.
func windowTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339Nano)
	return &s
}

// appendJSONExplanation appends f's explanation as a JSON string, written
// in scratch first, so that an explanation left to be written is never
// made a string of its own.
func appendJSONExplanation(b []byte, f *analyze.Finding, scratch *[]byte) []byte {
	*scratch = f.AppendExplanation((*scratch)[:0])
	// the string lives only for the call, and scratch is not written in it
	return auditfmt.AppendJSONString(b, unsafe.String(unsafe.SliceData(*scratch), len(*scratch)))
}
