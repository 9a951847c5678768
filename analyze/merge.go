package analyze

// A merger is a rule whose Finish judges the fleet: the state its Device
// calls gather is in exported fields (so that a Partial encodes it), and
// merge adds to it the state the same rule gathered over the devices
// that come after, in dataset order: the receiver then holds what it
// would hold had it seen both parts' devices itself. Device ordinals
// shift by the receiver's count of devices. A rule that is not a merger
// keeps no state between its Device calls but scratch space and the
// thresholds it was made with.
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
	st.Devices, st.Records, st.Attempts = st.Devices+ns.Devices, st.Records+ns.Records, st.Attempts+ns.Attempts
	st.Lost, st.Recovered = st.Lost+ns.Lost, st.Recovered+ns.Recovered
	st.TTR = append(st.TTR, ns.TTR...)
	fc.Opens = addCounts(fc.Opens, next.Opens)
	fc.Wit.merge(&next.Wit, fc.Inc.Devices)
	fc.Inc.merge(&next.Inc)
	fc.Flush.Total = addSat(fc.Flush.Total, next.Flush.Total)
	fc.Flush.Seconds = addCounts(fc.Flush.Seconds, next.Flush.Seconds)
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
		ic.Losses = append(ic.Losses, l)
	}
	ic.Connects = append(ic.Connects, next.Connects...)
	for _, d := range next.ConnDevs {
		ic.ConnDevs = append(ic.ConnDevs, d+ic.Devices)
	}
	for d, id := range next.Names {
		if ic.Names == nil {
			ic.Names = map[int32]string{}
		}
		ic.Names[d+ic.Devices] = id
	}
	ic.Devices += next.Devices
	ic.Known += next.Known
}

func (r *auditGap) merge(next Rule) {
	n := next.(*auditGap)
	if n.Seen && (!r.Seen || n.First < r.First) {
		r.First, r.Seen = n.First, true
	}
}

func (r *backlog) merge(next Rule) {
	n := next.(*backlog)
	for _, f := range n.Flushes {
		f.Dev += r.Devices
		r.Flushes = append(r.Flushes, f)
	}
	r.Losses = append(r.Losses, n.Losses...)
	r.Devices += n.Devices
}

func (r *clientIDChurn) merge(next Rule) {
	n := next.(*clientIDChurn)
	if r.Hosts == nil {
		r.Hosts = map[string][]churnID{}
	}
	for host, ids := range n.Hosts {
		r.Hosts[host] = append(r.Hosts[host], ids...)
	}
}

func (r *budgetRule) merge(next Rule) {
	n := next.(*budgetRule)
	if !r.Ready {
		*r = *n
		return
	}
	r.Hist.merge(n.Hist)
}

func (r *capacityRule) merge(next Rule) {
	n := next.(*capacityRule)
	if !r.Ready {
		*r = *n
		return
	}
	r.Starts.merge(n.Starts)
}

// merge adds the counts of next, a histogram of the same resolution, and
// its samples while a chunk has room for them.
func (h *timeHist) merge(next *timeHist) {
	if h == nil || next == nil {
		return
	}
	if h.Chunks == nil {
		h.Chunks = map[int64]*histChunk{}
	}
	for key, nc := range next.Chunks {
		ch := h.Chunks[key]
		if ch == nil {
			h.Chunks[key] = nc
			continue
		}
		for i, n := range nc.N {
			ch.N[i] += n
		}
		room := max(histSamples-len(ch.Samples), 0)
		ch.Samples = append(ch.Samples, nc.Samples[:min(room, len(nc.Samples))]...)
	}
}

func (r *reconnectWhileConnected) merge(next Rule) {
	r.Devs = append(r.Devs, next.(*reconnectWhileConnected).Devs...)
}

func (r *recoveryStorm) merge(next Rule) {
	r.Losses = append(r.Losses, next.(*recoveryStorm).Losses...)
}

func (r *resync) merge(next Rule) {
	n := next.(*resync)
	base := int32(len(r.Names))
	r.Names = append(r.Names, n.Names...)
	for a := range r.FireDevices {
		r.FireDevices[a] += n.FireDevices[a]
	}
	for a := range n.Fires {
		for _, f := range n.Fires[a] {
			f.Dev += base
			r.Fires[a] = append(r.Fires[a], f)
		}
	}
}

func (r *silentGiveUp) merge(next Rule) {
	r.Quiet = append(r.Quiet, next.(*silentGiveUp).Quiet...)
}

func (r *spacingRule) merge(next Rule) {
	n := next.(*spacingRule)
	if !r.Ready {
		r.Ready, r.Spacing, r.Hosts = n.Ready, n.Spacing, n.Hosts
		return
	}
	if r.Hosts == nil {
		r.Hosts = map[string]*hostOpens{}
	}
	for name, h := range n.Hosts {
		mine := r.Hosts[name]
		if mine == nil {
			r.Hosts[name] = h
			continue
		}
		mine.Opens = append(mine.Opens, h.Opens...)
		mine.Devs = append(mine.Devs, h.Devs...)
	}
}

func (r *startupStorm) merge(next Rule) {
	r.Starts = append(r.Starts, next.(*startupStorm).Starts...)
}

func (r *starvation) merge(next Rule) {
	n := next.(*starvation)
	r.Devs = append(r.Devs, n.Devs...)
	r.Waits = append(r.Waits, n.Waits...)
}
