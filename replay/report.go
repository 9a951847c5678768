package replay

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/stormaudit/stormaudit/internal/safe"
)

// Report says what a replay did to the broker.
type Report struct {
	Plan        string  `json:"plan"`
	Broker      string  `json:"broker"`   // "embedded", or its URL without credentials
	Protocol    string  `json:"protocol"` // "3.1.1" or "5"
	Speed       float64 `json:"speed"`
	Interrupted bool    `json:"interrupted"` // ended by Ctrl-C (or a cancelled context) before the schedule did

	Devices           int `json:"devices"`
	ConnectsScheduled int `json:"connects_scheduled"`
	ConnectsAttempted int `json:"connects_attempted"`
	ConnectsAccepted  int `json:"connects_accepted"`
	ConnectsRefused   int `json:"connects_refused"`
	ConnectsTimedOut  int `json:"connects_timed_out"`
	// ConnectsFailed counts the connects whose socket could not be
	// opened or whose connection ended before a CONNACK (a broker down).
	ConnectsFailed int            `json:"connects_failed"`
	RefusedByCode  map[string]int `json:"refused_by_code"` // "0x9f" -> count
	// ConnectsLinkDown counts the connects due while Options.LinkDown
	// held the devices' link down: they failed without a socket.
	ConnectsLinkDown int `json:"connects_link_down"`
	// ProtocolErrors counts the broker's packets that broke the protocol
	// (a packet over the size the replay reads, MaxConnackSize or
	// MaxPacketSize, or malformed): as a connect's answer, or on an
	// accepted connection, which the replay then dropped.
	ProtocolErrors int `json:"protocol_errors"`
	// Dropped counts the accepted connections the broker ended before the
	// replay did (those of ProtocolErrors included).
	Dropped int `json:"dropped_after_accept"`

	// OpenedS is the wall time from the first socket-open to the last;
	// ConnectsPerS the socket-opens per second over it: the rate the
	// replay sustained.
	OpenedS      float64 `json:"opened_s"`
	ConnectsPerS float64 `json:"connects_per_s"`

	// PeakConnectsPerS is the most connects accepted in one second of
	// the replay's wall time, PeakAtS when that second began.
	PeakConnectsPerS int     `json:"peak_connects_per_s"`
	PeakAtS          float64 `json:"peak_at_s"`

	LatenessP50Ms float64 `json:"lateness_p50_ms"` // socket-open after its scheduled moment
	LatenessP99Ms float64 `json:"lateness_p99_ms"`
	LatenessMaxMs float64 `json:"lateness_max_ms"`
	ConnackP50Ms  float64 `json:"connack_p50_ms"` // socket-open to CONNACK, of the connects answered
	ConnackP99Ms  float64 `json:"connack_p99_ms"`
	ConnackMaxMs  float64 `json:"connack_max_ms"`
	// RecoverP50S and RecoverP99S are, over the devices accepted at
	// least once, the plan time from the replay's start to their first
	// accepted connect; Recovered counts them.
	Recovered   int     `json:"recovered"`
	RecoverP50S float64 `json:"recover_p50_s"`
	RecoverP99S float64 `json:"recover_p99_s"`

	WillsDelivered int `json:"wills_delivered"`

	Redelivery

	// RestartScheduled says the replay took the broker down on purpose
	// (Options.Restart): connects that failed then are the outage's.
	RestartScheduled bool `json:"restart_scheduled"`
	// LinkDownScheduled says the replay held the devices' link down
	// (Options.LinkDown).
	LinkDownScheduled bool `json:"link_down_scheduled"`

	// Held says whether the broker held: no refusal, no timeout, no
	// failed connect unless a restart was scheduled, CONNACK p99 within
	// ConnackSLO. Verdict says why not, when it did not.
	Held         bool    `json:"held"`
	ConnackSLOMs float64 `json:"connack_slo_ms"`
	Verdict      string  `json:"verdict"`
}

// DefaultConnackSLO is the CONNACK p99 a broker must keep to hold.
const DefaultConnackSLO = time.Second

// report sums the run up.
func (r *run) report(interrupted bool) *Report {
	rep := &Report{Plan: r.plan.Name, Speed: r.opts.Speed, Interrupted: interrupted, Devices: len(r.plan.Devices),
		ConnectsScheduled: len(r.plan.Connects), RefusedByCode: map[string]int{}, WillsDelivered: int(r.wills.Load()),
		RestartScheduled: r.opts.Restart != nil, LinkDownScheduled: r.opts.LinkDown != nil,
		ProtocolErrors: int(r.broke.Load()), Dropped: int(r.dropped.Load())}
	rep.Protocol = "3.1.1"
	if r.opts.Protocol == MQTT5 {
		rep.Protocol = "5"
	}
	var late, ack []time.Duration
	first0, last0 := time.Duration(math.MaxInt64), time.Duration(0)
	var acceptedAt []time.Duration
	first := make([]time.Duration, len(r.plan.Devices))
	for i := range first {
		first[i] = -1
	}
	for i := range r.results {
		res := &r.results[i]
		if !res.attempted {
			continue
		}
		rep.ConnectsAttempted++
		late = append(late, res.lateness)
		first0, last0 = min(first0, res.opened), max(last0, res.opened)
		switch res.kind {
		case accepted:
			rep.ConnectsAccepted++
			ack = append(ack, res.connack)
			acceptedAt = append(acceptedAt, res.at)
			if d := r.plan.Connects[i].Device; first[d] < 0 {
				first[d] = time.Duration(float64(res.at) * r.opts.Speed)
			}
		case refused:
			rep.ConnectsRefused++
			ack = append(ack, res.connack)
			rep.RefusedByCode[fmt.Sprintf("0x%02x", res.code)]++
		case timedOutKind:
			rep.ConnectsTimedOut++
		case failed:
			rep.ConnectsFailed++
		case protocol:
			rep.ProtocolErrors++
		case linkDown:
			rep.ConnectsLinkDown++
		}
	}
	rep.LatenessP50Ms, rep.LatenessP99Ms, rep.LatenessMaxMs = ms(rank(late, 0.5)), ms(rank(late, 0.99)), ms(rank(late, 1))
	if rep.ConnectsAttempted > 1 && last0 > first0 {
		rep.OpenedS = (last0 - first0).Seconds()
		rep.ConnectsPerS = math.Round(float64(rep.ConnectsAttempted-1) / rep.OpenedS)
	}
	rep.ConnackP50Ms, rep.ConnackP99Ms, rep.ConnackMaxMs = ms(rank(ack, 0.5)), ms(rank(ack, 0.99)), ms(rank(ack, 1))
	var rec []time.Duration
	for _, f := range first {
		if f >= 0 {
			rec = append(rec, f)
		}
	}
	rep.Recovered = len(rec)
	rep.RecoverP50S, rep.RecoverP99S = rank(rec, 0.5).Seconds(), rank(rec, 0.99).Seconds()
	if r.queue != nil {
		r.queue.report(rep, r.plan, acceptedAt)
	}
	n, at := peakPerSecond(acceptedAt)
	rep.PeakConnectsPerS, rep.PeakAtS = n, at.Seconds()
	return rep
}

// Judge fills in Held and Verdict against the CONNACK SLO.
func (rep *Report) Judge(slo time.Duration) {
	rep.ConnackSLOMs = ms(slo)
	var why []string
	if rep.ConnectsRefused > 0 {
		why = append(why, fmt.Sprintf("%d connects refused", rep.ConnectsRefused))
	}
	if rep.ConnectsTimedOut > 0 {
		why = append(why, fmt.Sprintf("%d connects timed out", rep.ConnectsTimedOut))
	}
	if rep.ProtocolErrors > 0 {
		why = append(why, fmt.Sprintf("%d packets from the broker broke the protocol", rep.ProtocolErrors))
	}
	if rep.Dropped > 0 && !rep.RestartScheduled && !rep.LinkDownScheduled {
		why = append(why, fmt.Sprintf("%d accepted connections dropped by the broker", rep.Dropped))
	}
	if rep.ConnectsFailed > 0 && !rep.RestartScheduled {
		why = append(why, fmt.Sprintf("%d connects failed with no broker restart scheduled (no broker answered)", rep.ConnectsFailed))
	}
	if rep.ConnectsAttempted > 0 && rep.ConnectsAccepted == 0 && len(why) == 0 {
		why = append(why, "no connect was accepted")
	}
	if rep.ConnackP99Ms > rep.ConnackSLOMs {
		why = append(why, fmt.Sprintf("CONNACK p99 %.1f ms above the SLO of %.0f ms", rep.ConnackP99Ms, rep.ConnackSLOMs))
	}
	rep.Held = len(why) == 0
	rep.Verdict = "the broker held"
	if !rep.Held {
		rep.Verdict = "the broker did not hold: " + strings.Join(why, ", ")
	}
}

// rank returns the nearest-rank p-quantile of xs (which it sorts), 0 if
// empty.
func rank(xs []time.Duration, p float64) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	k := int(math.Ceil(p*float64(len(xs)))) - 1
	return xs[min(max(k, 0), len(xs)-1)]
}

// peakPerSecond returns the most of ts in a window [t, t+1s) starting at
// one of them, and that t.
func peakPerSecond(ts []time.Duration) (int, time.Duration) {
	slices.Sort(ts)
	best, at, j := 0, time.Duration(0), 0
	for i, t := range ts {
		for j < len(ts) && ts[j] < t+time.Second {
			j++
		}
		if j-i > best {
			best, at = j-i, t
		}
	}
	return best, at
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

// WriteJSON writes the reports as one JSON document: the report itself,
// or, for a comparison, {"recorded": ..., "what_if": ...}.
func WriteJSON(w io.Writer, reps ...*Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if len(reps) == 1 {
		return enc.Encode(reps[0])
	}
	return enc.Encode(map[string]*Report{"recorded": reps[0], "what_if": reps[1]})
}

// Row is one line of a report: its name and its value in a report.
type Row struct {
	Name  string
	Value func(*Report) string
}

// Rows are the lines WriteText writes, in order: a comparison shows each
// with the value of every report beside it.
var Rows = []Row{
	{Name: "broker", Value: func(r *Report) string { return r.Broker + " (MQTT " + r.Protocol + ")" }},
	{Name: "devices", Value: func(r *Report) string { return fmt.Sprint(r.Devices) }},
	{Name: "connects scheduled", Value: func(r *Report) string { return fmt.Sprint(r.ConnectsScheduled) }},
	{Name: "connects attempted", Value: func(r *Report) string { return fmt.Sprint(r.ConnectsAttempted) }},
	{Name: "accepted", Value: func(r *Report) string { return fmt.Sprint(r.ConnectsAccepted) }},
	{Name: "refused", Value: func(r *Report) string { return refusedText(r) }},
	{Name: "timed out", Value: func(r *Report) string { return fmt.Sprint(r.ConnectsTimedOut) }},
	{Name: "failed (no broker)", Value: func(r *Report) string { return fmt.Sprint(r.ConnectsFailed) }},
	{Name: "protocol errors, dropped", Value: func(r *Report) string { return fmt.Sprintf("%d, %d", r.ProtocolErrors, r.Dropped) }},
	{Name: "peak accepted/s", Value: func(r *Report) string { return fmt.Sprintf("%d at +%.1fs", r.PeakConnectsPerS, r.PeakAtS) }},
	{Name: "lateness p50/p99", Value: func(r *Report) string { return fmt.Sprintf("%.2f / %.2f ms", r.LatenessP50Ms, r.LatenessP99Ms) }},
	{Name: "CONNACK p50/p99/max", Value: func(r *Report) string {
		return fmt.Sprintf("%.1f / %.1f / %.1f ms", r.ConnackP50Ms, r.ConnackP99Ms, r.ConnackMaxMs)
	}},
	{Name: "recovered", Value: func(r *Report) string {
		return fmt.Sprintf("%d of %d, p50 %.1fs, p99 %.1fs", r.Recovered, r.Devices, r.RecoverP50S, r.RecoverP99S)
	}},
	{Name: "wills delivered", Value: func(r *Report) string { return fmt.Sprint(r.WillsDelivered) }},
	{Name: "result", Value: func(r *Report) string { return r.Verdict + interruptedText(r) }},
}

// WriteText writes the reports for a terminal, side by side when there
// are two.
func WriteText(w io.Writer, reps ...*Report) error {
	var b strings.Builder
	if len(reps) > 1 {
		fmt.Fprintf(&b, "%-20s", "")
		for _, r := range reps {
			fmt.Fprintf(&b, "  %-34s", safe.Text(r.Plan))
		}
		b.WriteString("\n")
	} else {
		fmt.Fprintf(&b, "%-20s  %s (speed %gx)\n", "replayed:", safe.Text(reps[0].Plan), reps[0].Speed)
	}
	for _, row := range RowsOf(reps...) {
		fmt.Fprintf(&b, "%-20s", row.Name+":")
		for _, r := range reps {
			fmt.Fprintf(&b, "  %-34s", row.Value(r))
		}
		b.WriteString("\n")
	}
	writeWaves(&b, reps)
	var out strings.Builder
	for _, line := range strings.SplitAfter(b.String(), "\n") {
		out.WriteString(strings.TrimRight(line, " \n"))
		if strings.HasSuffix(line, "\n") {
			out.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, out.String())
	return err
}

func refusedText(r *Report) string {
	if r.ConnectsRefused == 0 {
		return "0"
	}
	type kv struct {
		code string
		n    int
	}
	var codes []kv
	for c, n := range r.RefusedByCode {
		codes = append(codes, kv{c, n})
	}
	slices.SortFunc(codes, func(a, b kv) int { return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.code, b.code)) })
	var parts []string
	for _, c := range codes {
		parts = append(parts, fmt.Sprintf("%d × %s", c.n, c.code))
	}
	return fmt.Sprintf("%d (%s)", r.ConnectsRefused, strings.Join(parts, ", "))
}

func interruptedText(r *Report) string {
	if r.Interrupted {
		return " (interrupted: a partial report)"
	}
	return ""
}

// ReadJSON reads what WriteJSON wrote: one report, or a comparison's
// recorded and what-if reports, in that order. Unknown members are
// errors, so that a file of another kind is not read as an empty report.
func ReadJSON(r io.Reader) ([]*Report, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	strict := func(v any) error {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			if off := jsonErrorOffset(b, err); off >= 0 {
				return fmt.Errorf("line %d: %w", 1+bytes.Count(b[:off], []byte("\n")), err)
			}
			return err
		}
		if dec.More() {
			return errors.New("more than one JSON value")
		}
		return nil
	}
	var pair struct {
		Recorded *Report `json:"recorded"`
		WhatIf   *Report `json:"what_if"`
	}
	if err := strict(&pair); err == nil && pair.Recorded != nil && pair.WhatIf != nil {
		return []*Report{pair.Recorded, pair.WhatIf}, nil
	}
	var one Report
	if err := strict(&one); err != nil {
		return nil, fmt.Errorf("expected the JSON of stormaudit replay --format json (a report, or {\"recorded\", \"what_if\"}): %w", err)
	}
	if one.Plan == "" {
		return nil, errors.New("expected the JSON of stormaudit replay --format json: it has no plan")
	}
	return []*Report{&one}, nil
}

// jsonErrorOffset returns where in b the decoding error err is, -1 when
// it cannot tell: a syntax or type error says so, and an unknown member
// is where its name is first a key.
func jsonErrorOffset(b []byte, err error) int64 {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return min(se.Offset, int64(len(b)))
	case errors.As(err, &te):
		return min(te.Offset, int64(len(b)))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return int64(len(b))
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		if k := regexp.MustCompile(regexp.QuoteMeta(name) + `\s*:`).FindIndex(b); k != nil {
			return int64(k[0])
		}
	}
	return -1
}
