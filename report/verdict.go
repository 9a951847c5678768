package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/stormaudit/stormaudit/analyze"
)

// stormRules are the rules that judge whether the fleet stormed the broker
// on its return: what each says when it flagged the return, and when it
// ran and did not.
var stormRules = []struct{ id, beyond, within string }{
	{"recovery-storm", "beyond what the policy's jitter allows (recovery-storm)", "within what the policy's jitter allows (recovery-storm)"},
	// an inferred policy's: what the log's own draws allow
	{"recovery-storm/inferred", "beyond what the inferred policy's jitter allows (recovery-storm)", "within what the inferred policy's jitter allows (recovery-storm)"},
	{"connect-budget", "over the declared connect budget (connect-budget)", "within the declared connect budget (connect-budget)"},
	{"resync", "with retry timers in lockstep (resync)", "with retry timers not in lockstep (resync)"},
}

// Verdict answers a reviewer's first questions in words, one line per
// incident: when the broker was lost and for how long, how many devices,
// how long recovery took, and whether the fleet stormed the broker on its
// return, judged against what: the policy's expected spread, a declared
// connect budget, and the broker's own log where one was given.
func Verdict(r *analyze.Result) []string {
	st := r.Summary.Fleet
	if st == nil || len(st.Incidents) == 0 {
		where := "in this log"
		if s := r.Summary; !s.Since.IsZero() || !s.Until.IsZero() {
			where = "in the window " + windowText(s.Since, s.Until) + " (an outage that began before it is not in it)"
		}
		return []string{"no outage: no devices lost the connection together " + where}
	}
	var out []string
	for i := range st.Incidents {
		in := &st.Incidents[i]
		next := int64(analyze.NoTime)
		if i+1 < len(st.Incidents) {
			next = st.Incidents[i+1].LostAt
		}
		s := ""
		if len(st.Incidents) > 1 {
			s = fmt.Sprintf("incident %d: ", i+1)
		}
		out = append(out, s+verdictLine(r, in, next))
	}
	return out
}

// verdictLine is the verdict on one incident, before the next one's loss.
func verdictLine(r *analyze.Result, in *analyze.Incident, next int64) string {
	ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	s := fmt.Sprintf("%s %s at %s", plural(in.DevicesLost, "device"), lostWhat(in), Time(in.LostAt))
	if in.Silent {
		s = fmt.Sprintf("%s lost the link silently, at about %s (estimated between %s and %s", plural(in.DevicesLost, "device"),
			Time(in.LostAt), Time(in.LostAtEarliest), Time(in.LostAtLatest))
		if b := in.Broker; b != nil && b.Basis == analyze.BasisTimeouts {
			s += fmt.Sprintf("; the broker's keepalive timeouts put it at %s", Time(b.LostAt))
		}
		s += ")"
	}
	why := "; why: " + DiagnosisText(in)
	if in.FirstConnectAt == analyze.NoTime {
		return s + ", and none had connected again when the log ends" + why
	}
	s += fmt.Sprintf(" for %v; ", ms(time.Duration(max(0, in.FirstConnectAt-in.LostAt))))
	if in.RecoveredBeforeNext < in.Recovered {
		s += fmt.Sprintf("%d of %d recovered before the next incident", in.RecoveredBeforeNext, in.DevicesLost)
	} else {
		s += fmt.Sprintf("%d of %d recovered", in.Recovered, in.DevicesLost)
	}
	s += fmt.Sprintf(", time to recover (from each device's own loss) p50 %v, p90 %v", ms(in.TTR50), ms(in.TTR90)) + IncidentEstimateText(&in.TTR)
	if in.RecoveredBeforeNext < in.Recovered {
		s += " (of all, some across the next incident)"
	}
	if n := len(in.Unrecovered); n > 0 {
		s += fmt.Sprintf("; %d never came back", n)
	}
	if p := PresenceShort(in); p != "" {
		s += "; " + p
	}
	return s + "; " + stormVerdict(r, in, next) + why
}

// lostWhat says what an incident's devices lost, by its diagnosis: the
// broker (nothing answered), its service (it answered and refused), the
// link or the network (the address stage).
func lostWhat(in *analyze.Incident) string {
	switch in.Diagnosis {
	case analyze.DiagRefused:
		return "lost the broker's service"
	case analyze.DiagLink:
		return "lost the link"
	case analyze.DiagAddress:
		return "lost the network (the address stage)"
	}
	return "lost the broker"
}

// stormVerdict says whether the fleet stormed the broker on its return
// from the incident in, and against what that was judged: every rule that
// ran, those that flagged it first.
func stormVerdict(r *analyze.Result, in *analyze.Incident, next int64) string {
	peak := returnPeak(in)
	if b := in.Broker; b != nil && b.AcceptsPeak > 0 {
		if strings.HasSuffix(peak, ")") {
			peak = peak[:len(peak)-1] + "; " + acceptsText(b) + ")"
		} else {
			peak += " (" + acceptsText(b) + ")"
		}
	}
	var flagged, within []string
	inferred := r.Summary.Policy.Source == "inferred"
	for _, sr := range stormRules {
		id, variant, _ := strings.Cut(sr.id, "/")
		if !ran(r, id) || (variant == "inferred") != (id == "recovery-storm" && inferred) {
			continue
		}
		if slices.ContainsFunc(r.Findings, func(f analyze.Finding) bool {
			return f.Rule == id && f.End >= in.LostAt && (next == analyze.NoTime || f.Start < next)
		}) {
			flagged = append(flagged, sr.beyond)
		} else {
			within = append(within, sr.within+withinWhy(id, in.Storm))
		}
	}
	switch {
	case len(flagged) > 0:
		v := "a storm on its return: " + peak + ", " + strings.Join(flagged, ", ")
		if len(within) > 0 {
			v += "; " + strings.Join(within, ", ")
		}
		return v
	case len(within) > 0:
		return "no storm on its return: " + peak + ", " + strings.Join(within, ", ")
	}
	return "storm on its return not judged (" + peak + "): declare the policy's delay and connect_budget_per_s to judge it"
}

// withinWhy says why recovery-storm did not call a return weighed as st a
// storm when its recoveries outnumbered what the policy expects: a
// reader sees both numbers beside "within".
func withinWhy(id string, st *analyze.StormWeighed) string {
	if id != "recovery-storm" || st == nil || float64(st.Recoveries) <= st.Expected {
		return ""
	}
	switch {
	case st.Recoveries < analyze.StormMin:
		return fmt.Sprintf(": %d is fewer than the %d recoveries in 1s a storm needs", st.Recoveries, analyze.StormMin)
	case float64(st.Recoveries) <= analyze.StormFactor*st.Expected:
		return fmt.Sprintf(": %d is not over %g× the %.1f expected", st.Recoveries, analyze.StormFactor, st.Expected)
	}
	return fmt.Sprintf(": %d in some second of the recovery has a chance of %.2g, not below %g", st.Recoveries, st.Chance, analyze.StormTail)
}

// acceptsText says the broker's accepts peak, and why it may differ from
// the recorded one: it counts any client, and stamps of a whole second
// split a burst across a second's edge.
func acceptsText(b *analyze.IncidentBroker) string {
	s := fmt.Sprintf("the broker's log: %d accepts of any client in 1s", b.AcceptsPeak)
	if b.AcceptsRes >= time.Second {
		s = fmt.Sprintf("the broker's log: %d accepts of any client in one of its whole stamped seconds, which split a burst "+
			"across a second's edge", b.AcceptsPeak)
	}
	return s
}

// returnPeak says how the fleet came back: the most recoveries in one
// second beside what the policy's draws expect (when recovery-storm
// weighed them), and every connected record's peak where it differs
// (devices that connected again: churn, a second loop).
func returnPeak(in *analyze.Incident) string {
	if in.ConnectsPeakAt == analyze.NoTime {
		return "no recorded connect after it"
	}
	after := func(at int64) string {
		if in.FirstConnectAt != analyze.NoTime {
			if d := time.Duration(at - in.FirstConnectAt).Round(time.Second); d >= 2*time.Second {
				return fmt.Sprintf(", %v after the first came back", d)
			}
		}
		return ""
	}
	st := in.Storm
	if st == nil {
		return fmt.Sprintf("recorded connects peaked at %d in 1s", in.ConnectsPeak) + after(in.ConnectsPeakAt)
	}
	pol := "the declared policy's draws"
	if st.Inferred {
		pol = "the inferred policy's draws"
	}
	s := fmt.Sprintf("recoveries peaked at %d in 1s%s (%s: at most %.1f", st.Recoveries, after(st.At), pol, st.Expected)
	if in.ConnectsPeak != st.Recoveries {
		s += fmt.Sprintf("; every recorded connect, reconnects included: %d", in.ConnectsPeak)
	}
	return s + ")"
}

// ran reports whether the rule id ran: it is in the result's catalogue
// and was not skipped.
func ran(r *analyze.Result, id string) bool {
	return slices.ContainsFunc(r.Rules, func(ri analyze.RuleInfo) bool { return ri.ID == id }) &&
		!slices.ContainsFunc(r.Summary.Skipped, func(s analyze.Skip) bool { return s.Rule == id })
}
