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

// Report says what a replay did: what the broker did (BrokerDid) apart
// from what the replay itself did as the load generator (ReplayDid), and
// the verdict on the broker, which is given only when the replay kept
// its schedule (Judge).
type Report struct {
	Plan        string  `json:"plan"`
	Broker      string  `json:"broker"`   // "embedded", or its URL without credentials
	Protocol    string  `json:"protocol"` // "3.1.1" or "5"
	Speed       float64 `json:"speed"`
	Interrupted bool    `json:"interrupted"` // ended by Ctrl-C (or a cancelled context) before the schedule did

	Devices           int `json:"devices"`
	ConnectsScheduled int `json:"connects_scheduled"`
	// Shards is how many shards' reports Merge made this one of (0: one
	// process replayed the whole plan); Samples are a shard's outcomes,
	// for Merge (Options.Shard), nil otherwise.
	Shards  int      `json:"shards,omitempty"`
	Samples *Samples `json:"samples,omitempty"`

	BrokerDid `json:"broker_did"`
	ReplayDid `json:"replay_did"`

	Redelivery

	// RestartScheduled says the replay took the broker down on purpose
	// (Options.Restart): connects that failed then are the outage's.
	RestartScheduled bool `json:"restart_scheduled"`
	// LinkDownScheduled says the replay held the devices' link down
	// (Options.LinkDown).
	LinkDownScheduled bool `json:"link_down_scheduled"`

	// Held says whether the broker held: the replay kept its schedule,
	// and no refusal, no timeout, no failed connect unless a restart was
	// scheduled, CONNACK p99 within ConnackSLO. Inconclusive says the
	// replay did not keep its schedule (see ReplayDid.KeptSchedule), so
	// that nothing is said of the broker. Verdict says which, and why.
	Held         bool    `json:"held"`
	Inconclusive bool    `json:"inconclusive"`
	ConnackSLOMs float64 `json:"connack_slo_ms"`
	Verdict      string  `json:"verdict"`
}

// BrokerDid is what the broker did with the connects the replay made:
// its answers, their times, and what it did to the connections after.
type BrokerDid struct {
	ConnectsAccepted int `json:"connects_accepted"`
	ConnectsRefused  int `json:"connects_refused"`
	ConnectsTimedOut int `json:"connects_timed_out"`
	// ConnectsFailed counts the connects whose socket the broker's side
	// would not open (refused, reset) or whose connection ended before a
	// CONNACK: a broker down. A socket this machine could not open is in
	// ReplayDid.ConnectsFailedLocal instead.
	ConnectsFailed int            `json:"connects_failed"`
	RefusedByCode  map[string]int `json:"refused_by_code"` // "0x9f" -> count
	// ProtocolErrors counts the broker's packets that broke the protocol
	// (a packet over the size the replay reads, MaxConnackSize or
	// MaxPacketSize, or malformed): as a connect's answer, or on an
	// accepted connection, which the replay then dropped.
	ProtocolErrors int `json:"protocol_errors"`
	// Dropped counts the accepted connections the broker ended before the
	// replay did (those of ProtocolErrors included).
	Dropped int `json:"dropped_after_accept"`

	// PeakConnectsPerS is the most connects accepted in one second of
	// the replay's wall time, PeakAtS when that second began.
	PeakConnectsPerS int     `json:"peak_connects_per_s"`
	PeakAtS          float64 `json:"peak_at_s"`

	ConnackP50Ms float64 `json:"connack_p50_ms"` // socket-open to CONNACK, of the connects answered
	ConnackP99Ms float64 `json:"connack_p99_ms"`
	ConnackMaxMs float64 `json:"connack_max_ms"`
	// RecoverP50S and RecoverP99S are, over the devices accepted at
	// least once, the plan time from the replay's start to their first
	// accepted connect; Recovered counts them.
	Recovered   int     `json:"recovered"`
	RecoverP50S float64 `json:"recover_p50_s"`
	RecoverP99S float64 `json:"recover_p99_s"`

	WillsDelivered int `json:"wills_delivered"`
}

// ReplayDid is what the replay did as the load generator: whether it
// opened each socket when the plan said, and what failed on this machine
// rather than at the broker.
type ReplayDid struct {
	ConnectsAttempted int `json:"connects_attempted"`
	// ConnectsLinkDown counts the connects due while Options.LinkDown
	// held the devices' link down: they failed without a socket.
	ConnectsLinkDown int `json:"connects_link_down"`
	// ConnectsFailedLocal counts the connects that failed for a reason
	// of this machine: no descriptor (EMFILE, ENFILE), no local port
	// (EADDRNOTAVAIL), no buffer or memory (ENOBUFS, ENOMEM); LocalErrors
	// counts them by error, and, with the embedded broker, the
	// connections its listener could not accept for the same reasons
	// ("accept EMFILE"), which then timed out.
	ConnectsFailedLocal int            `json:"connects_failed_local"`
	LocalErrors         map[string]int `json:"local_errors"`

	// OpenedS is the wall time from the first socket-open to the last;
	// ConnectsPerS the socket-opens per second over it: the rate the
	// replay sustained.
	OpenedS      float64 `json:"opened_s"`
	ConnectsPerS float64 `json:"connects_per_s"`

	LatenessP50Ms float64 `json:"lateness_p50_ms"` // socket-open after its scheduled moment
	LatenessP99Ms float64 `json:"lateness_p99_ms"`
	LatenessMaxMs float64 `json:"lateness_max_ms"`
	// BusiestSeconds counts the plan's busiest seconds (see
	// busiestSeconds), and LatenessBusiestP99Ms is the p99 lateness of
	// the connects due in them: where the storm is, and where a replay
	// falls behind first.
	BusiestSeconds       int     `json:"busiest_seconds"`
	LatenessBusiestP99Ms float64 `json:"lateness_busiest_p99_ms"`
	// MaxLatenessMs is the bound Judge held the lateness to, and
	// KeptSchedule whether the replay kept within it (both p99s) with no
	// local failure.
	MaxLatenessMs float64 `json:"max_lateness_ms"`
	KeptSchedule  bool    `json:"kept_schedule"`
}

// DefaultConnackSLO is the CONNACK p99 a broker must keep to hold.
const DefaultConnackSLO = time.Second

// report sums the run up.
func (r *run) report(interrupted bool) *Report {
	rep := &Report{Plan: r.plan.Name, Speed: r.opts.Speed, Interrupted: interrupted, Devices: len(r.plan.Devices),
		ConnectsScheduled: len(r.plan.Connects), RestartScheduled: r.opts.Restart != nil, LinkDownScheduled: r.opts.LinkDown != nil,
		BrokerDid: BrokerDid{RefusedByCode: map[string]int{}, WillsDelivered: int(r.wills.Load()),
			ProtocolErrors: int(r.broke.Load()), Dropped: int(r.dropped.Load())},
		ReplayDid: ReplayDid{LocalErrors: map[string]int{}}}
	rep.Protocol = "3.1.1"
	if r.opts.Protocol == MQTT5 {
		rep.Protocol = "5"
	}
	if r.opts.AcceptErrors != nil {
		for name, n := range r.opts.AcceptErrors() {
			rep.LocalErrors["accept "+name] += int(n)
		}
	}
	outs := make([]outcome, len(r.results))
	for i := range r.results {
		outs[i] = outcome{result: r.results[i], due: r.due(i), device: r.plan.Connects[i].Device}
	}
	if r.opts.Shard != nil {
		rep.Samples = r.samples(rep, outs)
	}
	acceptedAt := rep.sum(outs, len(r.plan.Devices))
	if r.queue != nil {
		r.queue.report(rep, r.plan, acceptedAt)
	}
	return rep
}

// outcome is what became of one scheduled connect, with when it was
// due (from the start, wall) and its device.
type outcome struct {
	result
	due    time.Duration
	device int32
}

// sum fills in rep's figures from the outcomes of the connects of its
// devices (device indices below devices), adding to the counts it has;
// it returns the accepted connects' wall times from the start.
func (rep *Report) sum(outs []outcome, devices int) (acceptedAt []time.Duration) {
	var late, ack []time.Duration
	first0, last0 := time.Duration(math.MaxInt64), time.Duration(0)
	first := make([]time.Duration, devices)
	for i := range first {
		first[i] = -1
	}
	for i := range outs {
		res := &outs[i]
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
			if d := res.device; first[d] < 0 {
				first[d] = time.Duration(float64(res.at) * rep.Speed)
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
		case local:
			rep.ConnectsFailedLocal++
			rep.LocalErrors[res.errno]++
		}
	}
	busiest := busiestSeconds(outs)
	var lateBusiest []time.Duration
	for i := range outs {
		if res := &outs[i]; res.attempted && busiest[res.due/time.Second] {
			lateBusiest = append(lateBusiest, res.lateness)
		}
	}
	rep.BusiestSeconds, rep.LatenessBusiestP99Ms = len(busiest), ms(rank(lateBusiest, 0.99))
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
	n, at := peakPerSecond(acceptedAt) // sorts them: the queue's waves bin them, in any order
	rep.PeakConnectsPerS, rep.PeakAtS = n, at.Seconds()
	return acceptedAt
}

// DefaultMaxLateness is the lateness (p99, overall and in the busiest
// seconds) within which a replay kept its schedule: a tenth of the
// second that storms are counted in, so that the busiest second's load
// is within about a tenth of the plan's.
const DefaultMaxLateness = 100 * time.Millisecond

// Judge fills in KeptSchedule, Held, Inconclusive and Verdict: the
// replay kept its schedule when no connect failed on this machine and
// its p99 lateness, overall and in its busiest seconds, is within
// maxLateness; only then does it judge the broker, against the CONNACK
// SLO, and otherwise the result is inconclusive.
func (rep *Report) Judge(slo, maxLateness time.Duration) {
	rep.ConnackSLOMs, rep.MaxLatenessMs = ms(slo), ms(maxLateness)
	if why := rep.behind(); len(why) > 0 {
		rep.KeptSchedule, rep.Held, rep.Inconclusive = false, false, true
		rep.Verdict = "inconclusive: " + strings.Join(why, "; ") + ", so the figures do not say what the broker can take"
		return
	}
	rep.KeptSchedule, rep.Inconclusive = true, false
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

// behind says how the replay did not keep its schedule: its lateness
// beyond MaxLatenessMs, and what failed on this machine; nil when it kept
// it.
func (rep *Report) behind() []string {
	var why []string
	if late := max(rep.LatenessP99Ms, rep.LatenessBusiestP99Ms); late > rep.MaxLatenessMs {
		why = append(why, fmt.Sprintf("the replay fell behind its schedule by %s ms at p99 in its %s (%s ms overall), beyond the bound of %s ms",
			fmtMs(rep.LatenessBusiestP99Ms), nOf(rep.BusiestSeconds, "busiest second"), fmtMs(rep.LatenessP99Ms), fmtMs(rep.MaxLatenessMs)))
	}
	if rep.ConnectsFailedLocal > 0 {
		why = append(why, fmt.Sprintf("%d connects failed on this machine, not at the broker (%s)", rep.ConnectsFailedLocal, localText(rep.LocalErrors, false)))
	}
	if accepts := localText(rep.LocalErrors, true); accepts != "" {
		why = append(why, "the embedded broker, in this process, could not accept connections ("+accepts+")")
	}
	return why
}

// localText lists the local errors errs, by count: those of the
// embedded broker's listener ("accept ...") when accepts is true, the
// connects' otherwise; "" when there are none.
func localText(errs map[string]int, accepts bool) string {
	type kv struct {
		name string
		n    int
	}
	var list []kv
	for name, n := range errs {
		if rest, ok := strings.CutPrefix(name, "accept "); ok == accepts && n > 0 {
			list = append(list, kv{rest, n})
		}
	}
	slices.SortFunc(list, func(a, b kv) int { return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.name, b.name)) })
	var parts []string
	for _, e := range list {
		parts = append(parts, fmt.Sprintf("%d × %s", e.n, e.name))
	}
	return strings.Join(parts, ", ")
}

// fmtMs writes a figure in ms as the report does: whole above 10 ms, to
// a tenth below.
func fmtMs(x float64) string {
	if x >= 10 {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.1f", x)
}

// nOf says n things: "1 busiest second", "12 busiest seconds".
func nOf(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// busiestSeconds returns the plan's busiest seconds of wall time from
// the replay's start, of the connects outs: those in which at least half
// as many connects are due as in the busiest one.
func busiestSeconds(outs []outcome) map[time.Duration]bool {
	per := map[time.Duration]int{}
	peak := 0
	for i := range outs {
		sec := outs[i].due / time.Second
		per[sec]++
		peak = max(peak, per[sec])
	}
	out := map[time.Duration]bool{}
	for sec, n := range per {
		if 2*n >= peak {
			out[sec] = true
		}
	}
	return out
}

// dueAt is when a connect at plan time at is due, from the replay's
// start, at speed.
func dueAt(at time.Duration, speed float64) time.Duration {
	return time.Duration(float64(at) / speed)
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

// Row is one line of a report: its name, its value in a report, and
// whose doing it says: the broker's (SideBroker), the replay's own
// (SideReplay), or neither (the plan, and the result).
type Row struct {
	Name  string
	Value func(*Report) string
	Side  string
}

// The sides a Row is on, as the reports head them.
const (
	SideBroker = "what the broker did"
	SideReplay = "what the replay did (the load generator)"
)

// Rows are the lines WriteText writes, in order: a comparison shows each
// with the value of every report beside it.
var Rows = []Row{
	{Name: "broker", Value: func(r *Report) string { return r.Broker + " (MQTT " + r.Protocol + ")" }},
	{Name: "devices", Value: func(r *Report) string { return fmt.Sprint(r.Devices) }},
	{Name: "connects scheduled", Value: func(r *Report) string { return fmt.Sprint(r.ConnectsScheduled) }},
	{Name: "accepted", Side: SideBroker, Value: func(r *Report) string { return fmt.Sprint(r.ConnectsAccepted) }},
	{Name: "refused", Side: SideBroker, Value: func(r *Report) string { return refusedText(r) }},
	{Name: "timed out", Side: SideBroker, Value: func(r *Report) string { return fmt.Sprint(r.ConnectsTimedOut) }},
	{Name: "failed (no broker)", Side: SideBroker, Value: func(r *Report) string { return fmt.Sprint(r.ConnectsFailed) }},
	{Name: "protocol errors, dropped", Side: SideBroker, Value: func(r *Report) string { return fmt.Sprintf("%d, %d", r.ProtocolErrors, r.Dropped) }},
	{Name: "peak accepted/s", Side: SideBroker, Value: func(r *Report) string { return fmt.Sprintf("%d at +%.1fs", r.PeakConnectsPerS, r.PeakAtS) }},
	{Name: "CONNACK p50/p99/max", Side: SideBroker, Value: func(r *Report) string {
		return fmt.Sprintf("%.1f / %.1f / %.1f ms", r.ConnackP50Ms, r.ConnackP99Ms, r.ConnackMaxMs)
	}},
	{Name: "recovered", Side: SideBroker, Value: func(r *Report) string {
		return fmt.Sprintf("%d of %d, p50 %.1fs, p99 %.1fs", r.Recovered, r.Devices, r.RecoverP50S, r.RecoverP99S)
	}},
	{Name: "wills delivered", Side: SideBroker, Value: func(r *Report) string { return fmt.Sprint(r.WillsDelivered) }},
	{Name: "connects attempted", Side: SideReplay, Value: func(r *Report) string { return fmt.Sprint(r.ConnectsAttempted) }},
	{Name: "sustained", Side: SideReplay, Value: func(r *Report) string { return fmt.Sprintf("%.0f socket-opens/s", r.ConnectsPerS) }},
	{Name: "lateness p50/p99", Side: SideReplay, Value: func(r *Report) string { return fmt.Sprintf("%.2f / %.2f ms", r.LatenessP50Ms, r.LatenessP99Ms) }},
	{Name: "lateness, busiest s", Side: SideReplay, Value: func(r *Report) string {
		return fmt.Sprintf("p99 %.2f ms over %s (bound %s ms)", r.LatenessBusiestP99Ms, nOf(r.BusiestSeconds, "second"), fmtMs(r.MaxLatenessMs))
	}},
	{Name: "failed here", Side: SideReplay, Value: func(r *Report) string { return failedHereText(r) }},
	{Name: "result", Value: func(r *Report) string { return r.Verdict + interruptedText(r) }},
}

// WriteText writes the reports for a terminal, side by side when there
// are two, the broker's lines apart from the replay's own under their
// headings.
func WriteText(w io.Writer, reps ...*Report) error {
	var b strings.Builder
	if len(reps) > 1 {
		fmt.Fprintf(&b, "%-28s", "")
		for _, r := range reps {
			fmt.Fprintf(&b, "  %-34s", safe.Text(r.Plan))
		}
		b.WriteString("\n")
	} else {
		fmt.Fprintf(&b, "%-28s  %s (speed %gx%s)\n", "replayed:", safe.Text(reps[0].Plan), reps[0].Speed, shardText(reps[0]))
	}
	side := ""
	for _, row := range RowsOf(reps...) {
		indent := ""
		if row.Side != "" {
			indent = "  "
		}
		if row.Side != side && row.Side != "" {
			fmt.Fprintf(&b, "%s:\n", row.Side)
		}
		side = row.Side
		fmt.Fprintf(&b, "%-28s", indent+row.Name+":")
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

// shardText says, for the header, which shard r is, or how many shards
// it merges; "" for a whole replay.
func shardText(r *Report) string {
	switch {
	case r.Samples != nil:
		return fmt.Sprintf(", shard %d/%d", r.Samples.Shard, r.Samples.Shards)
	case r.Shards > 0:
		return fmt.Sprintf(", %d shards merged", r.Shards)
	}
	return ""
}

// failedHereText says the connects that failed on this machine, and the
// embedded broker's connections it could not accept.
func failedHereText(r *Report) string {
	s := fmt.Sprint(r.ConnectsFailedLocal)
	if t := localText(r.LocalErrors, false); t != "" {
		s += " (" + t + ")"
	}
	if t := localText(r.LocalErrors, true); t != "" {
		s += "; the embedded broker could not accept: " + t
	}
	return s
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
