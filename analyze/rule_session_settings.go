package analyze

import (
	"fmt"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/policy"
)

const sessionSettingsID = "session-settings"

// sessionSettings flags devices using clean sessions where the fleet
// declares persistent ones.
type sessionSettings struct{}

func (r *sessionSettings) Info() RuleInfo {
	return RuleInfo{ID: sessionSettingsID, Severity: Warning, Needs: [][]string{{"clean_session"}}, Title: "clean sessions where the fleet declares persistent ones",
		Help: "A device writes clean_session true while the policy declares clean_session = false: " +
			"the broker discards its session on every reconnect, so the messages published to it during the outage are lost."}
}

func (r *sessionSettings) Device(c *Context, d *Device) {
	var t tally
	conns := 0
	for i := range d.Events {
		if e := &d.Events[i]; e.Clean && e.Outcome == auditfmt.Connected {
			t.add(e.At, e.Ref) // the connects that really discarded the session, first
			conns++
		}
	}
	for i := range d.Events {
		if e := &d.Events[i]; e.Clean && e.Outcome != auditfmt.Connected {
			t.add(e.At, e.Ref)
		}
	}
	if t.n == 0 {
		return
	}
	clean, ok := c.Param(sessionSettingsID, "clean_session", func(p *policy.Policy) float64 {
		if p.CleanSession {
			return 1
		}
		return 0
	})
	if !ok || clean == 1 {
		return
	}
	f := t.finding(sessionSettingsID, Warning, d)
	f.Kind = "session-settings/clean-session"
	f.Message = fmt.Sprintf("uses clean sessions (clean_session true on %d of %d records); the fleet declares persistent sessions", t.n, len(d.Events))
	mixed := ""
	if d.Mixed {
		mixed = " It switched between clean and persistent sessions among its records."
	}
	f.Explanation = fmt.Sprintf("%s wrote clean_session true on %d of its %d records (%s among them) from %s to %s; "+
		"the %s says clean_session = false (persistent sessions), so each such connect discarded the session the broker kept "+
		"and the messages queued for it while it was offline.%s",
		d.ID, t.n, len(d.Events), countNoun(conns, "connected record", "connected records"), fmtTime(t.start), fmtTime(t.end),
		checkedAgainst(c), mixed)
	c.Report(f)
}

func (r *sessionSettings) Finish(*Context) {}
