package auditfmt

import (
	"cmp"
	"strings"
)

// Compare orders records the way a dataset stores them: by client_id, then
// recorded_at, then by content, so that equal records are adjacent and the
// order does not depend on the order of the inputs. Records with the same
// identity (see SameRecord) compare equal; use Source and Line to break
// such ties.
func Compare(a, b *Record) int {
	if c := strings.Compare(a.ClientID, b.ClientID); c != 0 {
		return c
	}
	if c := cmp.Compare(a.RecordedAt, b.RecordedAt); c != 0 {
		return c
	}
	return compareIdentity(a, b)
}

// SameRecord reports whether a and b are the same audit record delivered
// twice. A record_id, when both have one, is the identity (scoped to the
// client); otherwise the identity is the full content of the record: every
// field including unknown members, excluding Envelope, Source and Line.
func SameRecord(a, b *Record) bool {
	return a.ClientID == b.ClientID && a.RecordedAt == b.RecordedAt && compareIdentity(a, b) == 0
}

func compareIdentity(a, b *Record) int {
	// Records with a record_id sort before records without, so the two
	// identity rules never interleave.
	if a.RecordID != "" || b.RecordID != "" {
		switch {
		case a.RecordID == "":
			return 1
		case b.RecordID == "":
			return -1
		}
		return strings.Compare(a.RecordID, b.RecordID)
	}
	return compareContent(a, b)
}

func compareContent(a, b *Record) int {
	if c := cmp.Compare(a.Attempt, b.Attempt); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Outcome, b.Outcome); c != 0 {
		return c
	}
	if c := cmp.Compare(a.BackoffDelayS, b.BackoffDelayS); c != 0 {
		return c
	}
	if c := cmpBool(a.CleanSession, b.CleanSession); c != 0 {
		return c
	}
	if c := cmp.Compare(a.OffsetMin, b.OffsetMin); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Has, b.Has); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Stage, b.Stage); c != 0 {
		return c
	}
	if c := cmp.Compare(a.FailureClass, b.FailureClass); c != 0 {
		return c
	}
	if c := cmpBool(a.SessionPresent, b.SessionPresent); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Schema, b.Schema); c != 0 {
		return c
	}
	if c := cmp.Compare(a.DeviceSeq, b.DeviceSeq); c != 0 {
		return c
	}
	if c := cmp.Compare(a.ReasonCode, b.ReasonCode); c != 0 {
		return c
	}
	if c := cmp.Compare(a.CeilingS, b.CeilingS); c != 0 {
		return c
	}
	if c := cmp.Compare(a.OutboxDepth, b.OutboxDepth); c != 0 {
		return c
	}
	if c := cmp.Compare(a.OutboxFlushed, b.OutboxFlushed); c != 0 {
		return c
	}
	if c := cmp.Compare(a.InboundRedelivered, b.InboundRedelivered); c != 0 {
		return c
	}
	if c := cmp.Compare(a.InboundDuplicates, b.InboundDuplicates); c != 0 {
		return c
	}
	if c := cmp.Compare(a.OutboxDropped, b.OutboxDropped); c != 0 {
		return c
	}
	if c := cmp.Compare(a.InboundExpired, b.InboundExpired); c != 0 {
		return c
	}
	if c := strings.Compare(a.HostID, b.HostID); c != 0 {
		return c
	}
	if c := strings.Compare(a.AttemptID, b.AttemptID); c != 0 {
		return c
	}
	return strings.Compare(a.Extra, b.Extra)
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
