package analyze

import (
	"context"
	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/dataset"
	"github.com/stormaudit/stormaudit/redact"
)

// Scan is a source of records for CheckRecords: it calls fn with every
// record in dataset order (sorted by client_id, then recorded_at, each
// device's records together), a batch at a time, and returns the manifest
// that accounts for the lines they were read from (ingest.Scan is one).
type Scan func(fn func(recs []auditfmt.Record) error) (*dataset.Manifest, error)

// CheckRecords runs every rule, as Check does, over the records scan
// yields, without a dataset: the path of a check of raw logs. dir holds
// the rejects file (rejects.ndjson) of the lines the manifest counts as
// rejected. Records are named by input and line; there are no dataset
// files (Ref.File is -1, Ref.Row the record's place in the scan). It
// finds what Check finds on a dataset ingested from the same inputs; the
// policy, when not given, is inferred from the first inferRecords records
// as Check infers it.
func CheckRecords(scan Scan, dir string, opts Options) (*Result, error) {
	k := newChecker(opts)
	var f *fan
	var buf []auditfmt.Record // while the policy is not known
	// batches go to an assembler goroutine, which builds the devices while
	// the scan merges the next records
	batches, free := make(chan []auditfmt.Record, 4), make(chan []auditfmt.Record, 4)
	for range cap(free) {
		free <- nil
	}
	assembled := make(chan struct{})
	start := func() {
		if opts.Policy == nil {
			k.inferred(inferFromRecords(buf[:min(len(buf), inferRecords)]))
		}
		f = newFan(k.consumers())
		go func() {
			defer close(assembled)
			asm := recordAssembler{get: f.get, emit: f.emit, win: k.win}
			for b := range batches {
				asm.add(b)
				free <- b[:0]
			}
			asm.flush()
		}()
		if len(buf) > 0 {
			<-free // buf takes a slot of the pool: the assembler hands it back
			batches <- buf
		}
		buf = nil
	}
	man, err := scan(func(recs []auditfmt.Record) error {
		if ctx := opts.Context; ctx != nil && ctx.Err() != nil {
			return context.Cause(ctx) // stopped: a signal, a cancelled job
		}
		if f == nil {
			buf = append(buf, recs...)
			if opts.Policy != nil || len(buf) >= inferRecords {
				start()
			}
			return nil
		}
		b := <-free
		batches <- append(b, recs...)
		return nil
	})
	if f == nil {
		start()
	}
	close(batches)
	<-assembled
	f.close()
	if err != nil {
		return nil, err
	}
	sources := make([]string, len(man.Inputs))
	for i, in := range man.Inputs {
		sources[i] = in.Name
	}
	return k.finish(dir, man, sources), nil
}

// inferFromRecords infers the policy from records in dataset order, as
// infer does from a dataset's first rows.
func inferFromRecords(recs []auditfmt.Record) *Inference {
	var in inference
	d := &Device{}
	asm := recordAssembler{get: func() *Device { return d }, emit: func(d *Device) error { in.add(d); return nil }}
	asm.add(recs)
	asm.flush()
	return in.result()
}

// recordAssembler groups records in dataset order into devices: it fills
// the device get returns with each device's records, builds it and hands
// it to emit.
type recordAssembler struct {
	get   func() *Device
	emit  func(*Device) error
	win   *window // nil: every record
	spare *Device // one win left out whole, to fill again
	d     *Device
	hosts map[string]bool
	row   int64
	// the last host_id seen and what it holds (secret-in-log)
	host     string
	hostHits []redact.Hit
	sink     *secretSink
}

func (a *recordAssembler) add(recs []auditfmt.Record) {
	for i := range recs {
		r := &recs[i]
		if a.d == nil || r.ClientID != a.d.ID {
			a.flush()
			if a.d = a.spare; a.d == nil {
				a.d = a.get()
			}
			a.spare = nil
			a.d.reset(r.ClientID)
		}
		a.d.Events = append(a.d.Events, eventOf(r, -1, a.row))
		e := &a.d.Events[len(a.d.Events)-1]
		if a.sink == nil {
			a.sink = newSecretSink()
		}
		a.sink.record(r.AttemptID, r.RecordID, r.Extra, r.Envelope, e, &a.d.Secrets)
		a.row++
		if r.HostID != "" {
			if a.hosts == nil {
				a.hosts = map[string]bool{}
			}
			if r.HostID != a.host {
				a.host, a.hostHits = r.HostID, a.hostHits[:0]
				redact.Scan("host_id", r.HostID, func(h redact.Hit) { a.hostHits = append(a.hostHits, h) })
			}
			hostSecrets(a.hostHits, e, &a.d.Secrets)
			a.hosts[r.HostID], a.d.Host = true, r.HostID
		}
	}
}

// flush builds the device being filled and emits it.
func (a *recordAssembler) flush() {
	if a.d == nil {
		return
	}
	a.d.Hosts = len(a.hosts)
	clear(a.hosts)
	if a.win.cut(a.d) {
		a.d.Build()
		a.emit(a.d)
	} else {
		a.spare = a.d
	}
	a.d = nil
}
