package report

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/internal/safe"
)

// TextOptions configure Text.
type TextOptions struct {
	// PerRule is how many findings are shown for each rule, worst first
	// (DefaultPerRule if 0; all if negative). The counts cover them all.
	PerRule int
	// Records is how many records of a finding are named (DefaultRecords
	// if 0; all if negative).
	Records int
	// Color draws each finding's severity in colour (SGR escapes: error
	// red, warning yellow, info cyan), for a terminal; never for a file
	// or a pipe.
	Color bool
}

// The defaults of TextOptions.
const (
	DefaultPerRule = 3
	DefaultRecords = 5
)

// Text writes the result as a report for a terminal or a CI log (see the
// package documentation).
func Text(w io.Writer, r *analyze.Result, opts TextOptions) error {
	if opts.PerRule == 0 {
		opts.PerRule = DefaultPerRule
	}
	if opts.Records == 0 {
		opts.Records = DefaultRecords
	}
	bw := bufio.NewWriter(w)
	for i, v := range Verdict(r) {
		label := "verdict:  "
		if i > 0 {
			label = "          "
		}
		fmt.Fprintln(bw, label+safe.Text(v)+".")
	}
	if st := r.Summary.Fleet; st != nil {
		for i := range st.Incidents {
			fmt.Fprintln(bw, IncidentBlock(&st.Incidents[i]))
		}
		if len(st.ClockOffsets) > 0 {
			fmt.Fprintln(bw, ClockText(st.ClockOffsets))
		}
	}
	textHeader(bw, r)
	groups := groupByRule(r)
	textCounts(bw, r, groups)
	for _, g := range groups {
		textGroup(bw, r, g, opts)
	}
	if notes := r.Summary.Notes; len(notes) > 0 {
		fmt.Fprintf(bw, "\nnotes:\n")
		for _, n := range notes {
			fmt.Fprintf(bw, "  %s\n", safe.Text(n))
		}
	}
	if st := r.Summary.Fleet; st != nil {
		fmt.Fprintf(bw, "\n%s\n", fleetText(st))
	}
	return bw.Flush()
}

// ruleGroup is one rule's findings, worst first.
type ruleGroup struct {
	info     analyze.RuleInfo
	findings []*analyze.Finding
	bySev    [analyze.Error + 1]int
	devices  int
	seen     map[string]bool // the devices counted
}

// groupByRule groups the findings by rule, in the order the rules' first
// (so worst) findings come in.
func groupByRule(r *analyze.Result) []*ruleGroup {
	rules := rulesOf(r)
	idx := ruleIndex(rules)
	var groups []*ruleGroup
	byID := map[string]*ruleGroup{}
	var g *ruleGroup
	for i := range r.Findings {
		f := &r.Findings[i]
		if g == nil || g.info.ID != f.Rule {
			if g = byID[f.Rule]; g == nil {
				g = &ruleGroup{info: rules[idx[f.Rule]], seen: map[string]bool{}}
				byID[f.Rule] = g
				groups = append(groups, g)
			}
		}
		g.findings = append(g.findings, f)
		if f.Severity <= analyze.Error {
			g.bySev[f.Severity]++
		}
		if !g.seen[f.Device] {
			g.seen[f.Device] = true
			g.devices++
		}
	}
	return groups
}

func textHeader(w io.Writer, r *analyze.Result) {
	s := r.Summary
	from := ""
	switch {
	case r.Dataset != "":
		from = " in dataset " + r.Dataset
	case len(r.Sources) == 1:
		from = " from " + source(r.Sources, 0)
	case len(r.Sources) > 1:
		from = fmt.Sprintf(" from %d inputs", len(r.Sources))
	}
	fmt.Fprintf(w, "checked:  %s, %s%s", plural(s.Devices, "device"), plural(int(s.Records), "record"), safe.Text(from))
	if !s.Since.IsZero() || !s.Until.IsZero() {
		fmt.Fprintf(w, "; %s outside %s, not judged", plural(int(s.Outside), "record"), windowText(s.Since, s.Until))
	}
	if s.Rejected > 0 {
		fmt.Fprintf(w, "; %s rejected at ingest", plural(int(s.Rejected), "line"))
	}
	fmt.Fprintf(w, "\npolicy:   %s\n", safe.Text(policyText(s.Policy)))
	if s.Policy.Source == "inferred" && s.Policy.Basis != "" {
		fmt.Fprintf(w, "          (%s)\n", safe.Text(s.Policy.Basis))
	}
	n := len(r.Findings)
	if n == 0 {
		ran := plural(len(r.Rules)-len(s.Skipped), "rule")
		if k := len(s.Skipped); k > 0 {
			ran += fmt.Sprintf(" ran, %d skipped", k)
		}
		fmt.Fprintf(w, "findings: none (%s%s)\n", ran, notRunText(r))
		return
	}
	fmt.Fprintf(w, "findings: %d (%d error, %d warning, %d info)\n", n,
		s.BySeverity["error"], s.BySeverity["warning"], s.BySeverity["info"])
}

// policyText says which policy the log was checked against.
func policyText(p analyze.PolicyInfo) string {
	sum := ""
	if p.Policy != nil {
		sum = ": " + p.Policy.Summary()
	}
	switch p.Source {
	case "declared":
		return "declared " + p.Name + sum
	case "inferred":
		return "inferred from the log (" + strings.Join(p.Inferred, ", ") + ")" + sum
	}
	return "none declared, none inferred from the log"
}

// textCounts writes the findings by rule and severity, and the rules that
// found nothing.
func textCounts(w io.Writer, r *analyze.Result, groups []*ruleGroup) {
	if len(groups) > 0 {
		width := len("rule")
		for _, g := range groups {
			width = max(width, len(g.info.ID))
		}
		fmt.Fprintf(w, "\n  %-*s  %5s  %7s  %4s  %7s\n", width, "rule", "error", "warning", "info", "devices")
		for _, g := range groups {
			fmt.Fprintf(w, "  %-*s  %5d  %7d  %4d  %7d\n", width, g.info.ID,
				g.bySev[analyze.Error], g.bySev[analyze.Warning], g.bySev[analyze.Info], g.devices)
		}
	}
	has := map[string]bool{}
	for _, g := range groups {
		has[g.info.ID] = true
	}
	var clean, skipped []string
	for _, ri := range r.Rules {
		if _, skip := skipReason(r, ri.ID); skip {
			skipped = append(skipped, ri.ID)
		} else if !has[ri.ID] {
			clean = append(clean, ri.ID)
		}
	}
	if len(clean) > 0 && len(groups) > 0 {
		fmt.Fprintf(w, "%s\n", wrapList("  no findings: ", clean, 78))
	}
	if len(skipped) > 0 {
		fmt.Fprintf(w, "%s\n", wrapList("  skipped:     ", skipped, 78))
	}
	// the rules that did not run, by why: disabled by the configuration,
	// or without a broker log, so that the counts add up to the catalogue
	var reasons []string
	by := map[string][]string{}
	for _, n := range r.Summary.NotRun {
		if by[n.Reason] == nil {
			reasons = append(reasons, n.Reason)
		}
		by[n.Reason] = append(by[n.Reason], n.Rule)
	}
	for _, why := range reasons {
		fmt.Fprintf(w, "%s\n", wrapList(fmt.Sprintf("  not run (%s): ", why), by[why], 78))
	}
}

// wrapList writes items after prefix, comma-separated, in lines of at
// most width bytes (unless one item is longer), continued lines indented
// as far as prefix.
func wrapList(prefix string, items []string, width int) string {
	var b strings.Builder
	b.WriteString(prefix)
	col := len(prefix)
	for i, it := range items {
		if i < len(items)-1 {
			it += ","
		}
		if i > 0 {
			if col+1+len(it) > width {
				b.WriteString("\n" + strings.Repeat(" ", len(prefix)))
				col = len(prefix)
			} else {
				b.WriteString(" ")
				col++
			}
		}
		b.WriteString(it)
		col += len(it)
	}
	return b.String()
}

// textGroup writes a rule's worst findings.
func textGroup(w io.Writer, r *analyze.Result, g *ruleGroup, opts TextOptions) {
	fmt.Fprintf(w, "\n%s: %s (%s)\n", g.info.ID, g.info.Title, plural(len(g.findings), "finding"))
	shown := g.findings
	if opts.PerRule > 0 && len(shown) > opts.PerRule {
		shown = shown[:opts.PerRule]
	}
	for _, f := range shown {
		fmt.Fprintf(w, "  %s %s %s\n", severityText(f.Severity, opts.Color), safe.Text(f.Device), spanText(f.Start, f.End))
		fmt.Fprintf(w, "    %s\n", safe.Text(f.Message))
		if x := f.Explained(); x != "" {
			fmt.Fprintf(w, "    %s\n", safe.Text(x))
		}
		if len(f.Records) > 0 {
			fmt.Fprintf(w, "    records: %s\n", safe.Text(recordsText(r.Sources, f.Records, opts.Records)))
		}
	}
	if more := len(g.findings) - len(shown); more > 0 {
		fmt.Fprintf(w, "  ... and %d more %s %s (--format json lists every finding)\n", more, g.info.ID, pluralWord(more, "finding"))
	}
}

func spanText(start, end int64) string {
	if start == end {
		return Time(start)
	}
	return Time(start) + " to " + Time(end)
}

func recordsText(sources []string, refs []analyze.Ref, n int) string {
	shown := refs
	if n > 0 && len(shown) > n {
		shown = shown[:n]
	}
	parts := make([]string, len(shown))
	for i, ref := range shown {
		parts[i] = RefText(sources, ref)
	}
	s := strings.Join(parts, ", ")
	if more := len(refs) - len(shown); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

func pluralWord(n int, thing string) string {
	if n == 1 {
		return thing
	}
	return thing + "s"
}

// fleetText sums the fleet's figures up in two lines (three with an
// outbox flush).
func fleetText(st *analyze.FleetStats) string {
	ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	s := fmt.Sprintf("fleet:    %s, %d socket-opens", plural(st.Devices, "device"), st.Attempts)
	if st.Peak > 0 {
		s += fmt.Sprintf("; socket-opens (the broker up or not) peaked at %d in %v at %s", st.Peak, st.Window, Time(st.PeakAt))
	}
	if st.Flushed > 0 {
		s += fmt.Sprintf("\noutbox:   %d messages flushed; the flush peaked at %d messages in 1s at %s", st.Flushed, st.FlushPeak, Time(st.FlushPeakAt))
	}
	if st.Redelivered > 0 {
		s += fmt.Sprintf("\ninbound:  %d messages redelivered by the broker; the redelivery peaked at %d messages in 1s at %s",
			st.Redelivered, st.RedeliveryPeak, Time(st.RedeliveryPeakAt))
	}
	s += fmt.Sprintf("\nrecovery: %d of %d devices that lost the connection recovered", st.Recovered, st.Lost)
	if st.TTR.Len() > 0 {
		s += fmt.Sprintf("; time to recover p50 %v, p90 %v, p99 %v, max %v; fairness %.2f (Jain's index of the times to recover: 1 when every device took as long, 1/n when one took all)",
			ms(st.TTR50), ms(st.TTR90), ms(st.TTR99), ms(st.TTRMax), st.Fairness)
		s += EstimateText(&st.TTR)
	}
	return s
}

// EstimateText says, when the percentiles of the fleet's times to
// recover d (and so its fairness) are estimates, how far they can be
// off; "" when they are exact.
func EstimateText(d *analyze.Durations) string {
	return estimateText(d, "p50 to p99 and fairness are", "times to recover")
}

// IncidentEstimateText is EstimateText of an incident's times to recover,
// which have no fairness.
func IncidentEstimateText(d *analyze.Durations) string {
	return estimateText(d, "p50 to p99 are", "times to recover")
}

func estimateText(d *analyze.Durations, what, of string) string {
	if d.Exact() {
		return ""
	}
	return fmt.Sprintf(" (%s estimates from %d %s: each percentile within ±%g%%; max exact)",
		what, d.Len(), of, 100*analyze.DurationsAccuracy)
}

// ClockText says which devices' clocks the broker's log or the incidents
// showed to be off, naming up to five of each.
func ClockText(offs []analyze.ClockOffset) string {
	var lines []string
	for _, basis := range []string{analyze.BasisBroker, analyze.BasisAudit} {
		var some []analyze.ClockOffset
		for _, o := range offs {
			if o.Basis == basis {
				some = append(some, o)
			}
		}
		if len(some) == 0 {
			continue
		}
		lo, hi := some[0].Offset, some[0].Offset
		var res time.Duration
		for _, o := range some {
			lo, hi, res = min(lo, o.Offset), max(hi, o.Offset), max(res, o.Resolution)
		}
		r := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
		s := fmt.Sprintf("clocks:   %s stamped their connects %v to %v off the broker's accepts of them", plural(len(some), "device"), r(lo), r(hi))
		if basis == analyze.BasisAudit {
			s = fmt.Sprintf("clocks:   %s lost the connection and got it back together with the rest of the fleet, but stamped both %v to %v off",
				plural(len(some), "device"), r(lo), r(hi))
		}
		s += fmt.Sprintf(" (positive: ahead; resolution %v): their clocks are off, and the incidents are on corrected times:", r(res))
		for i, o := range some {
			if i == 5 {
				s += fmt.Sprintf(" and %d more", len(some)-5)
				break
			}
			s += fmt.Sprintf(" %s %+.3fs", safe.Text(o.Device), o.Offset.Seconds())
		}
		lines = append(lines, s+".")
	}
	if s := clockStepsText(offs); s != "" {
		lines = append(lines, s)
	}
	return strings.Join(lines, "\n")
}

// clockStepsText names the devices whose clocks stepped (an offset with an
// Until): "clocks:   2 devices' clocks stepped: dev-1 +4.000s until
// 2026-...Z (its clock), then on time".
func clockStepsText(offs []analyze.ClockOffset) string {
	after := map[string]analyze.ClockOffset{} // the offset that held after a step
	for _, o := range offs {
		if o.From != analyze.NoTime {
			after[o.Device] = o
		}
	}
	var parts []string
	for _, o := range offs {
		if o.Until == analyze.NoTime {
			continue
		}
		then := "then on time"
		if a, ok := after[o.Device]; ok {
			then = fmt.Sprintf("then %+.3fs", a.Offset.Seconds())
		}
		parts = append(parts, fmt.Sprintf("%s %+.3fs until %s (its clock), %s", safe.Text(o.Device), o.Offset.Seconds(), Time(o.Until), then))
	}
	if len(parts) == 0 {
		return ""
	}
	n := len(parts)
	if n > 5 {
		parts = append(parts[:5], fmt.Sprintf("and %d more", n-5))
	}
	who := "1 device's clock"
	if n > 1 {
		who = fmt.Sprintf("%d devices' clocks", n)
	}
	return fmt.Sprintf("clocks:   %s stepped (an NTP fix between two of its records; each part judged on its own offset): %s.",
		who, strings.Join(parts, ", "))
}

// IncidentBlock says all the text says of an incident, in lines: what it
// was (IncidentText), what the broker's log saw of it, why (what its
// devices met) and who never came back.
func IncidentBlock(in *analyze.Incident) string {
	s := IncidentText(in)
	if in.Broker != nil {
		s += "\n" + IncidentBrokerText(in)
	}
	s += "\n          why: " + DiagnosisText(in) + "."
	if v := ServiceText(in); v != "" {
		s += "\n          " + v + "."
	}
	if v := CostText(in); v != "" {
		s += "\n          " + v + "."
	}
	if v := PresenceText(in); v != "" {
		s += "\n          presence: " + v + "."
	}
	if u := UnrecoveredText(in); u != "" {
		s += "\n          " + u
	}
	return s
}

// IncidentBrokerText says what the broker's log saw of an incident, beside
// the audit's times, as a line under IncidentText.
func IncidentBrokerText(in *analyze.Incident) string {
	return "          broker: " + BrokerView(in) + "."
}

// BrokerView says what the broker's log saw of an incident (which must
// have a Broker), beside the audit's times.
func BrokerView(in *analyze.Incident) string {
	b := in.Broker
	var parts []string
	switch b.Basis {
	case analyze.BasisBrokerDown:
		parts = append(parts, fmt.Sprintf("went down at %s (the audit: %s)", Time(b.LostAt), Time(in.LostAt)))
	case analyze.BasisTimeouts:
		parts = append(parts, fmt.Sprintf("timed out the sessions of %s from %s to %s (keepalive timeouts): the link died at %s, between %s and %s (the audit: %s)",
			plural(b.Timeouts, "device"), Time(b.FirstTimeout), Time(b.LastTimeout), Time(b.LostAt), Time(b.LostAtEarliest), Time(b.LostAtLatest), Time(in.LostAt)))
	default:
		parts = append(parts, "has no line of the loss itself")
	}
	if b.UpAt != analyze.NoTime {
		parts = append(parts, fmt.Sprintf("was running again at %s", Time(b.UpAt)))
	}
	if b.FirstAcceptAt != analyze.NoTime {
		audit := "none"
		if in.FirstConnectAt != analyze.NoTime {
			audit = Time(in.FirstConnectAt)
		}
		parts = append(parts, fmt.Sprintf("first accepted one of them again at %s (the audit: %s)", Time(b.FirstAcceptAt), audit))
	}
	if b.AcceptsPeak > 0 {
		parts = append(parts, fmt.Sprintf("its accepts peaked at %d in 1s at %s", b.AcceptsPeak, Time(b.AcceptsPeakAt)))
	}
	if len(b.ClosedBy) > 0 {
		var cs []string
		for _, r := range slices.Sorted(maps.Keys(b.ClosedBy)) {
			cs = append(cs, fmt.Sprintf("%s %d", r, b.ClosedBy[r]))
		}
		parts = append(parts, "sessions it closed: "+strings.Join(cs, ", "))
	}
	return strings.Join(parts, "; ")
}

// IncidentText says what an incident was in two lines a reviewer can read
// aloud.
func IncidentText(in *analyze.Incident) string {
	ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	how := "recorded disconnects"
	if in.LossInferred {
		how = "no disconnect recorded: inferred from the new attempts"
	}
	s := fmt.Sprintf("incident: at %s %s lost the connection together (%s)", Time(in.LostAt), plural(in.DevicesLost, "device"), how)
	if in.Silent {
		noticed := "noticed one by one"
		if in.Aligned {
			noticed = "their keepalive phases aligned: noticed together, a keepalive or more after they last wrote,"
		}
		s = fmt.Sprintf("incident: at %s (between %s and %s, from the %s) %s lost the connection together: a silent outage, "+
			"%s from %s to %s (%s), times to recover counted from %s",
			Time(in.LostAt), Time(in.LostAtEarliest), Time(in.LostAtLatest), in.Basis, plural(in.DevicesLost, "device"),
			noticed, Time(in.FirstLoss), Time(in.LastLoss), how, Time(in.LostAt))
	}
	if in.FirstConnectAt == analyze.NoTime {
		return s + ";\n          none had connected again when the log ends."
	}
	s += fmt.Sprintf("; the first connected again %v later.\n          %d of %d recovered, time to recover p50 %v, p90 %v, p99 %v, max %v",
		ms(time.Duration(max(0, in.FirstConnectAt-in.LostAt))), in.Recovered, in.DevicesLost, ms(in.TTR50), ms(in.TTR90), ms(in.TTR99), ms(in.TTRMax))
	s += IncidentEstimateText(&in.TTR)
	if st := in.Storm; st != nil {
		s += fmt.Sprintf("; recoveries peaked at %d in 1s at %s (the policy's draws: at most %.1f, from %s)", st.Recoveries, Time(st.At),
			st.Expected, Time(st.ExpectedAt))
	}
	if in.ConnectsPeakAt != analyze.NoTime && (in.Storm == nil || in.Storm.Recoveries != in.ConnectsPeak) {
		s += fmt.Sprintf("; recorded connects (reconnects included) peaked at %d in 1s at %s", in.ConnectsPeak, Time(in.ConnectsPeakAt))
	}
	if in.FlushPeak > 0 {
		s += fmt.Sprintf(", outbox flush at %d messages in 1s at %s", in.FlushPeak, Time(in.FlushPeakAt))
	}
	if in.RedeliveryPeak > 0 {
		s += fmt.Sprintf(", broker redelivery at %d messages in 1s at %s", in.RedeliveryPeak, Time(in.RedeliveryPeakAt))
	}
	if in.Corrected > 0 {
		if in.Corrected == 1 {
			s += "; on corrected times: 1 device's clock was off (below)"
		} else {
			s += fmt.Sprintf("; on corrected times: %s' clocks were off (below)", plural(in.Corrected, "device"))
		}
	}
	if in.RecoveredBeforeNext < in.Recovered {
		s += fmt.Sprintf("; %d of them before the next incident (the others' times to recover span both)", in.RecoveredBeforeNext)
	}
	return s + "."
}

// windowText writes the window of --since/--until as an interval.
func windowText(since, until time.Time) string {
	lo, hi := "(the log's start", "the log's end)"
	if !since.IsZero() {
		lo = "[" + since.UTC().Format(time.RFC3339Nano)
	}
	if !until.IsZero() {
		hi = until.UTC().Format(time.RFC3339Nano) + ")"
	}
	return lo + ", " + hi
}

// severityColor is the SGR colour of each severity.
var severityColor = map[analyze.Severity]string{analyze.Error: "31", analyze.Warning: "33", analyze.Info: "36"}

// severityText is the severity's name, in its colour when color is set.
func severityText(s analyze.Severity, color bool) string {
	if c, ok := severityColor[s]; ok && color {
		return "\x1b[" + c + "m" + s.String() + "\x1b[0m"
	}
	return s.String()
}

// notRunText says which rules of the catalogue did not run at all
// (Summary.NotRun), so that the counts add up to `stormaudit rules`'.
func notRunText(r *analyze.Result) string {
	by := map[string]int{}
	var reasons []string
	for _, n := range r.Summary.NotRun {
		if by[n.Reason] == 0 {
			reasons = append(reasons, n.Reason)
		}
		by[n.Reason]++
	}
	var parts []string
	for _, why := range reasons {
		parts = append(parts, fmt.Sprintf("%d %s", by[why], why))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; not run: " + strings.Join(parts, ", ")
}
