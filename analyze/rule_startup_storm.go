package analyze

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

const startupStormID = "startup-storm"

// StartupGap is how far apart two devices' starts may begin and still be
// one cold boot: devices that come up on shared power start within
// seconds of each other, and a fleet whose starts spread is one boot as
// long as no such gap opens.
const StartupGap = 10 * time.Second

// DefaultStartupSpread is the startup spread a boot is judged against
// when the policy declares none (threshold default_spread_s of
// [rules.startup-storm]): the field guides ask devices to spread their
// first connects, and a fleet that opens them all within a second is a
// storm whether or not its broker coped.
const DefaultStartupSpread = 5 * time.Second

// startupStorm flags cold boots whose first socket-opens bunch beyond a
// uniform spread: over the declared startup_spread_s, or without one,
// over the default spread or the time the boot took to bring its devices
// up, whichever is longer. Device keeps each start; Finish groups them
// into boots and judges each.
type startupStorm struct {
	Starts        []fleetStart
	Devices       int32   // devices seen
	defaultSpread float64 // s
}

func (r *startupStorm) merge(next Rule) {
	n := next.(*startupStorm)
	for _, s := range n.Starts {
		s.Dev += r.Devices
		r.Starts = append(r.Starts, s)
	}
	r.Devices += n.Devices
}

func (r *startupStorm) Thresholds() []Threshold {
	return []Threshold{{Name: "default_spread_s", Default: DefaultStartupSpread.Seconds(), Min: 0, Max: 86400,
		Help: "the startup spread a boot is judged against when the policy declares no startup_spread_s"}}
}

func (r *startupStorm) SetThreshold(name string, v float64) {
	if name == "default_spread_s" {
		r.defaultSpread = v
	}
}

// fleetStart is one start of a device: when its first record was written
// (the boot), its first socket-open, and its first connect (NoTime if
// none).
type fleetStart struct {
	Boot, Open, Conn int64
	Ref              Ref   // the record of the open: its backoff_wait, or the connected record
	Dev              int32 // the device's ordinal in the read (its clock offset's key)
}

func (*startupStorm) Info() RuleInfo {
	return RuleInfo{ID: startupStormID, Severity: Warning, Uses: []string{"startup_spread_s"}, Title: "devices starting together do not spread their first connects",
		Help: "Devices that start together (a cold boot: shared power coming back) open their first sockets in one second far more " +
			"often than a uniform spread allows: over the policy's startup_spread_s when declared, else over the time the boot took. " +
			"A start needs a spread just as a recovery does, or the broker meets the whole fleet at once."}
}

func (r *startupStorm) Device(_ *Context, d *Device) {
	dev := r.Devices
	r.Devices++
	k := 0
	for i := range d.Episodes {
		ep := &d.Episodes[i]
		if !ep.Starting {
			continue
		}
		s := fleetStart{Boot: ep.Start, Open: NoTime, Conn: ep.End, Dev: dev}
		for ; k < len(d.Attempts) && (ep.Last < 0 || d.Attempts[k].Backoff < ep.Last); k++ {
			if a := &d.Attempts[k]; a.Backoff >= ep.First && isSessionStage(a.Stage) && s.Open == NoTime {
				s.Open, s.Ref = a.Open, d.Events[a.Backoff].Ref
			}
		}
		if s.Open == NoTime && ep.Last >= 0 {
			s.Open, s.Ref = ep.End, d.Events[ep.Last].Ref // a connect no recorded attempt began
		}
		if s.Open != NoTime {
			r.Starts = append(r.Starts, s)
		}
	}
}

func (r *startupStorm) Finish(c *Context) {
	// a declared spread of 0 promises none: judged as undeclared
	spread, declared := 0.0, c.Policy != nil && !c.Inferred && c.Policy.Declared("startup_spread_s") && c.Policy.StartupSpreadS > 0
	if declared {
		spread = c.Policy.StartupSpreadS
	}
	if ix := c.Fleet.clocks(); ix.byDev != nil { // on the fleet's clock
		for i := range r.Starts {
			if o := ix.dev(r.Starts[i].Dev, r.Starts[i].Boot); o != 0 {
				s := &r.Starts[i]
				s.Boot, s.Open = s.Boot-o, s.Open-o
				if s.Conn != NoTime {
					s.Conn -= o
				}
			}
		}
	}
	slices.SortFunc(r.Starts, func(a, b fleetStart) int { return cmp.Or(cmp.Compare(a.Boot, b.Boot), compareLines(a.Ref, b.Ref)) })
	for lo := 0; lo < len(r.Starts); {
		hi := lo + 1
		for hi < len(r.Starts) && r.Starts[hi].Boot-r.Starts[hi-1].Boot <= int64(StartupGap) {
			hi++
		}
		if b, ok := judgeBoot(r.Starts[lo:hi], spread, declared, r.defaultSpread); ok {
			c.Report(b.finding(declared, r.defaultSpread))
		}
		lo = hi
	}
	r.Starts = nil
}

// boot is what judgeBoot found of one cold boot.
type boot struct {
	devices    int
	first      int64   // the first start's boot
	up         int64   // the last first connect (or socket-open) of the boot
	spread     float64 // the spread judged against, s
	observed   int     // the most first socket-opens in one StormWindow
	at         int64
	expected   float64 // a uniform spread's count per StormWindow
	windows    int
	tail       float64
	refs       []Ref
	notUpCount int // starts that never connected
}

// judgeBoot judges the starts of one boot against a uniform spread of
// their first socket-opens over spread seconds (declared), or over the
// longer of byDefault seconds and the boot's own span from its first
// start to its last first connect.
func judgeBoot(ss []fleetStart, spread float64, declared bool, byDefault float64) (boot, bool) {
	b := boot{devices: len(ss), first: ss[0].Boot, up: math.MinInt64}
	if len(ss) < StormMin {
		return b, false
	}
	opens := make([]int64, len(ss))
	for i := range ss {
		opens[i] = ss[i].Open
		up := ss[i].Conn
		if up == NoTime {
			up, b.notUpCount = ss[i].Open, b.notUpCount+1
		}
		b.up = max(b.up, up)
	}
	slices.Sort(opens)
	w := int64(StormWindow)
	b.observed, b.at = peakPerWindow(opens, math.MinInt64+1, NoTime, w)
	b.spread = spread
	if !declared {
		b.spread = max(float64(b.up-b.first)/1e9, byDefault)
	}
	span := max(b.spread, StormWindow.Seconds())
	b.expected = min(float64(len(ss)), float64(len(ss))*StormWindow.Seconds()/span)
	b.windows = int(min(math.Ceil(span/StormWindow.Seconds()), 1<<31)) // span >= 1 window
	b.tail = poissonTail(b.expected, b.observed) * float64(b.windows)
	if b.observed < StormMin || float64(b.observed) <= StormFactor*b.expected || b.tail >= StormTail {
		return b, false
	}
	for i := range ss {
		if ss[i].Open >= b.at && ss[i].Open < b.at+w && len(b.refs) < MaxRefs {
			b.refs = append(b.refs, ss[i].Ref)
		}
	}
	return b, true
}

func (b boot) finding(declared bool, byDefault float64) Finding {
	f := Finding{Rule: startupStormID, Kind: "startup-storm/bunched-first-opens", Severity: Warning, Device: Fleet, Start: b.at, End: b.at + int64(StormWindow), Records: b.refs}
	over := fmt.Sprintf("the policy's startup_spread_s of %s s", fmtSeconds(b.spread))
	if !declared {
		// one rule, said the same way whichever side is longer
		over = fmt.Sprintf("%s s, the longer of the default startup spread (%s s; [rules.startup-storm] default_spread_s sets it) "+
			"and the %s s the boot took to bring its devices up (from its first start to its last first connect), as the policy "+
			"declares no startup_spread_s (declare it to judge against the spread the fleet promises)",
			fmtSeconds(b.spread), fmtSeconds(byDefault), fmtSeconds(float64(b.up-b.first)/1e9))
	}
	notUp := "all of them connected"
	if b.notUpCount > 0 {
		notUp = fmt.Sprintf("%d of them never connected", b.notUpCount)
	}
	f.Message = fmt.Sprintf("%d of %d devices starting together opened their first socket in the 1s from %s; a uniform spread puts %.1f in a second",
		b.observed, b.devices, fmtTime(b.at), b.expected)
	f.Explanation = fmt.Sprintf("%s started together from %s (each start's first record within %s of the one before: a cold boot); %s. Spread uniformly over %s, their first socket-opens would number %.2f in any 1s. Observed: %d in the 1s from %s, %.1f× that. "+
		"For a Poisson count of mean %.2f, %d or more in one of %d seconds has probability %.2g (a storm needs at least %d, over %.0f× the "+
		"uniform count, at a probability below %g). Devices that share power come up together: give their first connect a random delay "+
		"over the startup spread, as a recovery's first retry is jittered.",
		nOf(b.devices, "device"), fmtTime(b.first), StartupGap, notUp, over, b.expected, b.observed, fmtTime(b.at),
		float64(b.observed)/max(b.expected, 1e-9), b.expected, b.observed, b.windows, b.tail, StormMin, StormFactor, StormTail)
	return f
}
