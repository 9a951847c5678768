package analyze

import (
	"cmp"
	"slices"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// Time to first useful service (docs/rules.md, "Time to first useful
// service"): a CONNACK is not service. A device that records the service
// stage writes its connected record at its first useful exchange after
// a session comes up (subscriptions acknowledged, a first publish
// acknowledged, a first message received).

// ServiceLag is how long after its reconnect a device may wait for its
// first useful service before it counts as connected but not served.
const ServiceLag = 5 * time.Second

// Unserved is a device of an incident that reconnected and was not
// served within ServiceLag: its session was back, its service was not.
type Unserved struct {
	Device string
	// Reconnected is its first connect after its loss, Served its first
	// useful service after that (NoTime: none before its next loss or the
	// end of the log), both on corrected clocks.
	Reconnected, Served int64
}

// Served returns when the session episode k of d (an index into
// d.Episodes) was first served: the service stage's first connected
// record after the connect that ended it, before the next episode;
// NoTime if none, or if d records no service stage.
func (d *Device) Served(k int) int64 { return d.servedAfter(d.serviceLine(), k) }

// serviceLine returns d's service stage, nil if it records none.
func (d *Device) serviceLine() *StageLine {
	for i := range d.Stages {
		if d.Stages[i].Stage == auditfmt.StageService {
			return &d.Stages[i]
		}
	}
	return nil
}

// servedAfter returns when the session episode k of d was first served:
// the first of the service stage's connected records after the connected
// record that ended it, before the next session episode began; NoTime
// if none, or if it did not end.
func (d *Device) servedAfter(service *StageLine, k int) int64 {
	ep := &d.Episodes[k]
	if service == nil || ep.Last < 0 {
		return NoTime
	}
	next := len(d.Events)
	if k+1 < len(d.Episodes) {
		next = d.Episodes[k+1].First
	}
	ss := service.Sessions
	j, _ := slices.BinarySearchFunc(ss, ep.Last, func(s Session, i int) int { return cmp.Compare(s.UpIndex, i) })
	if j < len(ss) && ss[j].UpIndex < next {
		return ss[j].Up
	}
	return NoTime
}

// serviceOf adds to d the service of the devices of the losses ls that
// are mine.
func (ic *incidentCounter) serviceOf(d *incidentDetail, ls []lossEvent, mine func(int32) bool) {
	seen := newDevSet(ls)
	for _, l := range ls {
		if !l.Service || !mine(l.Dev) || !seen.add(l.Dev) {
			continue
		}
		d.ServiceDevices++
		if l.Back == NoTime {
			continue
		}
		if l.Served != NoTime {
			d.Served++
			d.TTS.Add(time.Duration(l.Served - l.At))
		}
		if l.Served == NoTime || l.Served-l.Back > int64(ServiceLag) {
			d.Unserved = append(d.Unserved, Unserved{Device: ic.names[l.Dev], Reconnected: l.Back, Served: l.Served})
		}
	}
}
