package analyze

import (
	"math"
	"slices"
	"time"
)

// The ways an incident's LostAt is derived (Incident.Basis).
const (
	// BasisFirstLoss: LostAt is the incident's first loss, as the devices
	// recorded or inferred it (a reset reaches every device at once).
	BasisFirstLoss = "first loss"
	// BasisKeepalive: a silent outage dated from the declared keepalive K.
	// A client notices a dead link when a ping goes unanswered, between
	// 0 and 2K after the link died, and up to its network loop's period
	// later (DetectSlack), so the link died in
	// [last detection - 2K - DetectSlack, first detection]; LostAt is the
	// middle.
	BasisKeepalive = "keepalive"
	// BasisSpread: a silent outage with no keepalive declared, dated as
	// under BasisKeepalive with K taken to be the spread of the
	// detections (first to last): [first - spread - DetectSlack, first],
	// and its middle.
	BasisSpread = "spread of the detections"
)

// DetectSlack is how much later than two keepalives a client may notice
// a dead link: its network loop runs every so often (paho 1.6 in the
// corpus: 55 ms past 2K).
const DetectSlack = time.Second

// DefaultDetectSpread is how far apart the detections of one silent
// outage may lie when no keepalive is declared: two keepalives of 60 s,
// the common default.
const DefaultDetectSpread = 2 * time.Minute

// AlignedShare is the share of a tight incident's devices that must have
// written nothing for a keepalive before their loss for it to be a
// silent outage with aligned keepalive phases.
const AlignedShare = 0.9

// quietBefore returns how long d had written nothing before the loss ep
// (its previous record, of any stage, in device order), ms, saturating;
// -1 when ep begins with its first record.
func (d *Device) quietBefore(ep *Episode) int32 {
	if ep.First <= 0 || ep.First > len(d.Events) {
		return -1
	}
	gap := (ep.Lost - d.Events[ep.First-1].At) / int64(time.Millisecond)
	return int32(max(0, min(gap, math.MaxInt32)))
}

// alignedSilent reports whether the tight incident of losses ls is a
// silent outage whose devices' keepalive phases were aligned (they last
// talked to the broker within a second of each other, after a restart or
// a boot): with a declared keepalive K, at least AlignedShare of its
// devices had written nothing for K (less DetectSlack) when they noticed
// the loss, as a device that notices by an unanswered ping has, and no
// broker log says the broker went down in the 2K before the first loss
// (a reset reaches every device at once, whatever its phase).
func (ic *incidentCounter) alignedSilent(ls []lossEvent) bool {
	k := int64(ic.alignedKeepalive())
	if k <= 0 {
		return false
	}
	first := ls[0].At
	i, _ := slices.BinarySearch(ic.downs, first-2*k-int64(DetectSlack))
	if i < len(ic.downs) && ic.downs[i] <= first+int64(IncidentWindow) {
		return false
	}
	seen := newDevSet(ls)
	quiet, n := 0, 0
	var lasts, ats []time.Duration
	for _, l := range ls {
		if !seen.add(l.Dev) {
			continue
		}
		n++
		if l.Quiet >= 0 && int64(l.Quiet)*int64(time.Millisecond) >= k-int64(DetectSlack) {
			quiet++
			lasts = append(lasts, time.Duration(l.At-int64(l.Quiet)*int64(time.Millisecond)))
			ats = append(ats, time.Duration(l.At))
		}
	}
	return float64(quiet) >= AlignedShare*float64(n) && spread90(lasts) <= spread90(ats)+2*DetectSlack
}

// spread90 is how far apart the middle 90% of xs lie (it sorts them).
// Devices whose keepalive phases were aligned last talked to the broker
// about as close together as they noticed the loss; a fleet that was
// merely quiet for a keepalive, its last records spread over seconds,
// and that noticed at one instant, was reset: the broker died
// (testdata/realclients/paho-py-outbox: killed 30 s after its devices
// came back over 11 s, no record between).
func spread90(xs []time.Duration) time.Duration {
	slices.Sort(xs)
	return rank(xs, 0.95) - rank(xs, 0.05)
}

// alignedKeepalive is the keepalive an aligned silent outage is judged
// by: the declared one, else the one the devices declared in their
// CONNECTs as the broker's log shows them (the most common); 0 if none.
func (ic *incidentCounter) alignedKeepalive() time.Duration {
	if ic.keepalive > 0 {
		return ic.keepalive
	}
	return ic.brokerKeepalive
}

// alignedEstimate dates the aligned silent outage inc of losses ls: each
// device noticed 1 to 2 keepalives after its last exchange with the
// broker, which came before the link died, so the link died in
// [last loss - 2K - DetectSlack, first loss - K]; LostAt is the middle.
func (ic *incidentCounter) alignedEstimate(inc *Incident, ls []lossEvent) {
	k := int64(ic.alignedKeepalive())
	ic.silentEstimate(inc, ls)
	inc.Basis = BasisKeepalive
	inc.LostAtLatest = inc.FirstLoss - k
	inc.LostAtEarliest = min(inc.LastLoss-2*k-int64(DetectSlack), inc.LostAtLatest)
	inc.LostAt = midpoint(inc.LostAtEarliest, inc.LostAtLatest)
	inc.Aligned = true
	inc.retime(ls)
}

// silentOutages finds the silent outages among the losses ls (sorted by
// time) and returns the incidents' spans: the silent outages, and the
// tight incidents (spans of chainLosses over IncidentWindow) that no
// silent outage holds; and which of them are silent.
//
// A silent outage is a chain of windows of twice the declared keepalive
// (DefaultDetectSpread without one), each beginning at a loss and holding
// at least need losses, in which the losses are spread out (the tight
// incidents it holds have fewer than half its devices, and its losses
// span more than 2 s) and the outage was common: the first tenth of its
// devices to come back came back after nine tenths of its losses.
func (ic *incidentCounter) silentOutages(ls []lossEvent, need int, tight [][2]int) ([][2]int, []bool) {
	w := int64(DefaultDetectSpread)
	if ic.keepalive > 0 {
		w = 2 * int64(ic.keepalive)
	}
	var silent [][2]int
	for _, c := range chainLosses(ls, need, w) {
		if isSilent(ls[c[0]:c[1]], tightDevices(ls, tight, c)) {
			silent = append(silent, c)
			continue
		}
		silent = append(silent, silentBetween(ls, need, w, tight, c)...)
	}
	if len(silent) == 0 {
		return tight, make([]bool, len(tight))
	}
	var spans [][2]int
	var is []bool
	for _, t := range tight {
		if !slices.ContainsFunc(silent, func(s [2]int) bool { return t[0] < s[1] && s[0] < t[1] }) {
			spans, is = append(spans, t), append(is, false)
		}
	}
	for _, s := range silent {
		k, _ := slices.BinarySearchFunc(spans, s, func(a, b [2]int) int { return a[0] - b[0] })
		spans, is = slices.Insert(spans, k, s), slices.Insert(is, k, true)
	}
	return spans, is
}

// silentBetween finds the silent outages among the losses of the chain c
// that lie between its tight incidents, when c as a whole is none: a
// silent outage followed (or preceded) within the chain's window by a
// broker's death, whose losses are tight and many, would else be taken
// for part of that death (a 60 s silent link, then a kill 30 s after it:
// testdata/realclients/paho-py-presence).
func silentBetween(ls []lossEvent, need int, w int64, tight [][2]int, c [2]int) [][2]int {
	var out [][2]int
	from := c[0]
	piece := func(to int) {
		if to-from >= need {
			for _, s := range chainLosses(ls[from:to], need, w) {
				if s := [2]int{s[0] + from, s[1] + from}; isSilent(ls[s[0]:s[1]], 0) {
					out = append(out, s)
				}
			}
		}
	}
	for _, t := range tight {
		if t[0] >= c[0] && t[1] <= c[1] {
			piece(t[0])
			from = t[1]
		}
	}
	piece(c[1])
	return out
}

// tightDevices counts the devices of the tight spans inside c.
func tightDevices(ls []lossEvent, tight [][2]int, c [2]int) int {
	n := 0
	for _, t := range tight {
		if t[0] >= c[0] && t[1] <= c[1] {
			n += countDevices(ls[t[0]:t[1]])
		}
	}
	return n
}

// countDevices counts the devices of the losses ls.
func countDevices(ls []lossEvent) int {
	seen, n := newDevSet(ls), 0
	for _, l := range ls {
		if seen.add(l.Dev) {
			n++
		}
	}
	return n
}

// isSilent reports whether the losses ls (sorted by time), of which tight
// devices lie in tight incidents, are a silent outage (see
// silentOutages).
func isSilent(ls []lossEvent, tight int) bool {
	devices := countDevices(ls)
	if 2*tight >= devices || ls[len(ls)-1].At-ls[0].At <= 2*int64(IncidentWindow) {
		return false
	}
	losses, backs := make([]time.Duration, 0, devices), make([]time.Duration, 0, devices)
	seen := newDevSet(ls)
	for _, l := range ls {
		if !seen.add(l.Dev) {
			continue // each device once, by its first loss
		}
		back := time.Duration(1<<63 - 1)
		if l.Back != NoTime {
			back = time.Duration(l.Back)
		}
		losses, backs = append(losses, time.Duration(l.At)), append(backs, back)
	}
	slices.Sort(losses)
	slices.Sort(backs)
	return rank(backs, 0.1) >= rank(losses, 0.9)
}

// silentEstimate dates a silent outage inc of losses ls (see the Basis
// constants) and measures its times to recover from that date.
func (ic *incidentCounter) silentEstimate(inc *Incident, ls []lossEvent) {
	inc.Silent = true
	first, last := inc.FirstLoss, inc.LastLoss
	if ic.keepalive > 0 {
		inc.LostAtEarliest, inc.Basis = last-2*int64(ic.keepalive)-int64(DetectSlack), BasisKeepalive
	} else {
		inc.LostAtEarliest, inc.Basis = first-(last-first)-int64(DetectSlack), BasisSpread
	}
	inc.LostAtLatest = first
	inc.LostAtEarliest = min(inc.LostAtEarliest, first)
	inc.LostAt = midpoint(inc.LostAtEarliest, inc.LostAtLatest)
	inc.retime(ls)
}

// retime measures a silent outage's times to recover from its LostAt.
func (inc *Incident) retime(ls []lossEvent) {
	inc.TTR = Durations{}
	seen := newDevSet(ls)
	for _, l := range ls {
		if !seen.add(l.Dev) || l.Back == NoTime {
			continue
		}
		inc.TTR.Add(time.Duration(l.Back - inc.LostAt))
	}
	inc.percentiles()
}

// midpoint returns the middle of the estimate [lo, hi], said no finer than
// the estimate resolves: to the millisecond when it spans more, else to
// the microsecond (the middle of two microsecond stamps is not a time any
// input wrote to seven decimals).
func midpoint(lo, hi int64) int64 {
	m := lo + (hi-lo)/2
	unit := int64(time.Microsecond)
	if hi-lo >= int64(2*time.Millisecond) {
		unit = int64(time.Millisecond)
	}
	return m - ((m%unit)+unit)%unit
}
