package analyze

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/stormaudit/stormaudit/policy"
)

// SpacingTolerance is the slack the spacing rule allows for logging
// precision: a gap between two socket-opens of one host is flagged when
// it is below min_connect_spacing_s less SpacingTolerance. Clients log
// whole milliseconds or microseconds, and a derived socket-open adds up
// two or more logged values.
const SpacingTolerance = time.Millisecond

// spacingRule flags two socket-opens of one host closer than
// min_connect_spacing_s. A device without host_id is its own host and is
// checked as it streams by. The devices of a host with a host_id are not
// contiguous in the dataset (it is sorted by client_id), so their opens
// are kept, 32 bytes each, and checked in Finish: memory grows with the
// socket-opens of devices that write a host_id.
type spacingRule struct {
	Ready   bool
	Spacing int64 // ns; 0 when there is nothing to check
	Hosts   map[string]*hostOpens
	buf     []hostOpen
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

// hostOpens are the socket-opens of one host, and its devices in dataset
// order.
type hostOpens struct {
	Opens []hostOpen
	Devs  []hostDevice
}

// hostOpen is one socket-open and the backoff_wait record that began it.
type hostOpen struct {
	At  int64
	Ref Ref
}

// hostDevice is a device of a host and the first dataset row of its
// records: a device's rows are contiguous, so a row names its device.
type hostDevice struct {
	ID    string
	First Ref
}

func (r *spacingRule) Info() RuleInfo {
	return RuleInfo{ID: "spacing", Severity: Warning, Needs: [][]string{{"min_connect_spacing_s"}},
		Title: "socket-opens of one host closer than min_connect_spacing_s",
		Help: "Two socket-opens from one host (host_id; a device without one is its own host) closer than the " +
			"declared min_connect_spacing_s. A host that opens sockets back to back adds to the surge the broker " +
			"sees as the fleet reconnects; the spacing is what keeps a gateway's devices from reconnecting together."}
}

// init resolves the spacing once; it reports whether there is one to check.
func (r *spacingRule) init(c *Context) bool {
	if !r.Ready {
		r.Ready, r.Hosts = true, map[string]*hostOpens{}
		if s, ok := c.Param("spacing", "min_connect_spacing_s", func(p *policy.Policy) float64 { return p.MinConnectSpacingS }); ok {
			r.Spacing = nanos(s)
			if r.Spacing == 0 {
				c.Skip("spacing", "min_connect_spacing_s is 0 (no spacing promised): nothing to check")
			}
		}
	}
	return r.Spacing > 0
}

func (r *spacingRule) Device(c *Context, d *Device) {
	if !r.init(c) {
		return
	}
	if d.Host == "" {
		r.buf = appendOpens(r.buf[:0], d)
		sortOpens(r.buf)
		r.check(c, d.ID, r.buf, []hostDevice{{ID: d.ID}})
		return
	}
	h := r.Hosts[d.Host]
	if h == nil {
		h = &hostOpens{}
		r.Hosts[d.Host] = h
	}
	h.Opens = appendOpens(h.Opens, d)
	h.Devs = append(h.Devs, hostDevice{ID: d.ID, First: firstRef(d)})
}

func (r *spacingRule) Finish(c *Context) {
	for _, name := range slices.Sorted(maps.Keys(r.Hosts)) {
		h := r.Hosts[name]
		sortOpens(h.Opens)
		r.check(c, name, h.Opens, h.Devs)
		delete(r.Hosts, name)
	}
}

// spacingPair is two consecutive socket-opens of a host.
type spacingPair struct{ a, b hostOpen }

func (p spacingPair) gap() int64 { return p.b.At - p.a.At }

// check reports one finding for host if any two consecutive opens (sorted
// by time) are closer than the spacing less the tolerance.
func (r *spacingRule) check(c *Context, host string, opens []hostOpen, devs []hostDevice) {
	limit := r.Spacing - int64(SpacingTolerance)
	var v spacingViolations
	for i := 1; i < len(opens); i++ {
		if p := (spacingPair{opens[i-1], opens[i]}); p.gap() < limit {
			v.add(p)
		}
	}
	if v.n > 0 {
		c.Report(r.finding(c, host, opens, devs, &v))
	}
}

// spacingViolations sums up the pairs of a host that break the spacing.
type spacingViolations struct {
	n       int
	first   []spacingPair // the first few, for the records
	last    spacingPair
	closest spacingPair // the first of the closest
}

func (v *spacingViolations) add(p spacingPair) {
	if v.n == 0 || p.gap() < v.closest.gap() {
		v.closest = p
	}
	if len(v.first) < MaxRefs {
		v.first = append(v.first, p)
	}
	v.last = p
	v.n++
}

func (r *spacingRule) finding(c *Context, host string, opens []hostOpen, devs []hostDevice, v *spacingViolations) Finding {
	n, closest := v.n, v.closest
	who := "host " + host
	if len(devs) == 1 && devs[0].ID == host {
		who = "device " + host + " (no host_id: its own host)"
	}
	spacing := durS(r.Spacing)
	a, b := deviceOf(devs, closest.a.Ref), deviceOf(devs, closest.b.Ref)
	msg := fmt.Sprintf("%s: %d socket-open(s) less than min_connect_spacing_s %s s after the previous one; closest %s s apart (%s, %s)",
		who, n, spacing, durS(closest.gap()), a, b)
	refs := []Ref{closest.a.Ref, closest.b.Ref}
	for _, p := range v.first {
		refs = appendRef(refs, p.a.Ref)
		refs = appendRef(refs, p.b.Ref)
	}
	f := Finding{Rule: "spacing", Kind: "spacing/open-too-soon", Severity: Warning, Device: host, Start: v.first[0].a.At, End: v.last.b.At,
		Message: msg, Records: refs}
	origin, below, nOpens, nDevs, list := paramOrigin(c), r.Spacing-int64(SpacingTolerance), len(opens), len(devs), deviceList(devs, 5)
	from, to := v.first[0].a.At, v.last.b.At
	f.explainLater(func(p prose) prose {
		return p.s("min_connect_spacing_s = ", spacing, " s (", origin, "); a gap below ").durS(below).
			s(" s (the spacing less ").durS(int64(SpacingTolerance)).s(" s for logging precision) breaks it. ", upperFirst(who), " made ").
			d(int64(nOpens)).s(" socket-opens (each the backoff_wait's recorded_at + backoff_delay_s + any rate_limited_wait delays) from ").
			d(int64(nDevs)).s(" device(s) (", list, "); ").d(int64(n)).s(" followed the previous open of the host too soon, between ").
			timeNano(from).s(" and ").timeNano(to).s(". Closest: ", a, " opened at ").timeNano(closest.a.At).s(" and ", b, " at ").
			timeNano(closest.b.At).s(", ").durS(closest.gap()).s(" s apart.")
	})
	return f
}

// appendOpens appends the socket-opens of d that the log shows (see
// openInLog), each with the ref of its backoff_wait record.
func appendOpens(dst []hostOpen, d *Device) []hostOpen {
	for i := range d.Attempts {
		if a := &d.Attempts[i]; isSessionStage(a.Stage) && openInLog(d, a) { // sockets to the broker
			dst = append(dst, hostOpen{At: a.Open, Ref: d.Events[a.Backoff].Ref})
		}
	}
	return dst
}

// sortOpens sorts opens by time, ties by input line: the same however the
// dataset is stored. A device's own opens mostly come in order: they are
// only checked then.
func sortOpens(opens []hostOpen) {
	cmpOpens := func(a, b hostOpen) int {
		if c := cmp.Compare(a.At, b.At); c != 0 {
			return c // the lines compared only for ties: cmp.Or would compare them every time
		}
		return cmp.Or(compareLines(a.Ref, b.Ref), compareRefs(a.Ref, b.Ref))
	}
	if !slices.IsSortedFunc(opens, cmpOpens) {
		slices.SortFunc(opens, cmpOpens)
	}
}

// compareRefs orders refs by dataset position.
func compareRefs(a, b Ref) int {
	return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Row, b.Row))
}

// firstRef returns the ref of d's first dataset row.
func firstRef(d *Device) Ref {
	var first Ref
	for i := range d.Events {
		if i == 0 || compareRefs(d.Events[i].Ref, first) < 0 {
			first = d.Events[i].Ref
		}
	}
	return first
}

// deviceOf returns the client_id of the device whose rows hold ref: the
// last of devs (in dataset order) starting at or before it.
func deviceOf(devs []hostDevice, ref Ref) string {
	i, _ := slices.BinarySearchFunc(devs, ref, func(d hostDevice, r Ref) int {
		if compareRefs(d.First, r) <= 0 {
			return -1
		}
		return 1
	})
	return devs[max(i-1, 0)].ID
}

// deviceList names up to max devices.
func deviceList(devs []hostDevice, max int) string {
	var names []string
	for i := range min(len(devs), max) {
		names = append(names, devs[i].ID)
	}
	s := strings.Join(names, ", ")
	if len(devs) > max {
		s += fmt.Sprintf(" and %d more", len(devs)-max)
	}
	return s
}

// appendRef appends ref to refs unless it is there already or refs is full.
func appendRef(refs []Ref, ref Ref) []Ref {
	if len(refs) >= MaxRefs || slices.Contains(refs, ref) {
		return refs
	}
	return append(refs, ref)
}

// paramOrigin says where the policy values came from.
func paramOrigin(c *Context) string {
	if c.Inferred {
		return "inferred from the log"
	}
	return "declared"
}
