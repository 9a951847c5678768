package hashchain

import (
	"strconv"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// appendAuditJSON appends the "audit" member's value of a collector-log
// line: the record r (without Envelope, Source and Line) as one JSON
// object. It is the format of docs/hashchain.md, "The collector log",
// which writes the record as auditfmt.Record.AppendJSON does (a test holds
// the two equal), with the unknown members as r.Extra holds them. The log
// owns its copy so that its format stays fixed, and to write recorded_at
// without package time.
//
// r must be valid (auditfmt.Record.Validate): the enums are then in their
// vocabularies.
func appendAuditJSON(dst []byte, r *auditfmt.Record) []byte {
	dst = append(dst, `{"client_id":`...)
	dst = auditfmt.AppendJSONString(dst, r.ClientID)
	dst = append(dst, `,"attempt":`...)
	dst = strconv.AppendInt(dst, r.Attempt, 10)
	dst = append(dst, `,"backoff_delay_s":`...)
	dst = auditfmt.AppendFloat(dst, r.BackoffDelayS)
	dst = append(dst, `,"outcome":"`...)
	dst = append(dst, r.Outcome.String()...)
	dst = append(dst, `","clean_session":`...)
	dst = strconv.AppendBool(dst, r.CleanSession)
	dst = append(dst, `,"recorded_at":"`...)
	dst = auditfmt.AppendTimestamp(dst, r.RecordedAt, r.OffsetMin)
	dst = append(dst, '"')
	if r.Has&auditfmt.HasSchema != 0 {
		dst = append(dst, `,"schema":`...)
		dst = strconv.AppendInt(dst, r.Schema, 10)
	}
	if r.HostID != "" {
		dst = append(dst, `,"host_id":`...)
		dst = auditfmt.AppendJSONString(dst, r.HostID)
	}
	if r.Stage != 0 {
		dst = append(dst, `,"stage":"`...)
		dst = append(dst, r.Stage.String()...)
		dst = append(dst, '"')
	}
	if r.AttemptID != "" {
		dst = append(dst, `,"attempt_id":`...)
		dst = auditfmt.AppendJSONString(dst, r.AttemptID)
	}
	if r.RecordID != "" {
		dst = append(dst, `,"record_id":`...)
		dst = auditfmt.AppendJSONString(dst, r.RecordID)
	}
	if r.Has&auditfmt.HasDeviceSeq != 0 {
		dst = append(dst, `,"device_seq":`...)
		dst = strconv.AppendInt(dst, r.DeviceSeq, 10)
	}
	if r.FailureClass != 0 {
		dst = append(dst, `,"failure_class":"`...)
		dst = append(dst, r.FailureClass.String()...)
		dst = append(dst, '"')
	}
	if r.Has&auditfmt.HasReasonCode != 0 {
		dst = append(dst, `,"reason_code":`...)
		dst = strconv.AppendInt(dst, r.ReasonCode, 10)
	}
	if r.Has&auditfmt.HasCeiling != 0 {
		dst = append(dst, `,"ceiling_s":`...)
		dst = auditfmt.AppendFloat(dst, r.CeilingS)
	}
	if r.Has&auditfmt.HasSessionPresent != 0 {
		dst = append(dst, `,"session_present":`...)
		dst = strconv.AppendBool(dst, r.SessionPresent)
	}
	if len(r.Extra) > 2 { // "{...}" with at least one member
		dst = append(dst, ',')
		dst = append(dst, r.Extra[1:len(r.Extra)-1]...)
	}
	return append(dst, '}')
}
