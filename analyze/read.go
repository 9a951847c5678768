package analyze

import (
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/dataset"
	"github.com/stormaudit/stormaudit/internal/ordered"
	"github.com/stormaudit/stormaudit/redact"
)

// readColumns are the dataset columns the analyzers read; dictColumns
// those of them read as dictionaries (few distinct values, no string
// built per row).
var (
	readColumns = []string{"client_id", "recorded_at", "attempt", "backoff_delay_s", "outcome", "clean_session",
		"host_id", "stage", "attempt_id", "device_seq", "failure_class", "reason_code", "ceiling_s", "session_present",
		"outbox_depth", "outbox_flushed", "inbound_redelivered", "inbound_duplicates", "outbox_dropped", "inbound_expired", "record_id", "extra", "envelope", "source", "line"}
	dictColumns = []string{"client_id", "outcome", "host_id", "stage", "failure_class", "source"}
)

// dict is a dictionary-encoded string column of one batch.
type dict struct {
	a    *array.Dictionary
	vals *array.String
	idx  []int32 // the indices, read straight (the reader asks for int32)
}

func (d dict) index(i int) int    { return int(d.idx[i]) }
func (d dict) value(i int) string { return d.vals.Value(int(d.idx[i])) }

// batch is one Arrow batch of the columns the analyzers read, with the
// enumerations of its dictionaries parsed once.
type batch struct {
	client, host, source dict
	outcomes             []auditfmt.Outcome
	stages               []auditfmt.Stage
	fails                []auditfmt.FailureClass
	outcome, stage, fail dict
	at                   *array.Timestamp
	attemptID            *array.String // not a dictionary: one value per attempt
	recordID             *array.String
	extra, envelope      *array.String // JSON objects
	attempt, seq, line   *array.Int64
	outbox, flushed      *array.Int64
	redelivered, dups    *array.Int64
	dropped, expired     *array.Int64
	reason               *array.Int32
	delay, ceiling       *array.Float64
	clean, present       *array.Boolean
	sourceIndex          []int32        // global source index of each source dictionary entry
	hostHits             [][]redact.Hit // what each host_id of the dictionary holds (secret-in-log)

	// the last attempt_id hashed (a view of the batch's bytes) and its
	// key: an attempt's records are next to each other in a device's rows
	lastAttemptID  string
	lastAttemptKey uint64
}

func newBatch(rec arrow.RecordBatch, sources *sourceTable) (*batch, error) {
	b := &batch{}
	var bad []string
	dictOf := func(name string) dict {
		a := column[*array.Dictionary](rec, name, &bad)
		if a == nil {
			return dict{}
		}
		v, ok := a.Dictionary().(*array.String)
		ix, ok2 := a.Indices().(*array.Int32)
		if !ok || !ok2 {
			bad = append(bad, name)
			return dict{}
		}
		return dict{a, v, ix.Int32Values()}
	}
	b.client, b.outcome, b.host = dictOf("client_id"), dictOf("outcome"), dictOf("host_id")
	b.stage, b.fail, b.source = dictOf("stage"), dictOf("failure_class"), dictOf("source")
	b.at = column[*array.Timestamp](rec, "recorded_at", &bad)
	b.attempt = column[*array.Int64](rec, "attempt", &bad)
	b.delay = column[*array.Float64](rec, "backoff_delay_s", &bad)
	b.clean = column[*array.Boolean](rec, "clean_session", &bad)
	b.seq = column[*array.Int64](rec, "device_seq", &bad)
	b.attemptID = column[*array.String](rec, "attempt_id", &bad)
	b.recordID = column[*array.String](rec, "record_id", &bad)
	b.extra = column[*array.String](rec, "extra", &bad)
	b.envelope = column[*array.String](rec, "envelope", &bad)
	b.outbox = column[*array.Int64](rec, "outbox_depth", &bad)
	b.flushed = column[*array.Int64](rec, "outbox_flushed", &bad)
	b.redelivered = column[*array.Int64](rec, "inbound_redelivered", &bad)
	b.dups = column[*array.Int64](rec, "inbound_duplicates", &bad)
	b.dropped = column[*array.Int64](rec, "outbox_dropped", &bad)
	b.expired = column[*array.Int64](rec, "inbound_expired", &bad)
	b.reason = column[*array.Int32](rec, "reason_code", &bad)
	b.ceiling = column[*array.Float64](rec, "ceiling_s", &bad)
	b.present = column[*array.Boolean](rec, "session_present", &bad)
	b.line = column[*array.Int64](rec, "line", &bad)
	if len(bad) > 0 {
		return nil, fmt.Errorf("columns %v: unexpected Arrow types", bad)
	}
	b.outcomes = parseAll(b.outcome.vals, auditfmt.ParseOutcome)
	b.stages = parseAll(b.stage.vals, auditfmt.ParseStage)
	b.fails = parseAll(b.fail.vals, auditfmt.ParseFailureClass)
	b.hostHits = scanHosts(b.host.vals)
	b.sourceIndex = make([]int32, b.source.vals.Len())
	for i := range b.sourceIndex {
		b.sourceIndex[i] = sources.number(b.source.vals.Value(i))
	}
	return b, nil
}

// column returns the named column of rec as a T, or adds its name to bad.
func column[T arrow.Array](rec arrow.RecordBatch, name string, bad *[]string) T {
	a, ok := rec.Column(rec.Schema().FieldIndices(name)[0]).(T)
	if !ok {
		*bad = append(*bad, name)
	}
	return a
}

// parseAll parses each value of a dictionary once.
func parseAll[T any](vals *array.String, parse func(string) (T, bool)) []T {
	out := make([]T, vals.Len())
	for i := range out {
		out[i], _ = parse(vals.Value(i))
	}
	return out
}

// sourceTable numbers the input names records were read from. It is
// safe for concurrent use.
type sourceTable struct {
	mu    sync.Mutex
	names []string
	index map[string]int32
}

func (t *sourceTable) number(name string) int32 {
	t.mu.Lock()
	defer t.mu.Unlock()
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

// part is one row group of the dataset, decoded: its events and the runs
// of them that belong to one device.
type part struct {
	p      dataset.Part
	events []Event
	runs   []run
	err    error
}

// run is a device's events in a part; a device's rows may span parts.
type run struct {
	id      string
	n       int
	hosts   []string // distinct host_ids, the last one last
	secrets []Secret // what scanSecrets found in its rows
}

// devices reads the dataset in dir through Arrow record batches and calls
// fn with each device, built, in dataset order. Rows of one device are
// contiguous in a dataset (it is sorted by client_id), so one device is in
// memory at a time; the Device and its slices are reused for the next one.
// The row groups are decoded in parallel and put back in order. It
// returns the dataset's manifest and the names of the inputs that
// Ref.Source indexes. fn returning errEnough ends the read without error.
func devices(dir string, fn func(d *Device) error) (*dataset.Manifest, []string, error) {
	return devicesUpTo(dir, math.MaxInt64, fn)
}

// devicesUpTo is devices reading only the row groups that hold the first
// rows rows of the dataset (and, so, the devices that start in them; the
// last one may be cut short).
func devicesUpTo(dir string, rows int64, fn func(d *Device) error) (*dataset.Manifest, []string, error) {
	return readDevices(dir, nil, rows, nil, nil, fn)
}

// readDevices is devicesUpTo reading the files of the dataset that files
// lists (nil: all), only the records in win (nil: all), and filling, for each device, the Device that get
// returns (get nil: one Device, reused); fn then owns it.
func readDevices(dir string, files []int, rows int64, win *window, get func() *Device, fn func(d *Device) error) (*dataset.Manifest, []string, error) {
	man, err := dataset.ReadManifest(dir)
	if err != nil {
		return nil, nil, err
	}
	parts, err := dataset.PartsOf(dir, man, files)
	if err != nil {
		return nil, nil, err
	}
	sources := &sourceTable{}
	for _, in := range man.Inputs {
		sources.number(in.Name) // Ref.Source follows the order the inputs were given
	}
	todo := make(chan *part)
	done := make(chan *part) // unbuffered: every decoded part waiting holds a row group's events (15 MB)
	stop := make(chan struct{})
	go func() {
		defer close(todo)
		var fed int64
		for _, p := range parts {
			if fed >= rows {
				return
			}
			fed += p.Rows
			select {
			case todo <- &part{p: p}:
			case <-stop:
				return
			}
		}
	}()
	// event buffers go round: decoded parts hand theirs back once
	// assembled, sparing a fresh zeroed allocation per row group
	spare := make(chan []Event, runtime.GOMAXPROCS(0))
	go ordered.Run(runtime.GOMAXPROCS(0), todo, done, func(_ int, p *part) {
		select {
		case p.events = <-spare:
		default:
		}
		p.decode(dir, sources)
	})
	asm := assembler{fn: fn, get: get, d: &Device{}, hosts: map[string]bool{}, win: win}
	for p := range done {
		if asm.err == nil {
			if asm.err = p.err; asm.err == nil {
				asm.add(p)
			}
			if asm.err != nil {
				close(stop)
			}
		}
		select {
		case spare <- p.events[:0]:
		default:
		}
	}
	if asm.err == nil {
		asm.flush()
	}
	if asm.err != nil && asm.err != errEnough {
		return nil, nil, asm.err
	}
	sources.mu.Lock()
	defer sources.mu.Unlock()
	return man, sources.names, nil
}

// assembler joins the runs of decoded parts into devices.
type assembler struct {
	fn      func(*Device) error
	get     func() *Device // the next device to fill; nil: reuse d
	d       *Device
	started bool
	hosts   map[string]bool
	win     *window // nil: every record
	spare   bool    // d was left out whole by win: fill it again
	err     error
}

func (a *assembler) add(p *part) {
	events := p.events
	for _, r := range p.runs {
		if !a.started || r.id != a.d.ID {
			if a.flush(); a.err != nil {
				return
			}
			if a.get != nil && !a.spare {
				a.d = a.get()
			}
			a.spare = false
			a.d.reset(r.id)
			a.started = true
		}
		a.d.Events = append(a.d.Events, events[:r.n]...)
		events = events[r.n:]
		for _, h := range r.hosts {
			a.hosts[h] = true
			a.d.Host = h
		}
		a.d.Secrets = append(a.d.Secrets, r.secrets...)
	}
}

// flush builds the device being assembled and hands it to fn.
func (a *assembler) flush() {
	if !a.started || a.err != nil {
		return
	}
	a.d.Hosts = len(a.hosts)
	clear(a.hosts)
	a.started = false
	if !a.win.cut(a.d) {
		a.spare = true // no record of it in the window
		return
	}
	a.d.Build()
	a.err = a.fn(a.d)
}

// decode reads the part's rows into events and runs.
func (p *part) decode(dir string, sources *sourceTable) {
	r, err := dataset.OpenArrowWith(dir, dataset.ArrowOptions{Columns: readColumns, Dictionaries: dictColumns, Part: &p.p})
	if err != nil {
		p.err = err
		return
	}
	defer r.Close()
	if int64(cap(p.events)) < p.p.Rows {
		p.events = make([]Event, 0, p.p.Rows)
	}
	p.events = p.events[:0]
	row := p.p.FirstRow
	var cur *run
	sink := newSecretSink() // one per part: see secretSink
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			p.err = err
			return
		}
		b, err := newBatch(rec, sources)
		if err != nil {
			rec.Release()
			p.err = fmt.Errorf("%s: %w", dir, err)
			return
		}
		last, first := -1, len(p.events)
		p.events = b.fill(p.events, int32(p.p.File), row)
		hosts, secrets := hasValues(b.host.a), b.hasStrings()
		for i := range int(rec.NumRows()) {
			if k := b.client.index(i); k != last {
				last = k
				if id := b.client.vals.Value(k); cur == nil || cur.id != id {
					p.runs = append(p.runs, run{id: strings.Clone(id)}) // not the batch's memory
					cur = &p.runs[len(p.runs)-1]
				}
			}
			if hosts && b.host.a.IsValid(i) {
				if h := b.host.value(i); len(cur.hosts) == 0 || cur.hosts[len(cur.hosts)-1] != h {
					cur.hosts = append(slices.DeleteFunc(cur.hosts, func(x string) bool { return x == h }), strings.Clone(h))
				}
			}
			cur.n++
			if secrets {
				b.scanSecrets(i, &p.events[first+i], &cur.secrets, sink)
			}
			row++
		}
		rec.Release()
	}
}

// attemptKey returns AttemptKey of row i's attempt_id, which must not be
// null. Value shares the batch's bytes: no string is made.
func (b *batch) attemptKey(i int) uint64 {
	if id := b.attemptID.Value(i); id != b.lastAttemptID || b.lastAttemptKey == 0 {
		b.lastAttemptID, b.lastAttemptKey = id, AttemptKey(id)
	}
	return b.lastAttemptKey
}

// fill appends the rows of the batch to dst as Events, the first being
// row of file: the required columns row by row, then each optional
// column that holds a value (most hold none, and cost nothing a row).
func (b *batch) fill(dst []Event, file int32, row int64) []Event {
	start := len(dst)
	dst = slices.Grow(dst, b.at.Len())[:start+b.at.Len()]
	evs := dst[start:]
	for i := range evs {
		evs[i] = Event{At: int64(b.at.Value(i)), Attempt: b.attempt.Value(i), Delay: b.delay.Value(i),
			Clean: b.clean.Value(i), Ceiling: math.NaN(), Seq: -1, Outbox: -1, Flushed: -1, Redelivered: -1, Duplicates: -1,
			Dropped: -1, Expired: -1, Reason: -1, Presence: -1, Outcome: b.outcomes[b.outcome.index(i)],
			Ref: Ref{File: file, Row: row + int64(i), Source: b.sourceIndex[b.source.index(i)], Line: b.line.Value(i)}}
	}
	each := func(a arrow.Array, set func(e *Event, i int)) {
		if !hasValues(a) {
			return
		}
		for i := range evs {
			if a.IsValid(i) {
				set(&evs[i], i)
			}
		}
	}
	each(b.stage.a, func(e *Event, i int) { e.Stage = b.stages[b.stage.index(i)] })
	each(b.fail.a, func(e *Event, i int) { e.Fail = b.fails[b.fail.index(i)] })
	each(b.seq, func(e *Event, i int) { e.Seq = b.seq.Value(i) })
	each(b.attemptID, func(e *Event, i int) { e.AttemptKey = b.attemptKey(i) })
	each(b.outbox, func(e *Event, i int) { e.Outbox = b.outbox.Value(i) })
	each(b.flushed, func(e *Event, i int) { e.Flushed = b.flushed.Value(i) })
	each(b.redelivered, func(e *Event, i int) { e.Redelivered = b.redelivered.Value(i) })
	each(b.dups, func(e *Event, i int) { e.Duplicates = b.dups.Value(i) })
	each(b.dropped, func(e *Event, i int) { e.Dropped = count32(b.dropped.Value(i)) })
	each(b.expired, func(e *Event, i int) { e.Expired = count32(b.expired.Value(i)) })
	each(b.reason, func(e *Event, i int) { e.Reason = int16(b.reason.Value(i)) })
	each(b.ceiling, func(e *Event, i int) { e.Ceiling = b.ceiling.Value(i) })
	each(b.present, func(e *Event, i int) { e.Presence = int8(b2i(b.present.Value(i))) })
	return dst
}

// hasValues reports whether a holds a value that is not null.
func hasValues(a arrow.Array) bool { return a.NullN() < a.Len() }

// hasStrings reports whether any of the strings scanSecrets looks into
// holds a value in the batch.
func (b *batch) hasStrings() bool {
	return hasValues(b.attemptID) || hasValues(b.recordID) || hasValues(b.extra) || hasValues(b.envelope) || hasValues(b.host.a)
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}

// scanSecrets adds to out what row i holds in its strings that looks like
// a credential or a hardware identifier; e is its event.
func (b *batch) scanSecrets(i int, e *Event, out *[]Secret, sink *secretSink) {
	str := func(a *array.String) string {
		if a.IsValid(i) {
			return a.Value(i) // the batch's bytes: no string is made
		}
		return ""
	}
	sink.record(str(b.attemptID), str(b.recordID), str(b.extra), str(b.envelope), e, out)
	if b.host.a.IsValid(i) {
		hostSecrets(b.hostHits[b.host.index(i)], e, out)
	}
}

// A secretSink turns what package redact finds in a record into Secrets.
// Its callback is bound once, not per record: a closure made per record
// would cost an allocation on every row read.
type secretSink struct {
	out *[]Secret
	e   *Event
	add func(redact.Hit) // hit, bound
}

func newSecretSink() *secretSink {
	s := &secretSink{}
	s.add = s.hit
	return s
}

func (s *secretSink) hit(h redact.Hit) {
	*s.out = append(*s.out, Secret{Field: h.Field, Kind: h.Kind, At: s.e.At, Ref: s.e.Ref})
}

// record adds to out what a record's attempt_id, record_id, extra and
// envelope ("" when absent) hold that looks like a credential or a
// hardware identifier (package redact); e is its event. client_id is
// scanned once per device, and host_id once per distinct value.
func (s *secretSink) record(attemptID, recordID, extra, envelope string, e *Event, out *[]Secret) {
	s.e, s.out = e, out
	if attemptID != "" {
		redact.Scan("attempt_id", attemptID, s.add)
	}
	if recordID != "" {
		redact.Scan("record_id", recordID, s.add)
	}
	if extra != "" {
		redact.ScanJSON("extra", extra, s.add)
	}
	if envelope != "" {
		redact.ScanJSON("envelope", envelope, s.add)
	}
	s.e, s.out = nil, nil
}

// hostSecrets adds to out a Secret for each of hits, what the host_id
// of the record of event e holds.
func hostSecrets(hits []redact.Hit, e *Event, out *[]Secret) {
	for _, h := range hits {
		*out = append(*out, Secret{Field: h.Field, Kind: h.Kind, At: e.At, Ref: e.Ref})
	}
}

// scanHosts returns what each host_id of a dictionary holds.
func scanHosts(vals *array.String) [][]redact.Hit {
	hits := make([][]redact.Hit, vals.Len())
	for i := range hits {
		redact.Scan("host_id", vals.Value(i), func(h redact.Hit) { hits[i] = append(hits[i], h) })
	}
	return hits
}
