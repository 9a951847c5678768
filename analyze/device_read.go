package analyze

import (
	"cmp"
	"math"
	"path/filepath"
	"slices"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/dataset"
)

// DeviceRecords is one device read from a dataset: its timeline and the
// records it was built from, with every field.
type DeviceRecords struct {
	Device *Device // built (Device.Build)
	// Rows holds the records: Rows[i] is the one Device.Events[i] was read
	// from (the events are in the device's own order, not the dataset's).
	Rows []dataset.Row
	// Sources names the inputs Ref.Source and Record.Source index, Files
	// the dataset's files Ref.File indexes.
	Sources, Files []string
}

// ReadDevice reads the device whose client_id is id from the dataset in
// dir, and nothing else: dataset.ReadClient finds its rows by the
// client_id bounds of row groups and pages. The device is the one Check
// and Timeline see. A device absent from the dataset is a *NoDeviceError
// that names no near ids (finding them would mean reading every id).
func ReadDevice(dir, id string) (*DeviceRecords, error) {
	m, err := dataset.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	rows, sources, err := dataset.ReadClient(dir, id)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, &NoDeviceError{ID: id, Devices: -1}
	}
	d := &Device{ID: id}
	hosts := map[string]bool{}
	for i := range rows {
		r := &rows[i].Record
		d.Events = append(d.Events, eventOf(r, int32(rows[i].File), rows[i].Row))
		if r.HostID != "" {
			hosts[r.HostID], d.Host = true, r.HostID
		}
	}
	d.Hosts = len(hosts)
	d.Build()
	// Build moved the events into the device's order: the rows follow
	byRef := func(a, b dataset.Row) int { return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Row, b.Row)) }
	slices.SortFunc(rows, byRef) // dataset order already; sorted to search
	ordered := make([]dataset.Row, len(rows))
	for i, e := range d.Events {
		k, _ := slices.BinarySearchFunc(rows, dataset.Row{File: int(e.Ref.File), Row: e.Ref.Row}, byRef)
		ordered[i] = rows[k]
	}
	res := &DeviceRecords{Device: d, Rows: ordered, Sources: sources}
	for _, f := range m.Files {
		res.Files = append(res.Files, filepath.Join(dir, f.Name))
	}
	return res, nil
}

// eventOf returns the record r, row row of dataset file file, as an Event.
func eventOf(r *auditfmt.Record, file int32, row int64) Event {
	e := Event{At: r.RecordedAt, Delay: r.BackoffDelayS, Ceiling: math.NaN(), Attempt: r.Attempt, Seq: -1, Outbox: -1, Flushed: -1, Reason: -1,
		Redelivered: -1, Duplicates: -1, Dropped: -1, Expired: -1, Outcome: r.Outcome, Fail: r.FailureClass, Stage: r.Stage, Clean: r.CleanSession, Presence: -1,
		Ref: Ref{File: file, Source: int32(r.Source), Row: row, Line: r.Line}}
	if r.Has&auditfmt.HasDeviceSeq != 0 {
		e.Seq = r.DeviceSeq
	}
	if r.AttemptID != "" {
		e.AttemptKey = AttemptKey(r.AttemptID)
	}
	if r.Has&auditfmt.HasOutboxDepth != 0 {
		e.Outbox = r.OutboxDepth
	}
	if r.Has&auditfmt.HasOutboxFlushed != 0 {
		e.Flushed = r.OutboxFlushed
	}
	if r.Has&auditfmt.HasInboundRedelivered != 0 {
		e.Redelivered = r.InboundRedelivered
	}
	if r.Has&auditfmt.HasInboundDuplicates != 0 {
		e.Duplicates = r.InboundDuplicates
	}
	if r.Has&auditfmt.HasOutboxDropped != 0 {
		e.Dropped = count32(r.OutboxDropped)
	}
	if r.Has&auditfmt.HasInboundExpired != 0 {
		e.Expired = count32(r.InboundExpired)
	}
	if r.Has&auditfmt.HasReasonCode != 0 {
		e.Reason = int16(r.ReasonCode)
	}
	if r.Has&auditfmt.HasCeiling != 0 {
		e.Ceiling = r.CeilingS
	}
	if r.Has&auditfmt.HasSessionPresent != 0 {
		e.Presence = 0
		if r.SessionPresent {
			e.Presence = 1
		}
	}
	return e
}

// count32 returns the count n (>= 0) as an Event holds it: at most
// math.MaxInt32.
func count32(n int64) int32 { return int32(min(n, math.MaxInt32)) }
