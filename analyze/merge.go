package analyze

// A merger is a rule whose Finish judges the fleet: the state its Device
// calls gather is in exported fields (so that a Partial encodes it), and
// merge adds to it the state the same rule gathered over the devices
// that come after, in dataset order: the receiver then holds what it
// would hold had it seen both parts' devices itself. Device ordinals
// shift by the receiver's count of devices. A rule that is not a merger
// keeps no state between its Device calls but scratch space and the
// thresholds it was made with. Each rule's merge is in the rule's file,
// just after the state type it merges; this file merges the check's own
// state (the checker, the fleet's and the incidents' counters).
type merger interface {
	Rule
	merge(next Rule)
}

// merge adds to k the state of next, a checker over the devices after
// k's, made with the same options.
func (k *checker) merge(next *checker) {
	k.c.End = max(k.c.End, next.c.End)
	k.moved, k.movedDevices, k.movedGap = k.moved+next.moved, k.movedDevices+next.movedDevices, max(k.movedGap, next.movedGap)
	if k.win != nil {
		k.win.outside += next.win.left()
	}
	k.fc.merge(next.fc)
	for i, r := range k.rules {
		c, nc := k.ctxs[i], next.ctxs[i]
		c.findings = append(c.findings, nc.findings...)
		for _, n := range nc.notes {
			c.note(n)
		}
		for rule, why := range nc.skipped {
			if _, ok := c.skipped[rule]; !ok {
				if c.skipped == nil {
					c.skipped = map[string]string{}
				}
				c.skipped[rule] = why
			}
		}
		if m, ok := r.(merger); ok {
			m.merge(next.rules[i])
		}
	}
}

func (fc *fleetCounter) merge(next *fleetCounter) {
	st, ns := &fc.St, &next.St
	base := int32(st.Devices) // next's ordinals follow fc's
	st.Devices, st.Records, st.Attempts = st.Devices+ns.Devices, st.Records+ns.Records, st.Attempts+ns.Attempts
	st.Lost, st.Recovered = st.Lost+ns.Lost, st.Recovered+ns.Recovered
	st.TTR.Merge(&ns.TTR)
	fc.Names = append(fc.Names, next.Names...)
	for dev, id := range next.Named {
		if fc.Named == nil {
			fc.Named = map[int32]string{}
		}
		fc.Named[base+dev] = id
	}
	if next.ids != nil { // one partial holds the figures
		fc.ids = next.ids
	}
	fc.Opens = addCounts(fc.Opens, next.Opens)
	fc.Wit.merge(&next.Wit, fc.Inc.Devices)
	fc.Inc.merge(&next.Inc)
	fc.Flush.merge(&next.Flush)
	fc.Redel.merge(&next.Redel)
}

// addCounts adds the counts of b to a (nil: made) and returns a.
func addCounts(a, b map[int64]int64) map[int64]int64 {
	if a == nil {
		a = map[int64]int64{}
	}
	for k, n := range b {
		a[k] = addSat(a[k], n)
	}
	return a
}

func (ic *incidentCounter) merge(next *incidentCounter) {
	for _, l := range next.Losses {
		l.Dev += ic.Devices
		l.MetAt += int32(len(ic.Met))
		ic.Losses = append(ic.Losses, l)
	}
	ic.Met = append(ic.Met, next.Met...)
	for _, s := range next.Last {
		s.Dev += ic.Devices
		ic.Last = append(ic.Last, s)
	}
	ic.Connects = append(ic.Connects, next.Connects...)
	for _, d := range next.ConnDevs {
		ic.ConnDevs = append(ic.ConnDevs, d+ic.Devices)
	}
	ic.Devices += next.Devices
	ic.Known += next.Known
	if ic.Inferred == nil {
		ic.Inferred = next.Inferred
	}
	ic.Returns, ic.Verdicts = append(ic.Returns, next.Returns...), append(ic.Verdicts, next.Verdicts...)
	ic.PeakShards, ic.PeaksOf, ic.Peaks = append(ic.PeakShards, next.PeakShards...), append(ic.PeaksOf, next.PeaksOf...), append(ic.Peaks, next.Peaks...)
	ic.Detailed = ic.Detailed && next.Detailed
	if len(ic.Details) == 0 {
		ic.Details = next.Details
		return
	}
	for k := range min(len(ic.Details), len(next.Details)) {
		ic.Details[k].merge(&next.Details[k])
	}
}
