package analyze

import (
	"cmp"
	"maps"
	"runtime"
	"slices"

	"golang.org/x/sync/errgroup"
)

// incidentDetail is what some of an incident's devices tell beyond what
// found it: what they met while down, who of them never came back, and
// their service. A device counts once however many of its losses the
// incident holds, so details of disjoint sets of devices add up (merge)
// to what all of them tell: the parts of a split hold disjoint devices,
// and whyAndWho deals an incident's devices out to the cores by ordinal.
type incidentDetail struct {
	Met    map[uint64]*metSum // by metKey
	Stages map[uint64]*metSum // by the stage and outcome of metKey
	// Unrecovered and Unserved are in no order until the incident takes
	// them (setDetail sorts them by device)
	Unrecovered            []Unrecovered
	ServiceDevices, Served int
	TTS                    Durations
	Unserved               []Unserved
	Cost                   [costKinds]Cost
}

// metSum counts the records of one kind, and the devices that wrote one.
type metSum struct{ Records, Devices int }

// detailOf returns the detail of the devices of the losses ls (one
// incident's, in time order) whose ordinal is part modulo parts; ix
// holds the clock offsets.
func (ic *incidentCounter) detailOf(ls []lossEvent, ix clockIndex, part, parts int32) incidentDetail {
	d := incidentDetail{Met: map[uint64]*metSum{}, Stages: map[uint64]*metSum{}}
	mine := func(dev int32) bool { return dev%parts == part }
	ic.metOf(&d, ls, mine)
	ic.unrecoveredOf(&d, ls, ix, mine)
	ic.serviceOf(&d, ls, mine)
	return d
}

// merge adds o, a detail of other devices of the same incident, to d.
func (d *incidentDetail) merge(o *incidentDetail) {
	add := func(into, from map[uint64]*metSum) {
		for k, s := range from {
			if t := into[k]; t != nil {
				t.Records, t.Devices = t.Records+s.Records, t.Devices+s.Devices
			} else {
				into[k] = &metSum{s.Records, s.Devices}
			}
		}
	}
	add(d.Met, o.Met)
	add(d.Stages, o.Stages)
	d.Unrecovered = append(d.Unrecovered, o.Unrecovered...)
	d.ServiceDevices, d.Served = d.ServiceDevices+o.ServiceDevices, d.Served+o.Served
	for k := range d.Cost {
		c, oc := &d.Cost[k], &o.Cost[k]
		c.Messages, c.Devices, c.Reporting = c.Messages+oc.Messages, c.Devices+oc.Devices, c.Reporting+oc.Reporting
	}
	d.TTS.Merge(&o.TTS)
	d.Unserved = append(d.Unserved, o.Unserved...)
}

// setDetail fills in what d tells of inc: what its devices met, sorted by
// stage, outcome, class and reason (and by stage and outcome alone), who
// never came back and who was not served, by device, the percentiles of
// the times to first service, and the diagnosis.
func (inc *Incident) setDetail(d incidentDetail) {
	inc.Met, inc.Stages = nil, nil
	for _, k := range slices.Sorted(maps.Keys(d.Stages)) {
		m := unpackMet(k)
		inc.Stages = append(inc.Stages, StageOutcome{Stage: m.Stage, Outcome: m.Outcome, Records: d.Stages[k].Records, Devices: d.Stages[k].Devices})
	}
	for _, k := range slices.Sorted(maps.Keys(d.Met)) {
		m := unpackMet(k)
		m.Records, m.Devices = d.Met[k].Records, d.Met[k].Devices
		inc.Met = append(inc.Met, m)
	}
	inc.Unrecovered = d.Unrecovered
	slices.SortFunc(inc.Unrecovered, func(a, b Unrecovered) int { return cmp.Compare(a.Device, b.Device) })
	inc.ServiceDevices, inc.Served, inc.TTS, inc.Unserved = d.ServiceDevices, d.Served, d.TTS, d.Unserved
	inc.Cost = d.Cost
	inc.TTS.Sort()
	inc.TTS50, inc.TTS90, inc.TTS99, inc.TTSMax = inc.TTS.Rank(0.5), inc.TTS.Rank(0.9), inc.TTS.Rank(0.99), inc.TTS.Rank(1)
	slices.SortFunc(inc.Unserved, func(a, b Unserved) int { return cmp.Compare(a.Device, b.Device) })
	inc.Diagnosis = Diagnose(inc)
}

// whyAndWho fills in what each incident's devices met, who of them never
// came back and their service, from the losses of its span; offs are the
// clock offsets found (the broker's, ic.pre, besides). Each incident's
// devices are dealt out to the cores by ordinal, and their details
// merged: one incident of the whole fleet keeps every core busy.
func (ic *incidentCounter) whyAndWho(incs []Incident, spans [][2]int, offs []ClockOffset) {
	var all []ClockOffset
	for _, os := range ic.pre {
		all = append(all, os...)
	}
	ix := indexClocks(append(all, offs...))
	parts := int32(runtime.GOMAXPROCS(0))
	details := make([][]incidentDetail, len(spans))
	var g errgroup.Group
	g.SetLimit(int(parts))
	for k, sp := range spans {
		ls := ic.Losses[sp[0]:sp[1]]
		details[k] = make([]incidentDetail, parts)
		for p := range parts {
			g.Go(func() error {
				details[k][p] = ic.detailOf(ls, ix, p, parts)
				return nil
			})
		}
	}
	g.Wait()
	for k := range incs {
		d := details[k][0]
		for p := 1; p < len(details[k]); p++ {
			d.merge(&details[k][p])
		}
		incs[k].setDetail(d)
	}
}
