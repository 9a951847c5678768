package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/internal/safe"
)

// Why and who: what an incident's devices met while down, in words, and
// the devices that never came back (docs/rules.md, "What the devices met"
// and "Who never came back").

// DiagnosisText says in plain words what an incident's devices met while
// they were down (its Diagnosis, with the counts it rests on), and what
// the broker's log says of it beside them.
func DiagnosisText(in *analyze.Incident) string {
	const link, addr, sess = auditfmt.StageLink, auditfmt.StageAddress, auditfmt.StageSession
	var s string
	switch in.Diagnosis {
	case analyze.DiagLink:
		s = "the link was down: " + failedText(in, link, "link attempt", auditfmt.AttemptFailed, auditfmt.Refused)
	case analyze.DiagAddress:
		s = "the address stage failed: "
		if in.StageRecords(link, auditfmt.Connected) > 0 {
			s = "the link came up, the address stage failed: "
		}
		s += failedText(in, addr, "address attempt", auditfmt.AttemptFailed, auditfmt.Refused)
	case analyze.DiagRefused:
		s = "the broker answered and refused: " + refusalsText(in)
		if n := in.StageRecords(sess, auditfmt.AttemptFailed); n > 0 {
			s += "; " + failedText(in, sess, "connect", auditfmt.AttemptFailed) + " besides"
		}
		s += "; the network was up, its service was not"
	case analyze.DiagNoAnswer:
		s = "nothing answered: " + failedText(in, sess, "connect", auditfmt.AttemptFailed) + ", with no CONNACK"
		if in.StageRecords(sess, auditfmt.Refused) > 0 {
			s += "; " + refusalsText(in) + " besides"
		}
		if in.StageRecords(link, auditfmt.Connected) > 0 || in.StageRecords(addr, auditfmt.Connected) > 0 {
			s += "; their link and address stages came up: the broker, or the path beyond them, was down"
		}
	default:
		s = "nothing failed: no attempt failed or was refused"
	}
	if b := in.Broker; b != nil {
		s += "; " + brokerWhyText(in, b)
	}
	return s
}

// failedText says how many attempts of stage st ended in one of the
// outcomes os, and from how many devices: "310 connects failed
// (transient) from 200 devices".
func failedText(in *analyze.Incident, st auditfmt.Stage, what string, os ...auditfmt.Outcome) string {
	n, devs := 0, 0
	var classes []string
	for _, o := range os {
		if so := in.StageOutcome(st, o); so != nil {
			n += so.Records
			devs = max(devs, so.Devices)
		}
	}
	for _, m := range in.Met {
		if m.Stage == st && m.Outcome == auditfmt.AttemptFailed && m.Class != 0 {
			c := m.Class.String()
			if len(classes) == 0 || classes[len(classes)-1] != c {
				classes = append(classes, c)
			}
		}
	}
	s := plural(n, what) + " failed"
	if len(classes) > 0 {
		s += " (" + strings.Join(classes, ", ") + ")"
	}
	return s + " from " + plural(devs, "device")
}

// refusalsText says the session's CONNACK refusals by reason code: "1046
// CONNACK 3 (server unavailable) from 200 devices".
func refusalsText(in *analyze.Incident) string {
	byCode := map[int32][2]int{}
	var codes []int32
	for _, m := range in.Met {
		if m.Stage != auditfmt.StageSession || m.Outcome != auditfmt.Refused {
			continue
		}
		if _, ok := byCode[m.Reason]; !ok {
			codes = append(codes, m.Reason)
		}
		c := byCode[m.Reason]
		byCode[m.Reason] = [2]int{c[0] + m.Records, max(c[1], m.Devices)}
	}
	var parts []string
	for _, code := range codes {
		c := byCode[code]
		what := fmt.Sprintf("%d CONNACK %d (%s)", c[0], code, analyze.ReasonText(code))
		if code < 0 {
			what = fmt.Sprintf("%d CONNACK %s with no reason code recorded", c[0], pluralWord(c[0], "refusal"))
		}
		parts = append(parts, what+" from "+plural(c[1], "device"))
	}
	return strings.Join(parts, ", ")
}

// brokerWhyText says what the broker's log says beside the devices: the
// refusals it sent, whether it was up throughout or restarted.
func brokerWhyText(in *analyze.Incident, b *analyze.IncidentBroker) string {
	var parts []string
	if len(b.Refusals) > 0 {
		var rs []string
		for _, r := range b.Refusals {
			rs = append(rs, fmt.Sprintf("%d CONNACK %d (%s)", r.N, r.Code, analyze.ReasonText(r.Code)))
		}
		parts = append(parts, "sent "+strings.Join(rs, ", "))
	}
	switch {
	case b.UpThroughout && in.Diagnosis == analyze.DiagNoAnswer:
		parts = append(parts, "was up throughout: the path to it failed, not the broker")
	case b.UpThroughout:
		parts = append(parts, "was up throughout")
	case b.DownAt != analyze.NoTime && b.UpAt != analyze.NoTime:
		parts = append(parts, fmt.Sprintf("went down at %s and was running again at %s", Time(b.DownAt), Time(b.UpAt)))
	case b.UpAt != analyze.NoTime:
		parts = append(parts, "was running again at "+Time(b.UpAt))
	}
	if len(parts) == 0 {
		return "the broker's log says nothing of why"
	}
	return "the broker's log: it " + strings.Join(parts, "; it ")
}

// MaxUnrecoveredText is how many unrecovered devices the text names.
const MaxUnrecoveredText = 5

// UnrecoveredText names the devices of an incident that never came back,
// the first MaxUnrecoveredText with their last states, and says how many
// the log simply ended too soon for; "" when all came back.
func UnrecoveredText(in *analyze.Incident) string {
	us := in.Unrecovered
	if len(us) == 0 {
		return ""
	}
	short := 0
	for _, u := range us {
		if u.CutShort {
			short++
		}
	}
	s := fmt.Sprintf("%s never came back", plural(len(us), "device"))
	if short > 0 {
		s += fmt.Sprintf(" (the log ended too soon for %d of them)", short)
	}
	s += ":"
	for _, u := range us[:min(len(us), MaxUnrecoveredText)] {
		s += "\n            " + safe.Text(u.Device) + ": " + LastStateText(&u)
	}
	if more := len(us) - MaxUnrecoveredText; more > 0 {
		s += fmt.Sprintf("\n            and %d more (JSON, the report and browse list them all)", more)
	}
	return s
}

// LastStateText says an unrecovered device's last state: "waiting a
// backoff of 600s due at T (after the log ended)".
func LastStateText(u *analyze.Unrecovered) string {
	stage := ""
	if u.Stage != auditfmt.StageSession && u.Stage != 0 {
		stage = " (" + u.Stage.String() + " stage)"
	}
	var s string
	switch u.State {
	case analyze.StateWaiting:
		s = fmt.Sprintf("waiting a backoff of %v due at %s", secondsDur(u.Delay), Time(u.Due))
		if u.CutShort {
			s += " (after the log ended)"
		}
	case analyze.StateInFlight:
		s = "its attempt opened at " + Time(u.Due) + " was in flight when the log ended"
	case analyze.StateRefused:
		s = "still refused"
		if u.Reason >= 0 {
			s += fmt.Sprintf(" with CONNACK %d (%s)", u.Reason, analyze.ReasonText(u.Reason))
		}
		s += " at " + Time(u.At) + ", nothing after"
	case analyze.StateFailed:
		s = "its last attempt failed"
		if u.Class != 0 {
			s += " (" + u.Class.String() + ")"
		}
		s += " at " + Time(u.At) + ", nothing after"
	case analyze.StateGaveUp:
		s = "gave up at " + Time(u.At)
	case analyze.StateStopped:
		s = "stopped at " + Time(u.At)
	default:
		s = "silent since " + Time(u.At)
		if u.Due != analyze.NoTime {
			s += fmt.Sprintf(" (its socket-open due at %s recorded no outcome)", Time(u.Due))
		}
	}
	return s + stage + fmt.Sprintf("; %s since its loss", plural(u.Attempts, "attempt"))
}

// secondsDur writes s seconds as a duration to the millisecond.
func secondsDur(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond)
}
