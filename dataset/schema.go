package dataset

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/stormaudit/stormaudit/hashchain"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// row is the Parquet row of a dataset file: one field per column, in
// column order. The schema parquet-go derives from it is the files'
// schema (fileSchema, and the footer FileWriter writes); FileWriter no
// longer writes rows of it but column chunks (chunkFile), from records.
//
// Every optional column is a pointer, nil for null, so that null means
// exactly "absent": a reason_code of 0 or a session_present of false is a
// value.
//
// extra and envelope are plain STRING columns holding JSON text rather
// than JSON logical type columns because parquet-go v0.32.0, which wrote
// the files before, panics on an optional pointer field tagged json; the
// files keep that schema.
type row struct {
	ClientID           string    `parquet:"client_id,dict"`
	RecordedAt         int64     `parquet:"recorded_at,timestamp(microsecond:utc)"`
	RecordedAtNs       *int32    `parquet:"recorded_at_ns,optional"`
	RecordedOffsetMin  int32     `parquet:"recorded_offset_min"`
	Attempt            int64     `parquet:"attempt"`
	BackoffDelayS      float64   `parquet:"backoff_delay_s"`
	Outcome            string    `parquet:"outcome,dict"`
	CleanSession       bool      `parquet:"clean_session"`
	Schema             *int32    `parquet:"schema,optional"`
	HostID             *string   `parquet:"host_id,optional,dict"`
	Stage              *string   `parquet:"stage,optional,dict"`
	AttemptID          *string   `parquet:"attempt_id,optional"`
	RecordID           *string   `parquet:"record_id,optional"`
	DeviceSeq          *int64    `parquet:"device_seq,optional"`
	FailureClass       *string   `parquet:"failure_class,optional,dict"`
	ReasonCode         *int32    `parquet:"reason_code,optional"`
	CeilingS           *float64  `parquet:"ceiling_s,optional"`
	SessionPresent     *bool     `parquet:"session_present,optional"`
	OutboxDepth        *int64    `parquet:"outbox_depth,optional"`
	OutboxFlushed      *int64    `parquet:"outbox_flushed,optional"`
	InboundRedelivered *int64    `parquet:"inbound_redelivered,optional"`
	InboundDuplicates  *int64    `parquet:"inbound_duplicates,optional"`
	OutboxDropped      *int64    `parquet:"outbox_dropped,optional"`
	InboundExpired     *int64    `parquet:"inbound_expired,optional"`
	Extra              *string   `parquet:"extra,optional"`
	Envelope           *string   `parquet:"envelope,optional"`
	Source             string    `parquet:"source,dict"`
	Line               int64     `parquet:"line"`
	Origin             *string   `parquet:"origin,optional"`
	Seq                *int64    `parquet:"seq,optional"`
	Link               *[32]byte `parquet:"link,optional"`
}

// The columns of a dataset file, in order. The reader finds them by name.
const (
	colClientID = iota
	colRecordedAt
	colRecordedAtNs // nanoseconds past recorded_at's microsecond, null for 0
	colRecordedOffsetMin
	colAttempt
	colBackoffDelayS
	colOutcome
	colCleanSession
	colSchema
	colHostID
	colStage
	colAttemptID
	colRecordID
	colDeviceSeq
	colFailureClass
	colReasonCode
	colCeilingS
	colSessionPresent
	colOutboxDepth // the outbox and inbound columns may be missing from a file (mayLack)
	colOutboxFlushed
	colInboundRedelivered
	colInboundDuplicates
	colOutboxDropped
	colInboundExpired
	colExtra
	colEnvelope
	colSource
	colLine
	colOrigin // the chain columns (hashchain.Pos), null in rows written without
	colSeq
	colLink
	numColumns
)

// isChainColumn reports whether c is one of the chain columns, which a
// file of another program need not have.
func isChainColumn(c int) bool { return c >= colOrigin }

// mayLack reports whether a file may lack column c, every row then reading
// as null in it: recorded_at_ns (a file of whole microseconds, or of
// another writer), and the columns of the fields added to the schema
// after files had been written without them (outbox_depth,
// outbox_flushed, inbound_redelivered, inbound_duplicates, outbox_dropped,
// inbound_expired). The chain
// columns may be missing only all together.
func mayLack(c int) bool {
	switch c {
	case colRecordedAtNs, colOutboxDepth, colOutboxFlushed, colInboundRedelivered, colInboundDuplicates, colOutboxDropped, colInboundExpired:
		return true
	}
	return false
}

// splitTime splits Unix nanoseconds into the microseconds recorded_at
// stores and the nanoseconds past them, in [0, 1000), recorded_at_ns.
func splitTime(ns int64) (us int64, rem int32) {
	us = ns / 1000
	if ns%1000 < 0 {
		us--
	}
	return us, int32(ns - us*1000)
}

// fileSchema is the Parquet schema of a dataset file.
var fileSchema = parquet.SchemaOf(row{})

// columnNames lists the column names in column order.
var columnNames = func() []string {
	fields := fileSchema.Fields()
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name()
	}
	if len(names) != numColumns {
		panic("dataset: row type and column constants disagree")
	}
	return names
}()

// Columns returns the names of the columns of a dataset file, in order.
func Columns() []string { return append([]string(nil), columnNames...) }

// SortedBy lists the columns a dataset file is sorted by.
var SortedBy = []string{"client_id", "recorded_at"}

// A columnType says what a column of ours is, and checks a file's column
// against it.
type columnType struct {
	kind     parquet.Kind
	logical  string // "", "string" or "timestamp"
	length   int    // of a FIXED_LEN_BYTE_ARRAY
	required bool   // every record has a value
}

func (t columnType) String() string {
	s := kindName(t.kind)
	if t.kind == parquet.FixedLenByteArray {
		s += fmt.Sprintf("(%d)", t.length)
	}
	switch t.logical {
	case "string":
		s += " (STRING)"
	case "timestamp":
		s += " (TIMESTAMP(isAdjustedToUTC=true,unit=MICROS))"
	}
	return s
}

// columnTypes gives the type of every column, in column order.
var columnTypes = func() []columnType {
	types := make([]columnType, numColumns)
	for i, f := range fileSchema.Fields() {
		t := columnType{kind: f.Type().Kind(), length: f.Type().Length(), required: f.Required()}
		if lt := f.Type().LogicalType(); lt != nil {
			switch lt.Value.(type) {
			case *format.StringType:
				t.logical = "string"
			case *format.TimestampType:
				t.logical = "timestamp"
			}
		}
		types[i] = t
	}
	return types
}()

// check reports what is wrong with node as a column of type t, or "".
// Columns that are required here may be optional in the file (other writers
// mark every column optional); a null in them is a row error. A string
// column may also be JSON, ENUM or unannotated BYTE_ARRAY.
func (t columnType) check(node parquet.Node) string {
	if !node.Leaf() {
		return "a group"
	}
	if node.Repeated() {
		return "a repeated column"
	}
	typ := node.Type()
	found := describeType(typ)
	if typ.Kind() != t.kind || t.kind == parquet.FixedLenByteArray && typ.Length() != t.length {
		return found
	}
	lt := typ.LogicalType()
	var v format.LogicalTypeValue
	if lt != nil {
		v = lt.Value
	}
	switch t.logical {
	case "string":
		switch v.(type) {
		case nil, *format.StringType, *format.JsonType, *format.EnumType:
			return ""
		}
	case "timestamp":
		if timeScale(typ) != 0 {
			return ""
		}
	default:
		switch v := v.(type) {
		case nil:
			return ""
		case *format.IntType:
			if v.IsSigned {
				return ""
			}
		}
	}
	return found
}

// timeScale returns the nanoseconds in a unit of the UTC timestamp type
// typ: 1000 for MICROS, which stormaudit writes, 1 for NANOS, which it
// wrote before and other writers may; 0 for any other type.
func timeScale(typ parquet.Type) int64 {
	lt := typ.LogicalType()
	if lt == nil {
		return 0
	}
	ts, ok := lt.Value.(*format.TimestampType)
	if !ok || !ts.IsAdjustedToUTC {
		return 0
	}
	switch ts.Unit.Value.(type) {
	case *format.MicroSeconds:
		return 1000
	case *format.NanoSeconds:
		return 1
	}
	return 0
}

func describeType(typ parquet.Type) string {
	s := kindName(typ.Kind())
	if typ.Kind() == parquet.FixedLenByteArray {
		s += fmt.Sprintf("(%d)", typ.Length())
	}
	if lt := typ.LogicalType(); lt != nil && lt.Value != nil {
		s += " (" + lt.String() + ")"
	}
	return s
}

func kindName(k parquet.Kind) string {
	switch k {
	case parquet.Boolean:
		return "BOOLEAN"
	case parquet.Int32:
		return "INT32"
	case parquet.Int64:
		return "INT64"
	case parquet.Int96:
		return "INT96"
	case parquet.Float:
		return "FLOAT"
	case parquet.Double:
		return "DOUBLE"
	case parquet.ByteArray:
		return "BYTE_ARRAY"
	case parquet.FixedLenByteArray:
		return "FIXED_LEN_BYTE_ARRAY"
	}
	return k.String()
}

// vocabulary maps the wire names of an enum to its values.
type vocabulary[E ~uint8] struct {
	values   map[string]E
	names    []string // indexed by value; names[0] is ""
	expected string   // "one of a, b, c"
}

// newVocabulary lists the values of an enum by parsing the names of 1, 2, ...
// until one does not parse back.
func newVocabulary[E interface {
	~uint8
	String() string
}](parse func(string) (E, bool)) vocabulary[E] {
	v := vocabulary[E]{values: make(map[string]E), names: []string{""}}
	for e := E(1); e != 0; e++ {
		name := e.String()
		if got, ok := parse(name); !ok || got != e {
			break
		}
		v.values[name] = e
		v.names = append(v.names, name)
	}
	v.expected = "one of " + strings.Join(v.names[1:], ", ")
	return v
}

// name returns a pointer to the name of e, which must not be zero.
func (v *vocabulary[E]) name(field string, e E) (*string, error) {
	if e == 0 || int(e) >= len(v.names) {
		return nil, &auditfmt.FieldError{Field: field, Expected: v.expected, Found: fmt.Sprintf("value %d", e)}
	}
	return &v.names[e], nil
}

// lookup returns the value named b; the empty name is the zero value.
func (v *vocabulary[E]) lookup(field string, b []byte) (E, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if e, ok := v.values[string(b)]; ok {
		return e, nil
	}
	return 0, &auditfmt.FieldError{Field: field, Expected: v.expected, Found: strconv.Quote(string(b))}
}

var (
	outcomes       = newVocabulary(auditfmt.ParseOutcome)
	stages         = newVocabulary(auditfmt.ParseStage)
	failureClasses = newVocabulary(auditfmt.ParseFailureClass)
)

// decoder turns the values of a file's columns into records, a column at
// a time.
type decoder struct {
	last    [numColumns]string // the last value of each string column, reused when repeated
	sources sourceNames        // the names in the source column
	atScale int64              // nanoseconds in a unit of the file's recorded_at
}

// decodeColumn stores vals, the values of column c for consecutive rows, in
// recs or, for the chain columns, in pos. errs[i] receives the first error
// of row i (an *auditfmt.FieldError) unless it already has one.
func (d *decoder) decodeColumn(c int, recs []auditfmt.Record, pos []hashchain.Pos, errs []error, vals []parquet.Value) {
	if isChainColumn(c) {
		d.decodeChain(c, pos, errs, vals)
		return
	}
	required := columnTypes[c].required
	for i := range vals {
		v := &vals[i]
		if v.IsNull() {
			if required && errs[i] == nil {
				errs[i] = &auditfmt.FieldError{Field: columnNames[c], Expected: "a value", Found: "null"}
			}
			continue
		}
		if err := d.set(&recs[i], c, v); err != nil && errs[i] == nil {
			errs[i] = err
		}
	}
}

// decodeChain stores the values of a chain column in pos. A file is
// chained in every row or in none: a null among values is an error (a
// null seq would read as 0, the value it replaced).
func (d *decoder) decodeChain(c int, pos []hashchain.Pos, errs []error, vals []parquet.Value) {
	nulls := 0
	for i := range vals {
		if vals[i].IsNull() {
			nulls++
		}
	}
	for i := range vals {
		v := &vals[i]
		if v.IsNull() {
			if nulls < len(vals) && errs[i] == nil {
				errs[i] = &auditfmt.FieldError{Field: columnNames[c], Expected: "a value, as every row of a chained file has", Found: "null"}
			}
			continue
		}
		switch c {
		case colOrigin:
			pos[i].Origin = d.str(c, v)
		case colSeq:
			pos[i].Seq = v.Int64()
		case colLink:
			copy(pos[i].Link[:], v.ByteArray())
		}
	}
}

// set stores the non-null value v of column c in rec. An optional text
// column holds null for an absent field, never the empty string, which
// would read as absent too.
func (d *decoder) set(rec *auditfmt.Record, c int, v *parquet.Value) (err error) {
	switch c {
	case colStage, colFailureClass, colHostID, colAttemptID, colRecordID, colExtra, colEnvelope:
		if len(v.ByteArray()) == 0 {
			return &auditfmt.FieldError{Field: columnNames[c], Expected: "null for an absent field, or a non-empty value", Found: "an empty string"}
		}
	}
	switch c {
	case colClientID:
		rec.ClientID = d.str(c, v)
	case colRecordedAt:
		err = d.setRecordedAt(rec, v.Int64())
	case colRecordedAtNs: // after recorded_at: columns decode in order
		ns := v.Int32()
		if ns < 1 || ns > 999 || d.atScale != 1000 {
			return &auditfmt.FieldError{Field: columnNames[c], Expected: "null, or nanoseconds from 1 to 999 past a recorded_at in microseconds", Found: fmt.Sprint(ns)}
		}
		rec.RecordedAt += int64(ns)
	case colRecordedOffsetMin:
		off := v.Int32()
		if off <= -24*60 || off >= 24*60 {
			return &auditfmt.FieldError{Field: columnNames[c], Expected: "minutes within ±23:59", Found: fmt.Sprint(off)}
		}
		rec.OffsetMin = int16(off)
	case colAttempt:
		rec.Attempt = v.Int64()
	case colBackoffDelayS:
		rec.BackoffDelayS = v.Double()
	case colOutcome:
		rec.Outcome, err = outcomes.lookup(columnNames[c], v.ByteArray())
	case colCleanSession:
		rec.CleanSession = v.Boolean()
	case colStage:
		rec.Stage, err = stages.lookup(columnNames[c], v.ByteArray())
	case colFailureClass:
		rec.FailureClass, err = failureClasses.lookup(columnNames[c], v.ByteArray())
	case colHostID:
		rec.HostID = d.str(c, v)
	case colAttemptID:
		rec.AttemptID = d.str(c, v)
	case colRecordID:
		rec.RecordID = d.str(c, v)
	case colExtra:
		rec.Extra = d.str(c, v)
	case colEnvelope:
		rec.Envelope = d.str(c, v)
	case colSource:
		rec.Source = d.sources.index(v.ByteArray())
	case colLine:
		rec.Line = v.Int64()
	default:
		setOptional(rec, c, v)
	}
	return err
}

// setRecordedAt stores t, in units of the file's recorded_at, in rec.
func (d *decoder) setRecordedAt(rec *auditfmt.Record, t int64) error {
	if t > math.MaxInt64/d.atScale || t < math.MinInt64/d.atScale {
		return &auditfmt.FieldError{Field: columnNames[colRecordedAt], Expected: "a time from 1678 to 2261 (Unix nanoseconds)", Found: fmt.Sprintf("%d units of %d ns", t, d.atScale)}
	}
	rec.RecordedAt = t * d.atScale
	return nil
}

// setOptional stores the value of an optional numeric or boolean column.
func setOptional(rec *auditfmt.Record, c int, v *parquet.Value) {
	switch c {
	case colSchema:
		rec.Schema, rec.Has = int64(v.Int32()), rec.Has|auditfmt.HasSchema
	case colDeviceSeq:
		rec.DeviceSeq, rec.Has = v.Int64(), rec.Has|auditfmt.HasDeviceSeq
	case colReasonCode:
		rec.ReasonCode, rec.Has = int64(v.Int32()), rec.Has|auditfmt.HasReasonCode
	case colCeilingS:
		rec.CeilingS, rec.Has = v.Double(), rec.Has|auditfmt.HasCeiling
	case colSessionPresent:
		rec.SessionPresent, rec.Has = v.Boolean(), rec.Has|auditfmt.HasSessionPresent
	case colOutboxDepth:
		rec.OutboxDepth, rec.Has = v.Int64(), rec.Has|auditfmt.HasOutboxDepth
	case colOutboxFlushed:
		rec.OutboxFlushed, rec.Has = v.Int64(), rec.Has|auditfmt.HasOutboxFlushed
	case colInboundRedelivered:
		rec.InboundRedelivered, rec.Has = v.Int64(), rec.Has|auditfmt.HasInboundRedelivered
	case colInboundDuplicates:
		rec.InboundDuplicates, rec.Has = v.Int64(), rec.Has|auditfmt.HasInboundDuplicates
	case colOutboxDropped:
		rec.OutboxDropped, rec.Has = v.Int64(), rec.Has|auditfmt.HasOutboxDropped
	case colInboundExpired:
		rec.InboundExpired, rec.Has = v.Int64(), rec.Has|auditfmt.HasInboundExpired
	}
}

// str returns the string value of column c, reusing the previous one when
// it repeats (as client_id, host_id and envelope do in sorted files).
func (d *decoder) str(c int, v *parquet.Value) string {
	b := v.ByteArray()
	if string(b) != d.last[c] {
		d.last[c] = string(b)
	}
	return d.last[c]
}

// sourceNames numbers the names of the source column.
type sourceNames struct {
	names []string
	ids   map[string]uint32
	last  uint32
}

func (s *sourceNames) init(names []string) {
	s.names = append([]string(nil), names...)
	s.ids = make(map[string]uint32, len(names))
	for i, name := range names {
		if _, dup := s.ids[name]; !dup {
			s.ids[name] = uint32(i)
		}
	}
}

// index returns the number of the name b, adding it if it is new.
func (s *sourceNames) index(b []byte) uint32 {
	if int(s.last) < len(s.names) && s.names[s.last] == string(b) {
		return s.last
	}
	id, ok := s.ids[string(b)]
	if !ok {
		id = uint32(len(s.names))
		name := string(b)
		s.names = append(s.names, name)
		s.ids[name] = id
	}
	s.last = id
	return id
}
