package analyze

import (
	"cmp"
	"slices"
	"strings"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// FleetSchedule is every MQTT socket-open of a log in time order: the
// connect schedule the fleet recorded, which replay plays back. A dataset
// is sorted by client_id, not by time, so the schedule is gathered device
// by device and sorted once: 24 bytes an open and a device's id and
// session kind, so a million devices with a few dozen opens each fit in
// memory.
type FleetSchedule struct {
	Devices   []ScheduledDevice
	Opens     []ScheduledOpen // by At, then device
	Incidents []Incident      // as Check infers them
	// Accepted holds the socket-opens whose attempt ended connected, in
	// time order: where the broker was up (see BackAt).
	Accepted []int64
}

// BackAt returns the first socket-open at or after t whose attempt
// connected: when the broker was back, as the fleet's schedule shows it
// (a connected record comes a CONNACK after it); NoTime if none.
func (fs *FleetSchedule) BackAt(t int64) int64 {
	i, _ := slices.BinarySearch(fs.Accepted, t)
	if i == len(fs.Accepted) {
		return NoTime
	}
	return fs.Accepted[i]
}

// ScheduledDevice is a device of a FleetSchedule.
type ScheduledDevice struct {
	ID    string
	Clean bool // clean_session of its last record
}

// ScheduledOpen is one socket-open of the session stage (see Attempt):
// the attempt's backoff_wait at At-Wait, its socket-open at At.
type ScheduledOpen struct {
	At      int64 // Unix ns
	Wait    int64 // ns from the backoff_wait to the socket-open: the delay and any rate-limit waits
	Device  int32 // index in FleetSchedule.Devices
	Attempt int32 // the attempt counter, clamped to int32
}

// Schedule reads the dataset in dir and returns its fleet's schedule: every
// session-stage socket-open the log shows (as the socket-opens of
// docs/rules.md: an attempt's open is in the log when its outcome was
// recorded or the device wrote a record at or after it).
func Schedule(dir string) (*FleetSchedule, error) {
	fs := &FleetSchedule{}
	fc := newFleetCounter(0)
	_, _, err := devices(dir, func(d *Device) error {
		fc.add(d)
		k := int32(len(fs.Devices))
		fs.Devices = append(fs.Devices, ScheduledDevice{ID: strings.Clone(d.ID), Clean: d.Clean})
		for i := range d.Attempts {
			a := &d.Attempts[i]
			if !isSessionStage(a.Stage) || !openInLog(d, a) {
				continue
			}
			fs.Opens = append(fs.Opens, ScheduledOpen{At: a.Open, Wait: a.Open - a.Start, Device: k,
				Attempt: int32(min(a.Number, 1<<31-1))})
			if a.Outcome >= 0 && d.Events[a.Outcome].Outcome == auditfmt.Connected {
				fs.Accepted = append(fs.Accepted, a.Open)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(fs.Opens, func(a, b ScheduledOpen) int {
		return cmp.Or(cmp.Compare(a.At, b.At), cmp.Compare(a.Device, b.Device))
	})
	slices.Sort(fs.Accepted)
	fs.Incidents = fc.stats().Incidents
	return fs, nil
}
