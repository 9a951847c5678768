package dataset

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/hashchain"
)

// colBatch holds a batch of rows column by column, as the Parquet column
// writers take them: for each column its values, dense (nulls left out),
// and for an optional column its definition levels, 1 for a value and 0
// for a null, one a row.
//
// String values are views of the records' strings (and of the vocabulary
// names): a colBatch is valid only while the records it was filled from
// are untouched.
type colBatch struct {
	n     int
	size  int // bytes of the string values, which bounds a page's size
	def   [numColumns][]uint8
	i32   [numColumns][]int32
	i64   [numColumns][]int64
	f64   [numColumns][]float64
	bools [numColumns][]bool
	bytes [numColumns][][]byte
}

// reset empties b for a batch of up to n rows.
func (b *colBatch) reset(n int) {
	b.n, b.size = 0, 0
	for c := range numColumns {
		if !columnTypes[c].required && cap(b.def[c]) < n {
			b.def[c] = make([]uint8, 0, n)
		}
		b.def[c] = b.def[c][:0]
		b.i32[c], b.i64[c], b.f64[c] = b.i32[c][:0], b.i64[c][:0], b.f64[c][:0]
		b.bools[c], b.bytes[c] = b.bools[c][:0], b.bytes[c][:0]
	}
}

// release drops the batch's references to the records' strings.
func (b *colBatch) release() {
	for c := range b.bytes {
		clear(b.bytes[c][:cap(b.bytes[c])])
	}
	b.reset(0)
}

// bytesOf returns the bytes of s without copying them; they must not be
// written to.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// optBytes appends s to column c, null if empty.
func (b *colBatch) optBytes(c int, s string) {
	if s == "" {
		b.def[c] = append(b.def[c], 0)
		return
	}
	b.def[c] = append(b.def[c], 1)
	b.bytes[c] = append(b.bytes[c], bytesOf(s))
	b.size += len(s)
}

// optInt64 appends v to the optional INT64 column c if has, else a null.
func (b *colBatch) optInt64(c int, has bool, v int64) {
	if b.present(c, has) {
		b.i64[c] = append(b.i64[c], v)
	}
}

// present appends the definition level of column c: 1 if has.
func (b *colBatch) present(c int, has bool) bool {
	var d uint8
	if has {
		d = 1
	}
	b.def[c] = append(b.def[c], d)
	return has
}

// add appends rec and, if pos is not nil, its chain position. sources maps
// rec.Source to a name. Errors are *auditfmt.FieldError; after one, b
// holds part of the row and must be reset.
func (b *colBatch) add(rec *auditfmt.Record, pos *hashchain.Pos, sources []string) error {
	if int(rec.Source) >= len(sources) {
		return &auditfmt.FieldError{Field: "source", Expected: fmt.Sprintf("an index below %d (the number of sources)", len(sources)), Found: fmt.Sprint(rec.Source)}
	}
	outcome, err := outcomes.name("outcome", rec.Outcome)
	if err != nil {
		return err
	}
	if err := checkNarrow(rec); err != nil {
		return err
	}
	us, rem := splitTime(rec.RecordedAt)
	b.bytes[colClientID] = append(b.bytes[colClientID], bytesOf(rec.ClientID))
	b.size += len(rec.ClientID)
	b.i64[colRecordedAt] = append(b.i64[colRecordedAt], us)
	if b.present(colRecordedAtNs, rem != 0) {
		b.i32[colRecordedAtNs] = append(b.i32[colRecordedAtNs], rem)
	}
	b.i32[colRecordedOffsetMin] = append(b.i32[colRecordedOffsetMin], int32(rec.OffsetMin))
	b.i64[colAttempt] = append(b.i64[colAttempt], rec.Attempt)
	b.f64[colBackoffDelayS] = append(b.f64[colBackoffDelayS], rec.BackoffDelayS)
	b.bytes[colOutcome] = append(b.bytes[colOutcome], bytesOf(*outcome))
	b.bools[colCleanSession] = append(b.bools[colCleanSession], rec.CleanSession)
	if err := b.addEnums(rec); err != nil {
		return err
	}
	b.addOptionals(rec)
	b.bytes[colSource] = append(b.bytes[colSource], bytesOf(sources[rec.Source]))
	b.i64[colLine] = append(b.i64[colLine], rec.Line)
	b.addChain(pos)
	b.n++
	return nil
}

// checkNarrow checks that the fields stored in 32 bits fit.
func checkNarrow(rec *auditfmt.Record) error {
	if rec.Has&auditfmt.HasSchema != 0 && (rec.Schema < math.MinInt32 || rec.Schema > math.MaxInt32) {
		return &auditfmt.FieldError{Field: "schema", Expected: "a 32-bit integer", Found: fmt.Sprint(rec.Schema)}
	}
	if rec.Has&auditfmt.HasReasonCode != 0 && (rec.ReasonCode < math.MinInt32 || rec.ReasonCode > math.MaxInt32) {
		return &auditfmt.FieldError{Field: "reason_code", Expected: "a 32-bit integer", Found: fmt.Sprint(rec.ReasonCode)}
	}
	return nil
}

// addEnums appends stage and failure_class, by name.
func (b *colBatch) addEnums(rec *auditfmt.Record) error {
	if b.present(colStage, rec.Stage != 0) {
		name, err := stages.name("stage", rec.Stage)
		if err != nil {
			return err
		}
		b.bytes[colStage] = append(b.bytes[colStage], bytesOf(*name))
	}
	if b.present(colFailureClass, rec.FailureClass != 0) {
		name, err := failureClasses.name("failure_class", rec.FailureClass)
		if err != nil {
			return err
		}
		b.bytes[colFailureClass] = append(b.bytes[colFailureClass], bytesOf(*name))
	}
	return nil
}

// addOptionals appends the optional columns other than the enums and the
// chain.
func (b *colBatch) addOptionals(rec *auditfmt.Record) {
	has := rec.Has
	if b.present(colSchema, has&auditfmt.HasSchema != 0) {
		b.i32[colSchema] = append(b.i32[colSchema], int32(rec.Schema))
	}
	b.optBytes(colHostID, rec.HostID)
	b.optBytes(colAttemptID, rec.AttemptID)
	b.optBytes(colRecordID, rec.RecordID)
	b.optInt64(colDeviceSeq, has&auditfmt.HasDeviceSeq != 0, rec.DeviceSeq)
	if b.present(colReasonCode, has&auditfmt.HasReasonCode != 0) {
		b.i32[colReasonCode] = append(b.i32[colReasonCode], int32(rec.ReasonCode))
	}
	if b.present(colCeilingS, has&auditfmt.HasCeiling != 0) {
		b.f64[colCeilingS] = append(b.f64[colCeilingS], rec.CeilingS)
	}
	if b.present(colSessionPresent, has&auditfmt.HasSessionPresent != 0) {
		b.bools[colSessionPresent] = append(b.bools[colSessionPresent], rec.SessionPresent)
	}
	b.optInt64(colOutboxDepth, has&auditfmt.HasOutboxDepth != 0, rec.OutboxDepth)
	b.optInt64(colOutboxFlushed, has&auditfmt.HasOutboxFlushed != 0, rec.OutboxFlushed)
	b.optInt64(colInboundRedelivered, has&auditfmt.HasInboundRedelivered != 0, rec.InboundRedelivered)
	b.optInt64(colInboundDuplicates, has&auditfmt.HasInboundDuplicates != 0, rec.InboundDuplicates)
	b.optInt64(colOutboxDropped, has&auditfmt.HasOutboxDropped != 0, rec.OutboxDropped)
	b.optInt64(colInboundExpired, has&auditfmt.HasInboundExpired != 0, rec.InboundExpired)
	b.optBytes(colExtra, rec.Extra)
	b.optBytes(colEnvelope, rec.Envelope)
}

// addChain appends the chain columns: pos, or nulls.
func (b *colBatch) addChain(pos *hashchain.Pos) {
	b.present(colOrigin, pos != nil)
	b.present(colSeq, pos != nil)
	b.present(colLink, pos != nil)
	if pos == nil {
		return
	}
	b.bytes[colOrigin] = append(b.bytes[colOrigin], bytesOf(pos.Origin))
	b.size += len(pos.Origin)
	b.i64[colSeq] = append(b.i64[colSeq], pos.Seq)
	b.bytes[colLink] = append(b.bytes[colLink], pos.Link[:])
}
