package tui

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/policy"
)

// recordView is the timeline's cursor record in full, shown over the
// timeline: every field, where it was read and where it sits in its
// chain, then the findings that rest on it. It is the timeline's record
// and cursor: a search moves to the next record that matches and shows
// that one.
type recordView struct {
	tl *timelineView
}

func (v *recordView) title() string { return "Record" }

// resize does nothing: the record takes the lines it is given.
func (v *recordView) resize(int) {}

// ShortHelp is the timeline's: the record is part of it.
func (v *recordView) ShortHelp() []key.Binding { return v.tl.ShortHelp() }

func (v *recordView) FullHelp() [][]key.Binding { return v.tl.FullHelp() }

// update closes the record on esc or enter.
func (v *recordView) update(msg tea.KeyMsg) action {
	k := v.tl.sh.keys
	if key.Matches(msg, k.Back) || key.Matches(msg, k.Open) {
		a := none
		a.pop = true
		return a
	}
	return none
}

func (v *recordView) search(q string, dir int, self bool) bool { return v.tl.search(q, dir, self) }

func (v *recordView) view(h int) string { return lines(v.details(), v.tl.sh.w, h) }

func (v *recordView) status() string {
	return fmt.Sprintf("%s · record %d of %d · esc closes", dev(v.tl.id), v.tl.list.cur+1, v.tl.list.n)
}

// details lists every field of the record, where it was read and where
// it sits in its chain, then the findings that rest on it.
func (v *recordView) details() []string {
	tl := v.tl
	i := tl.list.cur
	row := &tl.recs.Rows[i]
	r := &row.Record
	field := func(name, value string) string { return fmt.Sprintf("  %-19s %s", name, value) }
	opt := func(has auditfmt.Presence, s string) string {
		if r.Has&has == 0 {
			return "(absent)"
		}
		return s
	}
	str := func(s string) string {
		if s == "" {
			return "(absent)"
		}
		return dev(s)
	}
	out := []string{
		tl.sh.st.head.Render(fmt.Sprintf("record %d of %s", i+1, dev(r.ClientID))),
		field("client_id", dev(r.ClientID)),
		field("recorded_at", string(auditfmt.AppendTimestamp(nil, r.RecordedAt, r.OffsetMin))),
		field("backoff_delay_s", string(auditfmt.AppendFloat(nil, r.BackoffDelayS))),
		field("attempt", strconv.FormatInt(r.Attempt, 10)),
		field("outcome", r.Outcome.String()),
		field("clean_session", strconv.FormatBool(r.CleanSession)),
		field("stage", str(r.Stage.String())),
		field("failure_class", str(r.FailureClass.String())),
		field("session_present", opt(auditfmt.HasSessionPresent, strconv.FormatBool(r.SessionPresent))),
		field("schema", opt(auditfmt.HasSchema, strconv.FormatInt(r.Schema, 10))),
		field("device_seq", opt(auditfmt.HasDeviceSeq, strconv.FormatInt(r.DeviceSeq, 10))),
		field("reason_code", opt(auditfmt.HasReasonCode, fmt.Sprintf("%d (0x%02x)", r.ReasonCode, r.ReasonCode))),
		field("ceiling_s", opt(auditfmt.HasCeiling, string(auditfmt.AppendFloat(nil, r.CeilingS)))),
		field("outbox_depth", opt(auditfmt.HasOutboxDepth, strconv.FormatInt(r.OutboxDepth, 10))),
		field("outbox_flushed", opt(auditfmt.HasOutboxFlushed, strconv.FormatInt(r.OutboxFlushed, 10))),
		field("inbound_redelivered", opt(auditfmt.HasInboundRedelivered, strconv.FormatInt(r.InboundRedelivered, 10))),
		field("inbound_duplicates", opt(auditfmt.HasInboundDuplicates, strconv.FormatInt(r.InboundDuplicates, 10))),
		field("outbox_dropped", opt(auditfmt.HasOutboxDropped, strconv.FormatInt(r.OutboxDropped, 10))),
		field("inbound_expired", opt(auditfmt.HasInboundExpired, strconv.FormatInt(r.InboundExpired, 10))),
		field("host_id", str(r.HostID)),
		field("attempt_id", str(r.AttemptID)),
		field("record_id", str(r.RecordID)),
		field("extra", str(r.Extra)),
		field("envelope", str(r.Envelope)),
		"",
		field("input", fmt.Sprintf("%s line %d", dev(tl.recs.Sources[r.Source]), r.Line)),
		field("dataset", fmt.Sprintf("%s row %d", tl.recs.Files[row.File], row.Row)),
	}
	if row.Chain.Origin == "" {
		out = append(out, field("chain", "(not chained)"))
	} else {
		out = append(out, field("chain", fmt.Sprintf("%s seq %d", dev(row.Chain.Origin), row.Chain.Seq)),
			field("link", hex.EncodeToString(row.Chain.Link[:])))
	}
	for _, f := range tl.finds[i] {
		fd := &tl.sh.ov.Result.Findings[f]
		out = append(out, "")
		out = append(out, wrap(fmt.Sprintf("%s %s: %s", fd.Severity, fd.Rule, dev(fd.Message)), tl.sh.w, 2)...)
		out = append(out, wrap(dev(fd.Explained()), tl.sh.w, 4)...)
	}
	return out
}

// policyCeiling gives the ceiling of an attempt's delay under the policy
// the log was checked against, when there is one.
type policyCeiling struct{ p *policy.Policy }

func newPolicyCeiling(p *policy.Policy) policyCeiling { return policyCeiling{p} }

// at returns the ceiling of attempt's delay; ok is false without a policy
// that bounds it.
func (pc policyCeiling) at(attempt int64) (float64, bool) {
	if pc.p == nil || pc.p.Delay == policy.None {
		return 0, false
	}
	c := pc.p.Ceiling(attempt)
	return c, !math.IsNaN(c)
}
