package analyze

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/dataset"
)

// readColumns are the dataset columns the analyzers read; dictColumns
// those of them read as dictionaries (few distinct values, no string
// built per row).
var (
	readColumns = []string{"client_id", "recorded_at", "attempt", "backoff_delay_s", "outcome", "clean_session",
		"host_id", "stage", "device_seq", "failure_class", "reason_code", "ceiling_s", "session_present", "source", "line"}
	dictColumns = []string{"client_id", "outcome", "host_id", "stage", "failure_class", "source"}
)

// dict is a dictionary-encoded string column of one batch.
type dict struct {
	a    *array.Dictionary
	vals *array.String
}

func (d dict) index(i int) int    { return d.a.GetValueIndex(i) }
func (d dict) value(i int) string { return d.vals.Value(d.a.GetValueIndex(i)) }

// batch is one Arrow batch of the columns the analyzers read, with the
// enumerations of its dictionaries parsed once.
type batch struct {
	client, host, source dict
	outcomes             []auditfmt.Outcome
	stages               []auditfmt.Stage
	fails                []auditfmt.FailureClass
	outcome, stage, fail dict
	at                   *array.Timestamp
	attempt, seq, line   *array.Int64
	reason               *array.Int32
	delay, ceiling       *array.Float64
	clean, present       *array.Boolean
	sourceIndex          []int32 // global source index of each source dictionary entry
}

func newBatch(rec arrow.RecordBatch, sources *sourceTable) (*batch, error) {
	b := &batch{}
	sc := rec.Schema()
	var bad []string
	col := func(name string) arrow.Array { return rec.Column(sc.FieldIndices(name)[0]) }
	dictOf := func(name string) dict {
		a, ok := col(name).(*array.Dictionary)
		if !ok {
			bad = append(bad, name)
			return dict{}
		}
		v, ok := a.Dictionary().(*array.String)
		if !ok {
			bad = append(bad, name)
		}
		return dict{a, v}
	}
	typed := func(name string, ok bool) {
		if !ok {
			bad = append(bad, name)
		}
	}
	b.client, b.outcome, b.host = dictOf("client_id"), dictOf("outcome"), dictOf("host_id")
	b.stage, b.fail, b.source = dictOf("stage"), dictOf("failure_class"), dictOf("source")
	var ok bool
	b.at, ok = col("recorded_at").(*array.Timestamp)
	typed("recorded_at", ok)
	b.attempt, ok = col("attempt").(*array.Int64)
	typed("attempt", ok)
	b.delay, ok = col("backoff_delay_s").(*array.Float64)
	typed("backoff_delay_s", ok)
	b.clean, ok = col("clean_session").(*array.Boolean)
	typed("clean_session", ok)
	b.seq, ok = col("device_seq").(*array.Int64)
	typed("device_seq", ok)
	b.reason, ok = col("reason_code").(*array.Int32)
	typed("reason_code", ok)
	b.ceiling, ok = col("ceiling_s").(*array.Float64)
	typed("ceiling_s", ok)
	b.present, ok = col("session_present").(*array.Boolean)
	typed("session_present", ok)
	b.line, ok = col("line").(*array.Int64)
	typed("line", ok)
	if len(bad) > 0 {
		return nil, fmt.Errorf("columns %v: unexpected Arrow types", bad)
	}
	b.outcomes = parseAll(b.outcome.vals, auditfmt.ParseOutcome)
	b.stages = parseAll(b.stage.vals, auditfmt.ParseStage)
	b.fails = parseAll(b.fail.vals, auditfmt.ParseFailureClass)
	b.sourceIndex = make([]int32, b.source.vals.Len())
	for i := range b.sourceIndex {
		b.sourceIndex[i] = sources.number(b.source.vals.Value(i))
	}
	return b, nil
}

// parseAll parses each value of a dictionary once.
func parseAll[T any](vals *array.String, parse func(string) (T, bool)) []T {
	out := make([]T, vals.Len())
	for i := range out {
		out[i], _ = parse(vals.Value(i))
	}
	return out
}

// sourceTable numbers the input names records were read from.
type sourceTable struct {
	names []string
	index map[string]int32
}

func (t *sourceTable) number(name string) int32 {
	if t.index == nil {
		t.index = map[string]int32{}
	}
	k, ok := t.index[name]
	if !ok {
		k = int32(len(t.names))
		t.names = append(t.names, name)
		t.index[name] = k
	}
	return k
}

// errEnough ends a read early without error (see infer).
var errEnough = errors.New("enough devices read")

// devices reads the dataset in dir through Arrow record batches and calls
// fn with each device, built, in dataset order. Rows of one device are
// contiguous in a dataset (it is sorted by client_id), so one device is in
// memory at a time; the Device and its slices are reused for the next one.
// It returns the dataset's manifest and the names of the inputs that
// Ref.Source indexes. fn returning errEnough ends the read without error.
func devices(dir string, fn func(d *Device) error) (*dataset.Manifest, []string, error) {
	// The reader decodes the Parquet pages and extracts the events on one
	// goroutine; fn builds and checks each device on this one.
	full := make(chan *Device, 64)
	free := make(chan *Device, 64)
	for range cap(free) {
		free <- &Device{}
	}
	stop := make(chan struct{})
	type outcome struct {
		man     *dataset.Manifest
		sources []string
		err     error
	}
	done := make(chan outcome, 1)
	go func() {
		man, sources, err := readDevices(dir, func(d *Device) (*Device, error) {
			select {
			case full <- d:
			case <-stop:
				return nil, errEnough
			}
			return <-free, nil
		})
		close(full)
		done <- outcome{man, sources, err}
	}()
	var ferr error
	for d := range full {
		if ferr == nil {
			d.Build()
			if ferr = fn(d); ferr != nil {
				close(stop)
			}
		}
		free <- d
	}
	o := <-done
	if ferr != nil && ferr != errEnough {
		return nil, nil, ferr
	}
	if o.err == errEnough {
		o.err = nil
	}
	return o.man, o.sources, o.err
}

// readDevices reads the devices, unbuilt, handing each to next, which
// returns the Device to fill with the next one.
func readDevices(dir string, next func(d *Device) (*Device, error)) (*dataset.Manifest, []string, error) {
	man, err := dataset.ReadManifest(dir)
	if err != nil {
		return nil, nil, err
	}
	r, err := dataset.OpenArrowWith(dir, dataset.ArrowOptions{Columns: readColumns, Dictionaries: dictColumns})
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	var sources sourceTable
	for _, in := range man.Inputs {
		sources.number(in.Name) // Ref.Source follows the order the inputs were given
	}
	d := &Device{}
	started := false
	hosts := map[string]bool{}
	flush := func() (err error) {
		if !started {
			return nil
		}
		d.Hosts = len(hosts)
		clear(hosts)
		d, err = next(d)
		return err
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
		b, err := newBatch(rec, &sources)
		if err != nil {
			rec.Release()
			return nil, nil, fmt.Errorf("%s: %w", dir, err)
		}
		lastClient := -1
		for i := range int(rec.NumRows()) {
			if row == man.Files[file].Rows {
				file, row = file+1, 0
			}
			if k := b.client.index(i); k != lastClient {
				lastClient = k
				if id := b.client.vals.Value(k); !started || d.ID != id {
					if err := flush(); err != nil {
						rec.Release()
						return nil, nil, err
					}
					d.reset(strings.Clone(id)) // not the batch's memory: rules may keep it
					started = true
				}
			}
			if b.host.a.IsValid(i) {
				h := b.host.value(i)
				if !hosts[h] {
					hosts[h] = true
				}
				if h != d.Host {
					d.Host = strings.Clone(h)
				}
			}
			d.Events = append(d.Events, b.event(i, file, row))
			row++
		}
		rec.Release()
	}
	if err := flush(); err != nil {
		return nil, nil, err
	}
	return man, sources.names, nil
}

// event returns row i of the batch as an Event.
func (b *batch) event(i int, file int32, row int64) Event {
	e := Event{At: int64(b.at.Value(i)), Attempt: b.attempt.Value(i), Delay: b.delay.Value(i),
		Clean: b.clean.Value(i), Ceiling: math.NaN(), Seq: -1, Reason: -1, Presence: -1,
		Outcome: b.outcomes[b.outcome.index(i)],
		Ref:     Ref{File: file, Row: row, Source: b.sourceIndex[b.source.index(i)], Line: b.line.Value(i)}}
	if b.stage.a.IsValid(i) {
		e.Stage = b.stages[b.stage.index(i)]
	}
	if b.fail.a.IsValid(i) {
		e.Fail = b.fails[b.fail.index(i)]
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
