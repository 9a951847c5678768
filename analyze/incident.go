package analyze

import (
	"cmp"
	"slices"
	"sort"
	"time"

	"github.com/stormaudit/stormaudit/internal/radix"
)

// Incident is a loss that took many devices down together: the broker, a
// cell tower or an access point going down. It is inferred from the
// records whether or not they record disconnects (docs/rules.md,
// "Incidents").
type Incident struct {
	// LostAt is when the incident began (Unix ns): its first loss, but for
	// a silent outage the estimate of when the link died (see Basis);
	// LostAtEarliest and LostAtLatest bound it. FirstLoss and LastLoss
	// are the first and last losses counted in it.
	LostAt, LostAtEarliest, LostAtLatest int64
	FirstLoss, LastLoss                  int64
	// Basis says how LostAt was derived: BasisFirstLoss, BasisKeepalive
	// or BasisSpread.
	Basis string
	// Silent is true for a silent outage: losses noticed one by one, over
	// up to a keepalive, with none of its devices back in between; or,
	// Aligned, noticed together a keepalive after the devices last wrote
	// (their keepalive phases aligned). Its times to recover run from
	// LostAt, not from each device's own detection.
	Silent, Aligned bool
	// DevicesLost counts the devices it took down; LossInferred is true
	// when none of them recorded the loss (a disconnected record): the
	// losses are inferred from new attempts after connected records.
	DevicesLost  int
	LossInferred bool
	// FirstConnectAt is the first successful connect of any of its
	// devices after its loss (the broker's return, as the fleet saw it),
	// NoTime if none; Recovered counts its devices that connected after
	// their loss, whatever they did later.
	FirstConnectAt int64
	Recovered      int
	// RecoveredBeforeNext counts its devices that connected after their
	// loss and before the next incident's LostAt (all that recovered, for
	// the last incident): a device that came back only after the next
	// loss has a time to recover that spans both.
	RecoveredBeforeNext int
	// Corrected counts its devices whose times were corrected for their
	// clock offsets (FleetStats.ClockOffsets).
	Corrected int
	// Broker is what the broker's logs say of it; nil without them.
	Broker *IncidentBroker
	// TTR holds each recovered device's time to recover, from its own
	// loss to its first successful connect after it; TTR50 ... TTRMax
	// are its nearest-rank percentiles. Beyond ExactDurations recovered
	// devices, TTR50 ... TTR99 are estimates within DurationsAccuracy
	// (TTR.Exact is false), so that an incident's times merge from parts
	// as the fleet's do; TTRMax is exact.
	TTR                         Durations
	TTR50, TTR90, TTR99, TTRMax time.Duration
	// ConnectsPeak is the most successful connects (connected records of
	// any device) in one second [ConnectsPeakAt, +1 s) after LostAt and
	// before the next incident.
	ConnectsPeak   int
	ConnectsPeakAt int64
	// Storm is what recovery-storm weighed of the return: nil when it did
	// not run (no delay policy) or no device of the incident recovered.
	Storm *StormWeighed `json:",omitempty"`
	// FlushPeak is the most outbox messages flushed (see
	// Device.Flushes) in one whole second, FlushPeakAt its start, from
	// LostAt's second to the next incident's; 0 and NoTime when none was.
	FlushPeak   int64
	FlushPeakAt int64
	// RedeliveryPeak is the same of the messages the broker redelivered
	// (see Device.Redeliveries), RedeliveryPeakAt its start.
	RedeliveryPeak   int64
	RedeliveryPeakAt int64
	// Met is what its devices met while down, from their own records
	// (see Met), and Stages the same by stage and outcome alone; Diagnosis
	// turns them into one of the Diag kinds (see Diagnose).
	Met       []Met
	Stages    []StageOutcome
	Diagnosis string
	// Unrecovered names every device it took down that had not connected
	// again by the end of the log, with its last state, by device id.
	Unrecovered []Unrecovered
	// ServiceDevices counts its devices that record the service stage;
	// Served those of them that were served after their reconnect; TTS
	// holds their times to first useful service, from their own loss, and
	// TTS50 ... TTSMax are its percentiles (estimates beyond
	// ExactDurations, as TTR's); Unserved names those that reconnected
	// and were not served within ServiceLag (see service.go).
	ServiceDevices, Served      int
	TTS                         Durations
	TTS50, TTS90, TTS99, TTSMax time.Duration
	Unserved                    []Unserved
	// Cost is what the outage cost its devices beyond their connection,
	// by kind (CostDropped, CostExpired, CostTwice), from their own counts
	// from their loss to their next (see cost.go).
	Cost [costKinds]Cost
}

// IncidentWindow is the window losses are counted in: an incident is a
// stretch of time in which every loss begins a window of this width that
// holds at least IncidentMinDevices(n) losses.
const IncidentWindow = time.Second

// IncidentMinDevices returns how many devices must lose their connection
// within IncidentWindow for an incident, in a fleet of n devices that were
// ever connected: 10% of them, at least 3 and at most 100.
func IncidentMinDevices(n int) int {
	return max(3, min((n+9)/10, 100))
}

// lossEvent is one loss of a device, as the incident inference keeps it.
type lossEvent struct {
	At, Back int64 // the loss, and the first connect after it (NoTime if none)
	// Served is the first useful service after Back (the service stage's
	// connected record), before the device's next loss; NoTime if none.
	Served int64
	Dev    int32 // the device's ordinal in the read
	// MetAt and MetN are its tally of what the device met while down:
	// incidentCounter.Met[MetAt : MetAt+MetN].
	MetAt int32
	// Quiet is how long the device had written nothing before the loss
	// (from its previous record, of any stage), ms, saturating; -1 when
	// the loss is its first record.
	Quiet    int32
	MetN     uint16
	Explicit bool // recorded by a disconnected record
	Service  bool // the device records the service stage
}

// incidentCounter gathers the losses and connects of every device and
// finds the incidents among them. It keeps 40 bytes per loss and 16 per
// kind of record its device met while down, 12 per connect, and the last
// record of each device whose last loss did not end; it names devices by
// their ordinals, and their ids from the fleet's one list (names).
type incidentCounter struct {
	Losses   []lossEvent
	Met      []metCount  // the losses' tallies (lossEvent.MetAt)
	Last     []lastState // by device ordinal
	Connects []int64     // every connected record of the session stage
	ConnDevs []int32     // the device of each of Connects
	Devices  int32       // devices read
	Known    int         // devices known to have been connected: a session, or a loss
	// Inferred and Details are the incidents as Split.Infer found them
	// and each one's detail over this counter's devices, once the losses
	// were taken apart (Partial.TakeIncidents, PutIncidents); nil before
	Inferred *inferredSummary
	Details  []incidentDetail
	Detailed bool // PutIncidents put the details in
	// Returns are the incidents whose return some part sent a share of to
	// be judged apart (Split.JudgeStorm), Verdicts those judged and put
	// back (Partial.PutStorm)
	Returns, Verdicts []int32
	// PeakShards are the shards of connects the parts sent theirs to
	// (Split.Detail), PeaksOf those whose busiest windows, Peaks, were
	// put back (Partial.PutPeaks)
	PeakShards, PeaksOf []int64
	Peaks               []incidentPeak
	moves               []connectMove // how the rounds of corrections moved connects (shift)

	keepalive time.Duration // the declared keepalive, 0 if none: set before incidents
	moved     []movedLoss   // the losses the audit's offsets moved
	downs     []int64       // when the broker's logs say it went down, sorted: set before incidents
	// brokerKeepalive is the keepalive most of the broker's accepts
	// declare, 0 without a broker log: set before incidents
	brokerKeepalive time.Duration
	end             int64                   // the log's last record, NoTime if unknown: set before incidents
	pre             map[int32][]ClockOffset // clock offsets known before (the broker's), by device: set before incidents
	names           []string                // every device's client id, by ordinal (fleetCounter.Names): set before incidents
}

func (ic *incidentCounter) add(d *Device) {
	dev := ic.Devices
	ic.Devices++
	last := int64(NoTime)
	var lastEp *Episode
	service := d.serviceLine()
	for i := range d.Episodes {
		ep := &d.Episodes[i]
		if !ep.Loss() {
			continue
		}
		to := ep.Last
		if to < 0 {
			to = len(d.Events) - 1
		}
		if last != NoTime && ep.Lost < addSat(last, int64(IncidentWindow)) {
			// a device counts once in a window: what it met joins the loss counted
			ic.tally(d.Events, ep.First, to, &ic.Losses[len(ic.Losses)-1])
			ic.tallyCost(d.Events, ep.First, d.nextLoss(i), &ic.Losses[len(ic.Losses)-1])
			continue
		}
		last, lastEp = ep.Lost, ep
		ic.Losses = push(ic.Losses, lossEvent{At: ep.Lost, Back: ep.End, Served: d.servedAfter(service, i), Dev: dev,
			MetAt: int32(len(ic.Met)), Quiet: d.quietBefore(ep), Explicit: !ep.Inferred, Service: service != nil})
		ic.tally(d.Events, ep.First, to, &ic.Losses[len(ic.Losses)-1])
		ic.tallyCost(d.Events, ep.First, d.nextLoss(i), &ic.Losses[len(ic.Losses)-1])
	}
	if lastEp != nil {
		if ep := &d.Episodes[len(d.Episodes)-1]; ep.Loss() && ep.End == NoTime {
			ic.keepLast(d, dev, ep)
		}
	}
	for i := range d.Sessions {
		ic.Connects = push(ic.Connects, d.Sessions[i].Up)
		ic.ConnDevs = push(ic.ConnDevs, dev)
	}
	if last != NoTime || len(d.Sessions) > 0 {
		ic.Known++
	}
}

// maxCorrections bounds the rounds of clock corrections.
const maxCorrections = 16

// incidents returns the incidents, in time order, on times corrected for
// the clock offsets it finds (see offsets.go), those offsets and, when
// members is true (a broker log is there to set them against), the
// client ids of each incident's devices.
func (ic *incidentCounter) incidents(members bool) ([]Incident, []ClockOffset, []map[string]bool) {
	out, offs, spans := ic.find()
	ic.whyAndWho(out, spans, offs)
	var ids []map[string]bool
	if members {
		ids = make([]map[string]bool, len(out))
		for k, sp := range spans {
			ids[k] = map[string]bool{}
			for _, l := range ic.Losses[sp[0]:sp[1]] {
				ids[k][ic.names[l.Dev]] = true
			}
		}
	}
	ic.Losses, ic.Connects, ic.ConnDevs, ic.Met, ic.Last = nil, nil, nil, nil, nil
	return out, offs, ids
}

// find returns the incidents, in time order, with all but what their
// devices met, who never came back and their service (whyAndWho), the
// clock offsets found, and the span of ic.Losses each incident holds:
// the losses sorted by time and moved onto the fleet's clock.
func (ic *incidentCounter) find() ([]Incident, []ClockOffset, [][2]int) {
	ic.move(ic.pre)
	// the connects are sorted on another core while the losses' rounds
	// run, and again after them if a round moved any
	sorted, c := make(chan []int64, 1), slices.Clone(ic.Connects)
	go func() {
		radix.Int64s(c)
		sorted <- c
	}()
	var offs []ClockOffset
	var out []Incident
	var spans [][2]int
	var ls []lossEvent
	moved := false // a round moved losses and connects
	for round := 0; ; round++ {
		ic.Losses = byTime(ic.Losses, func(l *lossEvent) int64 { return l.At }, func(a, b lossEvent) int { return cmp.Compare(a.Dev, b.Dev) })
		ls = ic.Losses
		out, spans = ic.findIncidents(ls)
		if round == maxCorrections {
			break
		}
		found := ic.correct(out, spans)
		if len(found) == 0 {
			break
		}
		for i := range found {
			found[i].round = int32(round)
		}
		offs, moved = append(offs, found...), true
	}
	offs = ic.steps(offs, spans)
	corrected := map[int32]bool{}
	for _, o := range offs {
		corrected[o.dev] = true
	}
	for dev := range ic.pre {
		corrected[dev] = true
	}
	if c := <-sorted; !moved {
		ic.Connects = c
	} else {
		radix.Int64s(ic.Connects)
	}
	for k := range out {
		next := int64(NoTime)
		if k+1 < len(out) {
			next = out[k+1].LostAt
		}
		out[k].RecoveredBeforeNext = recoveredBefore(ls[spans[k][0]:spans[k][1]], next)
		out[k].Corrected = countCorrected(ls[spans[k][0]:spans[k][1]], corrected)
		out[k].ConnectsPeak, out[k].ConnectsPeakAt = peakPerWindow(ic.Connects, out[k].LostAt, next, int64(time.Second))
	}
	return out, offs, spans
}

// findIncidents returns the incidents among the losses ls, sorted by
// time, and the span of ls each holds: the tight ones (IncidentWindow),
// and the silent outages (silent.go) that replace the tight ones they
// hold.
func (ic *incidentCounter) findIncidents(ls []lossEvent) ([]Incident, [][2]int) {
	need := IncidentMinDevices(ic.Known)
	spans := chainLosses(ls, need, int64(IncidentWindow))
	spans, silent := ic.silentOutages(ls, need, spans)
	out := make([]Incident, len(spans))
	for k, sp := range spans {
		out[k] = newIncident(ls[sp[0]:sp[1]])
		switch {
		case silent[k]:
			ic.silentEstimate(&out[k], ls[sp[0]:sp[1]])
		case ic.alignedSilent(ls[sp[0]:sp[1]]):
			ic.alignedEstimate(&out[k], ls[sp[0]:sp[1]])
		}
	}
	return out, spans
}

// chainLosses returns the spans of ls (sorted by time) in which every
// loss begins a window of width w that holds at least need losses,
// overlapping windows chained into one span.
func chainLosses(ls []lossEvent, need int, w int64) [][2]int {
	var spans [][2]int
	lo, hi, until := -1, -1, int64(0)
	for i, j := 0, 0; i < len(ls); i++ {
		for j < len(ls) && ls[j].At < addSat(ls[i].At, w) {
			j++
		}
		if j-i < need {
			continue
		}
		if lo >= 0 && ls[i].At < until {
			hi = max(hi, j)
		} else {
			if lo >= 0 {
				spans = append(spans, [2]int{lo, hi})
			}
			lo, hi = i, j
		}
		until = addSat(ls[i].At, w)
	}
	if lo >= 0 {
		spans = append(spans, [2]int{lo, hi})
	}
	return spans
}

// newIncident sums up the losses of one incident, each device once.
func newIncident(ls []lossEvent) Incident {
	first := ls[0].At
	inc := Incident{LostAt: first, FirstLoss: first, LostAtEarliest: first, LostAtLatest: first, Basis: BasisFirstLoss,
		LastLoss: ls[len(ls)-1].At, LossInferred: true, FirstConnectAt: NoTime, ConnectsPeakAt: NoTime, FlushPeakAt: NoTime,
		RedeliveryPeakAt: NoTime}
	seen := newDevSet(ls)
	for _, l := range ls {
		if !seen.add(l.Dev) {
			continue
		}
		inc.DevicesLost++
		inc.LossInferred = inc.LossInferred && !l.Explicit
		if l.Back == NoTime {
			continue
		}
		inc.Recovered++
		inc.TTR.Add(time.Duration(l.Back - l.At))
		if inc.FirstConnectAt == NoTime || l.Back < inc.FirstConnectAt {
			inc.FirstConnectAt = l.Back
		}
	}
	inc.percentiles()
	return inc
}

// percentiles sorts the times to recover of inc and takes their
// percentiles.
func (inc *Incident) percentiles() {
	inc.TTR.Sort()
	inc.TTR50, inc.TTR90, inc.TTR99, inc.TTRMax = inc.TTR.Rank(0.5), inc.TTR.Rank(0.9), inc.TTR.Rank(0.99), inc.TTR.Rank(1)
}

// countCorrected counts the devices of losses ls in corrected, each once.
func countCorrected(ls []lossEvent, corrected map[int32]bool) int {
	if len(corrected) == 0 {
		return 0
	}
	seen, n := newDevSet(ls), 0
	for _, l := range ls {
		if corrected[l.Dev] && seen.add(l.Dev) {
			n++
		}
	}
	return n
}

// recoveredBefore counts the devices of losses ls that connected before
// next (NoTime: at all), each device once.
func recoveredBefore(ls []lossEvent, next int64) int {
	seen := newDevSet(ls)
	n := 0
	for _, l := range ls {
		if !seen.add(l.Dev) {
			continue
		}
		if l.Back != NoTime && (next == NoTime || l.Back < next) {
			n++
		}
	}
	return n
}

// peakPerWindow returns the most of the sorted times ts in one window
// [t, t+w) with from <= t < to (to NoTime: no end), and the window's
// start t, which is one of ts; (0, NoTime) if none lies there.
func peakPerWindow(ts []int64, from, to, w int64) (int, int64) {
	i := sort.Search(len(ts), func(k int) bool { return ts[k] >= from })
	best, at := 0, int64(NoTime)
	for j := i; i < len(ts) && (to == NoTime || ts[i] < to); i++ {
		for j < len(ts) && ts[j] < addSat(ts[i], w) {
			j++
		}
		if j-i > best {
			best, at = j-i, ts[i]
		}
	}
	return best, at
}

// devSet is a set of device ordinals, as bits: what the finishing step
// counts each device of an incident once with (a map of them cost a
// tenth of a check of a fleet with many incidents).
type devSet []uint64

// newDevSet returns an empty set that holds the devices of ls.
func newDevSet(ls []lossEvent) devSet {
	top := int32(0)
	for _, l := range ls {
		top = max(top, l.Dev)
	}
	return make(devSet, top/64+1)
}

// add adds d, and reports whether it was not in the set.
func (s devSet) add(d int32) bool {
	w, b := d/64, uint64(1)<<(d%64)
	if s[w]&b != 0 {
		return false
	}
	s[w] |= b
	return true
}
