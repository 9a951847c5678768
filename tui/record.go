package tui

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/policy"
)

// details lists every field of the cursor's record, where it was read
// and where it sits in its chain, then the findings that rest on it.
func (v *timelineView) details() []string {
	i := v.list.cur
	row := &v.recs.Rows[i]
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
		v.sh.st.head.Render(fmt.Sprintf("record %d of %s", i+1, dev(r.ClientID))),
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
		field("host_id", str(r.HostID)),
		field("attempt_id", str(r.AttemptID)),
		field("record_id", str(r.RecordID)),
		field("extra", str(r.Extra)),
		field("envelope", str(r.Envelope)),
		"",
		field("input", fmt.Sprintf("%s line %d", dev(v.recs.Sources[r.Source]), r.Line)),
		field("dataset", fmt.Sprintf("%s row %d", v.recs.Files[row.File], row.Row)),
	}
	if row.Chain.Origin == "" {
		out = append(out, field("chain", "(not chained)"))
	} else {
		out = append(out, field("chain", fmt.Sprintf("%s seq %d", dev(row.Chain.Origin), row.Chain.Seq)),
			field("link", hex.EncodeToString(row.Chain.Link[:])))
	}
	for _, f := range v.finds[i] {
		fd := &v.sh.ov.Result.Findings[f]
		out = append(out, "")
		out = append(out, wrap(fmt.Sprintf("%s %s: %s", fd.Severity, fd.Rule, dev(fd.Message)), v.sh.w, 2)...)
		out = append(out, wrap(dev(fd.Explanation), v.sh.w, 4)...)
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
