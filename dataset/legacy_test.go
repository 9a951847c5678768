package dataset

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"unsafe"

	"github.com/parquet-go/parquet-go"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/hashchain"
)

// rowTuned is row with the cheap per-column changes measured against it:
// origin dictionary-encoded, link uncompressed.
type rowTuned struct {
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
	Origin             *string   `parquet:"origin,optional,dict"`
	Seq                *int64    `parquet:"seq,optional"`
	Link               *[32]byte `parquet:"link,optional,uncompressed"`
}

// legacyWriter is FileWriter as it was before it wrote column chunks
// itself: parquet-go's GenericWriter[row] fed rows (toRow). The tests
// compare the files of the two (TestSchemaAsLegacy) and the benchmarks
// their cost (BenchmarkWriteEngines).
type legacyWriter struct {
	f  *os.File
	pw interface {
		Close() error
	}
	write   func([]row) error
	sources []string
	rows    []row
	nw      []narrowed
}

// legacyOptions configures parquet-go as FileWriter did.
func legacyOptions(rowGroupRows int, sources string) []parquet.WriterOption {
	return []parquet.WriterOption{
		parquet.Compression(codec),
		parquet.MaxRowsPerRowGroup(int64(rowGroupRows)),
		parquet.PageBufferSize(1 << 20), // as FileWriter had it
		parquet.WriteBufferSize(writeBufferSize),
		parquet.DataPageVersion(1),
		parquet.DataPageStatistics(false),
		parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.Plain),
		parquet.SkipPageBounds("outcome"),
		parquet.SkipPageBounds("stage"),
		parquet.SkipPageBounds("failure_class"),
		parquet.SkipPageBounds("source"),
		parquet.SkipPageBounds("host_id"),
		parquet.SkipPageBounds("attempt_id"),
		parquet.SkipPageBounds("record_id"),
		parquet.SkipPageBounds("extra"),
		parquet.SkipPageBounds("envelope"),
		parquet.SkipPageBounds("link"),
		parquet.SortingWriterConfig(parquet.SortingColumns(
			parquet.Ascending(SortedBy[0]), parquet.Ascending(SortedBy[1]))),
		parquet.KeyValueMetadata(MetaSchemaVersion, strconv.Itoa(auditfmt.SchemaVersion)),
		parquet.KeyValueMetadata(MetaSources, sources),
	}
}

func newLegacyWriter(path string, sources []string, rowGroupRows int, tuned bool) (*legacyWriter, error) {
	names, _ := json.Marshal(sources)
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w := &legacyWriter{f: f, sources: sources, rows: make([]row, 1024), nw: make([]narrowed, 1024)}
	opts := legacyOptions(rowGroupRows, string(names))
	if tuned {
		pw := parquet.NewGenericWriter[rowTuned](f, opts...)
		w.pw, w.write = pw, func(rows []row) error {
			_, err := pw.Write(unsafe.Slice((*rowTuned)(unsafe.Pointer(&rows[0])), len(rows)))
			return err
		}
		return w, nil
	}
	pw := parquet.NewGenericWriter[row](f, opts...)
	w.pw, w.write = pw, func(rows []row) error { _, err := pw.Write(rows); return err }
	return w, nil
}

// WriteChained writes recs with pos, or without chain positions if pos is
// nil.
func (w *legacyWriter) WriteChained(recs []auditfmt.Record, pos []hashchain.Pos) error {
	for len(recs) > 0 {
		k := min(len(recs), len(w.rows))
		for i := range recs[:k] {
			var p *hashchain.Pos
			if pos != nil {
				p = &pos[i]
			}
			if err := toRow(&w.rows[i], &w.nw[i], &recs[i], p, w.sources); err != nil {
				return err
			}
		}
		if err := w.write(w.rows[:k]); err != nil {
			return err
		}
		recs = recs[k:]
		if pos != nil {
			pos = pos[k:]
		}
	}
	return nil
}

func (w *legacyWriter) Close() error {
	if err := w.pw.Close(); err != nil {
		return err
	}
	if err := w.f.Sync(); err != nil {
		return err
	}
	return w.f.Close()
}

// narrowed holds the 32-bit copies of a record's schema and reason_code for
// the row's pointers to point at.
type narrowed struct {
	schema     int32
	reasonCode int32
	atNs       int32
}

// toRow fills dst from rec and pos (nil for a row without a chain
// position). dst points into rec, pos and nw, which must stay untouched
// until dst has been written. sources maps rec.Source to a name. Errors
// are *auditfmt.FieldError.
func toRow(dst *row, nw *narrowed, rec *auditfmt.Record, pos *hashchain.Pos, sources []string) error {
	if int(rec.Source) >= len(sources) {
		return &auditfmt.FieldError{Field: "source", Expected: fmt.Sprintf("an index below %d (the number of sources)", len(sources)), Found: fmt.Sprint(rec.Source)}
	}
	outcome, err := outcomes.name("outcome", rec.Outcome)
	if err != nil {
		return err
	}
	us, rem := splitTime(rec.RecordedAt)
	*dst = row{
		ClientID:          rec.ClientID,
		RecordedAt:        us,
		RecordedOffsetMin: int32(rec.OffsetMin),
		Attempt:           rec.Attempt,
		BackoffDelayS:     rec.BackoffDelayS,
		Outcome:           *outcome,
		CleanSession:      rec.CleanSession,
		HostID:            optString(&rec.HostID),
		AttemptID:         optString(&rec.AttemptID),
		RecordID:          optString(&rec.RecordID),
		Extra:             optString(&rec.Extra),
		Envelope:          optString(&rec.Envelope),
		Source:            sources[rec.Source],
		Line:              rec.Line,
	}
	if rem != 0 {
		nw.atNs = rem
		dst.RecordedAtNs = &nw.atNs
	}
	if pos != nil {
		dst.Origin, dst.Seq, dst.Link = &pos.Origin, &pos.Seq, (*[32]byte)(&pos.Link)
	}
	if rec.Stage != 0 {
		if dst.Stage, err = stages.name("stage", rec.Stage); err != nil {
			return err
		}
	}
	if rec.FailureClass != 0 {
		if dst.FailureClass, err = failureClasses.name("failure_class", rec.FailureClass); err != nil {
			return err
		}
	}
	if rec.Has == 0 {
		return nil
	}
	return setOptionals(dst, nw, rec)
}

// optString returns s, or nil (null) if *s is empty.
func optString(s *string) *string {
	if *s == "" {
		return nil
	}
	return s
}

func setOptionals(dst *row, nw *narrowed, rec *auditfmt.Record) error {
	if rec.Has&auditfmt.HasSchema != 0 {
		if rec.Schema < math.MinInt32 || rec.Schema > math.MaxInt32 {
			return &auditfmt.FieldError{Field: "schema", Expected: "a 32-bit integer", Found: fmt.Sprint(rec.Schema)}
		}
		nw.schema = int32(rec.Schema)
		dst.Schema = &nw.schema
	}
	if rec.Has&auditfmt.HasDeviceSeq != 0 {
		dst.DeviceSeq = &rec.DeviceSeq
	}
	if rec.Has&auditfmt.HasReasonCode != 0 {
		if rec.ReasonCode < math.MinInt32 || rec.ReasonCode > math.MaxInt32 {
			return &auditfmt.FieldError{Field: "reason_code", Expected: "a 32-bit integer", Found: fmt.Sprint(rec.ReasonCode)}
		}
		nw.reasonCode = int32(rec.ReasonCode)
		dst.ReasonCode = &nw.reasonCode
	}
	if rec.Has&auditfmt.HasCeiling != 0 {
		dst.CeilingS = &rec.CeilingS
	}
	if rec.Has&auditfmt.HasSessionPresent != 0 {
		dst.SessionPresent = &rec.SessionPresent
	}
	if rec.Has&auditfmt.HasOutboxDepth != 0 {
		dst.OutboxDepth = &rec.OutboxDepth
	}
	if rec.Has&auditfmt.HasOutboxFlushed != 0 {
		dst.OutboxFlushed = &rec.OutboxFlushed
	}
	if rec.Has&auditfmt.HasInboundRedelivered != 0 {
		dst.InboundRedelivered = &rec.InboundRedelivered
	}
	if rec.Has&auditfmt.HasInboundDuplicates != 0 {
		dst.InboundDuplicates = &rec.InboundDuplicates
	}
	if rec.Has&auditfmt.HasOutboxDropped != 0 {
		dst.OutboxDropped = &rec.OutboxDropped
	}
	if rec.Has&auditfmt.HasInboundExpired != 0 {
		dst.InboundExpired = &rec.InboundExpired
	}
	return nil
}
