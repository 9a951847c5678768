package analyze

import (
	"fmt"
	"io"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/dataset"
)

// readColumns are the dataset columns the analyzers read.
var readColumns = []string{"client_id", "recorded_at", "attempt", "backoff_delay_s", "outcome", "clean_session",
	"host_id", "stage", "device_seq", "failure_class", "reason_code", "ceiling_s", "session_present", "source", "line"}

// batchColumns are the columns of one Arrow batch, by name.
type batchColumns struct {
	client, outcome, host, stage, fail *array.String
	at                                 *array.Timestamp
	source                             *array.String
	attempt, seq, line                 *array.Int64
	reason                             *array.Int32
	delay, ceiling                     *array.Float64
	clean, present                     *array.Boolean
}

func columnsOf(rec arrow.RecordBatch) (*batchColumns, error) {
	b := &batchColumns{}
	sc := rec.Schema()
	col := func(name string) arrow.Array { return rec.Column(sc.FieldIndices(name)[0]) }
	var ok [15]bool
	b.client, ok[0] = col("client_id").(*array.String)
	b.at, ok[1] = col("recorded_at").(*array.Timestamp)
	b.attempt, ok[2] = col("attempt").(*array.Int64)
	b.delay, ok[3] = col("backoff_delay_s").(*array.Float64)
	b.outcome, ok[4] = col("outcome").(*array.String)
	b.clean, ok[5] = col("clean_session").(*array.Boolean)
	b.host, ok[6] = col("host_id").(*array.String)
	b.stage, ok[7] = col("stage").(*array.String)
	b.seq, ok[8] = col("device_seq").(*array.Int64)
	b.fail, ok[9] = col("failure_class").(*array.String)
	b.reason, ok[10] = col("reason_code").(*array.Int32)
	b.ceiling, ok[11] = col("ceiling_s").(*array.Float64)
	b.present, ok[12] = col("session_present").(*array.Boolean)
	b.source, ok[13] = col("source").(*array.String)
	b.line, ok[14] = col("line").(*array.Int64)
	for i, o := range ok {
		if !o {
			return nil, fmt.Errorf("column %s: unexpected Arrow type %s", readColumns[i], sc.Field(sc.FieldIndices(readColumns[i])[0]).Type)
		}
	}
	return b, nil
}

// devices reads the dataset in dir through Arrow record batches and calls
// fn with each device, built, in dataset order. Rows of one device are
// contiguous in a dataset (it is sorted by client_id), so one device is in
// memory at a time. It returns the dataset's manifest and the names of the
// inputs that Ref.Source indexes.
func devices(dir string, fn func(d *Device) error) (*dataset.Manifest, []string, error) {
	man, err := dataset.ReadManifest(dir)
	if err != nil {
		return nil, nil, err
	}
	r, err := dataset.OpenArrowColumns(dir, 0, readColumns...)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	var sources []string
	sourceIndex := map[string]int32{}
	var d *Device
	hosts := map[string]bool{}
	flush := func() error {
		if d == nil {
			return nil
		}
		d.Hosts = len(hosts)
		clear(hosts)
		d.Build()
		return fn(d)
	}
	file, row := int32(0), int64(0)
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		b, err := columnsOf(rec)
		if err != nil {
			rec.Release()
			return nil, nil, err
		}
		for i := range int(rec.NumRows()) {
			if row == man.Files[file].Rows {
				file, row = file+1, 0
			}
			id := b.client.Value(i)
			if d == nil || d.ID != id {
				if err := flush(); err != nil {
					rec.Release()
					return nil, nil, err
				}
				d = &Device{ID: id}
			}
			if b.host.IsValid(i) {
				h := b.host.Value(i)
				if !hosts[h] {
					hosts[h] = true
				}
				d.Host = h
			}
			src := b.source.Value(i)
			k, ok := sourceIndex[src]
			if !ok {
				k = int32(len(sources))
				sources = append(sources, src)
				sourceIndex[src] = k
			}
			d.Events = append(d.Events, b.event(i, file, row, k))
			row++
		}
		rec.Release()
	}
	return man, sources, flush()
}

// event returns row i of the batch as an Event.
func (b *batchColumns) event(i int, file int32, row int64, source int32) Event {
	e := Event{At: int64(b.at.Value(i)), Attempt: b.attempt.Value(i), Delay: b.delay.Value(i),
		Clean: b.clean.Value(i), Ceiling: math.NaN(), Seq: -1, Reason: -1, Presence: -1,
		Ref: Ref{File: file, Row: row, Source: source, Line: b.line.Value(i)}}
	e.Outcome, _ = auditfmt.ParseOutcome(b.outcome.Value(i))
	if b.stage.IsValid(i) {
		e.Stage, _ = auditfmt.ParseStage(b.stage.Value(i))
	}
	if b.fail.IsValid(i) {
		e.Fail, _ = auditfmt.ParseFailureClass(b.fail.Value(i))
	}
	if b.seq.IsValid(i) {
		e.Seq = b.seq.Value(i)
	}
	if b.reason.IsValid(i) {
		e.Reason = b.reason.Value(i)
	}
	if b.ceiling.IsValid(i) {
		e.Ceiling = b.ceiling.Value(i)
	}
	if b.present.IsValid(i) {
		e.Presence = 0
		if b.present.Value(i) {
			e.Presence = 1
		}
	}
	return e
}
