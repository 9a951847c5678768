package analyze

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
)

const reconnectWhileConnectedID = "reconnect-while-connected"

// reconnectWhileConnected flags attempts that begin while the session is
// up: a backoff_wait after a connected record with no record between that
// ends the session, unless an incident explains it. Incidents are known
// only once every device is read, so Device keeps each occurrence and
// Finish decides.
type reconnectWhileConnected struct {
	Devs  []churnDevice
	flaps flappingRule
	occ   []churnOcc // scratch: a device's occurrences, copied once if it has any
}

func (r *reconnectWhileConnected) merge(next Rule) {
	r.Devs = append(r.Devs, next.(*reconnectWhileConnected).Devs...)
}

// flappingRule is the flapping detection findings are compared with:
// flappingMax in flappingWindow, banned for flappingBan, unless set.
type flappingRule struct {
	max    int
	window int64 // ns
	ban    time.Duration
}

func (r *reconnectWhileConnected) Thresholds() []Threshold {
	return []Threshold{
		{Name: "flapping_max", Default: flappingMax, Min: 1, Max: 1e6, Integer: true, Help: "CONNECTs of one client id within flapping_window_s that a broker bans (EMQX: 15)"},
		{Name: "flapping_window_s", Default: float64(flappingWindow) / 1e9, Min: 1, Max: 86400, Help: "the window those CONNECTs are counted in (EMQX: 1 minute)"},
		{Name: "flapping_ban_s", Default: flappingBan.Seconds(), Min: 0, Max: 7 * 86400, Help: "how long such a broker bans the client id (EMQX: 5 minutes)"},
	}
}

func (r *reconnectWhileConnected) SetThreshold(name string, v float64) {
	switch name {
	case "flapping_max":
		r.flaps.max = int(v)
	case "flapping_window_s":
		r.flaps.window = int64(seconds(v))
	case "flapping_ban_s":
		r.flaps.ban = seconds(v)
	}
}

// churnDevice is a device with new attempts while its session was up,
// and the most CONNECTs it sent in one flapping window.
type churnDevice struct {
	ID    string
	Occ   []churnOcc
	Flaps flapping
	// Host is its host_id ("" for none) and Connects the times of its
	// CONNECTs, for a broker that counts them by source address
	Host     string
	Connects []int64
}

// EMQX's flapping detection, on by default in many deployments' configs
// and the threshold operators know: a client id that sends flappingMax
// CONNECTs within flappingWindow is banned for flappingBan.
const (
	flappingMax    = 15
	flappingWindow = int64(time.Minute)
	flappingBan    = 5 * time.Minute
)

// flapping is the most CONNECTs (connected and refused records: the
// CONNECT packets a broker answered) of a device within flappingWindow,
// where that window began, and when the flappingMax-th of a window was
// sent (NoTime if never): when EMQX would have banned the client id.
type flapping struct {
	Peak        int
	PeakAt, Ban int64
}

// connectsOf returns the times of d's CONNECTs, sorted.
func connectsOf(d *Device) []int64 {
	var at []int64
	for i := range d.Events {
		if o := d.Events[i].Outcome; o == auditfmt.Connected || o == auditfmt.Refused {
			at = append(at, d.Events[i].At)
		}
	}
	slices.Sort(at)
	return at
}

// flapsOf measures CONNECTs at the sorted times at against the flapping
// threshold.
func (fr flappingRule) flapsOf(at []int64) flapping {
	fl := flapping{PeakAt: NoTime, Ban: NoTime}
	lo := 0
	for hi := range at {
		for at[hi]-at[lo] >= fr.window {
			lo++
		}
		if n := hi - lo + 1; n > fl.Peak {
			fl.Peak, fl.PeakAt = n, at[lo]
		}
		if hi-lo+1 >= fr.max && fl.Ban == NoTime {
			fl.Ban = at[hi]
		}
	}
	return fl
}

// churnOcc is one new attempt while the session was up: the connected
// record of the session and the backoff_wait that began the attempt.
type churnOcc struct {
	ConnAt, At   int64
	Attempt      int64
	Delay        float64
	ConnRef, Ref Ref
}

func (r *reconnectWhileConnected) Info() RuleInfo {
	return RuleInfo{ID: reconnectWhileConnectedID, Severity: Warning, Title: "new attempt while the session is up",
		Help: "After a connected record the device backs off and connects again with no disconnected, attempt_failed or refused " +
			"record between, at a time no incident explains (many devices losing the connection together): reconnect churn, " +
			"two reconnect loops owning one client, or a stale callback; if the session really was lost, the record of it is missing."}
}

func (r *reconnectWhileConnected) Device(_ *Context, d *Device) {
	var cd churnDevice
	occ := r.occ[:0]
	up := -1 // index of the connected record of the session that is up
	for i := range d.Events {
		e := &d.Events[i]
		if !isSessionStage(e.Stage) {
			continue // the MQTT session's: a link, address or service record is no reconnect
		}
		switch e.Outcome {
		case auditfmt.Connected:
			up = i
		case auditfmt.Disconnected, auditfmt.AttemptFailed, auditfmt.Refused, auditfmt.GaveUp, auditfmt.Stopped:
			up = -1
		case auditfmt.BackoffWait:
			if up >= 0 {
				c := &d.Events[up]
				occ = append(occ, churnOcc{ConnAt: c.At, At: e.At, Attempt: e.Attempt, Delay: e.Delay, ConnRef: c.Ref, Ref: e.Ref})
			}
			up = -1
		}
	}
	r.occ = occ
	if len(occ) > 0 {
		cd.Occ = slices.Clone(occ)
		cd.Connects = connectsOf(d)
		cd.ID, cd.Flaps = strings.Clone(d.ID), r.flaps.flapsOf(cd.Connects)
		if d.Host != "" && d.Hosts == 1 {
			cd.Host = strings.Clone(d.Host)
		} else {
			cd.Connects = nil // counted by client id only
		}
		r.Devs = append(r.Devs, cd)
	}
}

func (r *reconnectWhileConnected) Finish(c *Context) {
	incs, ix := c.Fleet.Incidents, c.Fleet.clocks()
	for _, cd := range r.Devs {
		kept := slices.DeleteFunc(slices.Clone(cd.Occ), func(o churnOcc) bool { return inIncident(incs, o.At-ix.name(cd.ID, o.At)) })
		if len(kept) > 0 {
			c.Report(r.finding(cd.ID, kept, len(cd.Occ)-len(kept), cd.Flaps))
		}
	}
	r.hostFlapping(c)
	r.Devs = nil
}

// hostFlapping reports the hosts whose churning devices, together, sent
// enough CONNECTs for a broker that counts them by source address (EMQX's
// flapping detection can key on it, as on the client id or the user
// name) to ban the host, when none of its devices alone reached it.
func (r *reconnectWhileConnected) hostFlapping(c *Context) {
	byHost := map[string][]*churnDevice{}
	for i := range r.Devs {
		if cd := &r.Devs[i]; cd.Host != "" {
			byHost[cd.Host] = append(byHost[cd.Host], cd)
		}
	}
	for _, host := range slices.Sorted(maps.Keys(byHost)) {
		devs := byHost[host]
		if len(devs) < 2 || slices.ContainsFunc(devs, func(cd *churnDevice) bool { return cd.Flaps.Ban != NoTime }) {
			continue // one device: its own finding says it
		}
		var at []int64
		var refs []Ref
		for _, cd := range devs {
			at = append(at, cd.Connects...)
			if len(refs) < MaxRefs {
				refs = append(refs, cd.Occ[0].ConnRef, cd.Occ[0].Ref)
			}
		}
		slices.Sort(at)
		fl := r.flaps.flapsOf(at)
		if fl.Ban == NoTime {
			continue
		}
		window := spanText(time.Duration(r.flaps.window))
		c.Report(Finding{Rule: reconnectWhileConnectedID, Kind: "reconnect-while-connected/host-flapping", Severity: Warning, Device: Fleet,
			Start: fl.PeakAt, End: fl.Ban, Records: refs[:min(len(refs), MaxRefs)],
			Message: fmt.Sprintf("host %s: its %d churning devices sent %d CONNECTs in %s together: a broker banning flapping by source address would have banned the host",
				host, len(devs), fl.Peak, window),
			Explanation: fmt.Sprintf("%d devices with host_id %s began new attempts while their sessions were up (each below the flapping threshold on its own). "+
				"Counted together, as a broker that keys its flapping detection on the source address (EMQX's flapping_detect can; a NAT gateway or a "+
				"multi-client device is one address) counts them, their CONNECTs peaked at %d in the %s from %s; at %d within %s, such a broker would have "+
				"banned the host at %s, refusing every client behind it until %s.",
				len(devs), host, fl.Peak, window, fmtTime(fl.PeakAt), r.flaps.max, window, fmtTime(fl.Ban), fmtTime(fl.Ban+int64(r.flaps.ban)))})
	}
}

// inIncident reports whether a loss at t is one of an incident's (incs
// are in time order).
func inIncident(incs []Incident, t int64) bool {
	k := sort.Search(len(incs), func(k int) bool { return incs[k].LastLoss >= t })
	return k < len(incs) && t >= incs[k].LostAt
}

func (r *reconnectWhileConnected) finding(id string, occ []churnOcc, explained int, fl flapping) Finding {
	var t tally
	for _, o := range occ {
		t.add(o.At, o.Ref, o.ConnRef)
		t.span(o.ConnAt)
	}
	first := occ[0]
	f := t.finding(reconnectWhileConnectedID, Warning, &Device{ID: id})
	f.Kind = "reconnect-while-connected/attempt-while-up" // the flapping ban, when there was one, is said of the same finding
	window := spanText(time.Duration(r.flaps.window))
	f.Message = fmt.Sprintf("began %s while its session was up; at most %d CONNECTs in %s", countNoun(len(occ), "new attempt", "new attempts"), fl.Peak, window)
	if fl.Ban != NoTime {
		emqx := ""
		if r.flaps == (flappingRule{max: flappingMax, window: flappingWindow, ban: flappingBan}) {
			emqx = ", EMQX's default"
		}
		f.Message += fmt.Sprintf(": a broker banning flapping clients (%d in %s%s) would have banned it", r.flaps.max, window, emqx)
	}
	f.Explanation = fmt.Sprintf("%s connected at %s and wrote backoff_wait (attempt %d, %s s) at %s, %s s later, "+
		"with no disconnected, attempt_failed or refused record between, and no incident (many devices losing the connection together) "+
		"at that time: either the session was lost and its record is missing, or a second reconnect loop owns the client. It happened %s in all.",
		id, fmtTime(first.ConnAt), first.Attempt, fmtSeconds(first.Delay), fmtTime(first.At), fmtSeconds(float64(first.At-first.ConnAt)/1e9),
		countNoun(len(occ), "time", "times"))
	if explained > 0 {
		f.Explanation += fmt.Sprintf(" %s at an incident's loss %s not counted: the incident explains them.",
			countNoun(explained, "Another new attempt", "Other new attempts"), countNoun(explained, "is", "are"))
	}
	f.Explanation += r.flaps.text(id, fl)
	return f
}

// text says how the device's CONNECTs compare with the flapping
// detection.
func (fr flappingRule) text(id string, fl flapping) string {
	rule := fmt.Sprintf("flapping detection set to ban a client id that sends %d within %s, for %s", fr.max, spanText(time.Duration(fr.window)), spanText(fr.ban))
	if fr == (flappingRule{max: flappingMax, window: flappingWindow, ban: flappingBan}) {
		rule = fmt.Sprintf("EMQX's flapping detection, enabled with its defaults, bans a client id that sends %d within %s, for %s",
			fr.max, spanText(time.Duration(fr.window)), spanText(fr.ban))
	}
	s := fmt.Sprintf(" Its CONNECTs (connected and refused records) peaked at %d in the %s from %s; %s", fl.Peak, spanText(time.Duration(fr.window)), fmtTime(fl.PeakAt), rule)
	if fl.Ban == NoTime {
		return s + ": it stayed below."
	}
	return s + fmt.Sprintf(": such a broker would have banned %s at %s, refusing it until %s.", id, fmtTime(fl.Ban), fmtTime(fl.Ban+int64(fr.ban)))
}
