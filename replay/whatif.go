package replay

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/policy"
	"github.com/stormaudit/stormaudit/simulate"
)

// PlanOptions choose what Plans makes of a fleet's schedule.
type PlanOptions struct {
	// From is the instant the plans start. The zero Time: the start of
	// the schedule's first incident (its LostAt), or, with no incident,
	// its first socket-open.
	From time.Time
	// Keepalive is the devices' keepalive in seconds; a what-if policy's
	// keepalive_s overrides it.
	Keepalive uint16
	// Devices, when above 0 and below the devices with a connect, keeps a
	// random sample of that many (Plan.Sample, with Seed).
	Devices int
	// Seed seeds the sample and the what-if's draws.
	Seed uint64
	// Policy, when set, makes a what-if: the same devices under this
	// policy. Library, with Policy, adds the MQTT library's own reconnect
	// loop beside the manager (simulate.Config.Library).
	Policy, Library *policy.Policy
	// Compare, with Policy, keeps the recorded plan too: it is played
	// first, then the what-if.
	Compare bool
}

// NoOpenError is Plans' error when the schedule has no socket-open at or
// after the plans' start.
type NoOpenError struct {
	From int64 // the start, Unix ns
}

func (e *NoOpenError) Error() string {
	return "no socket-open at or after " + time.Unix(0, e.From).UTC().Format(time.RFC3339Nano)
}

// restartMargin is how much shorter than the recorded outage Plans'
// outage is: a broker restarted for it must be up, not starting, when
// the first socket-open that connected comes.
const restartMargin = 50 * time.Millisecond

// Plans makes what a replay of fs plays, in the order to play them:
//
//   - without o.Policy, the recorded plan (Recorded: every socket-open at
//     or after the start, at its offset from it);
//   - with o.Policy, the what-if alone (WhatIf: the recorded plan's
//     devices under o.Policy, and o.Library if set, for the outage below,
//     run until a minute after the recorded plan's last connect);
//   - with o.Policy and o.Compare, the recorded plan, then the what-if.
//
// Both are of the sample of o.Devices devices when o.Devices asks for
// one. The start is o.From, or the schedule's first incident's loss, or
// its first socket-open (see PlanOptions.From).
//
// It also returns the outage the plans start in: when the start is an
// incident's (an incident lost at or after o.From, or the first one) and
// a socket-open at or after the start connected, the time from the start
// to the first such open, less 50 ms (at least 1 ms), when the broker was
// back; otherwise 0. A replay takes the broker (Options.Restart) or the
// devices' link (Options.LinkDown) down for it, and an outage above 0
// means the plans start at a loss (Options.LostAtStart). The what-if's
// broker is down for the same outage.
//
// Its errors: a *NoOpenError when no socket-open comes at or after the
// start; an error when fs has no socket-open at all, when o asks for
// Compare or Library without Policy, or when the what-if cannot be
// drawn (WhatIf's).
func Plans(ctx context.Context, fs *analyze.FleetSchedule, o PlanOptions) (plans []*Plan, outage time.Duration, err error) {
	if o.Policy == nil && (o.Compare || o.Library != nil) {
		return nil, 0, errors.New("a comparison and a library loop need the what-if's policy")
	}
	if len(fs.Opens) == 0 {
		return nil, 0, errors.New("the log shows no socket-open to replay")
	}
	from, incident := planStart(fs, o.From)
	if back := fs.BackAt(from); incident && back != analyze.NoTime {
		outage = max(time.Duration(back-from)-restartMargin, time.Millisecond)
	}
	recorded := Recorded(fs, from, o.Keepalive)
	if len(recorded.Connects) == 0 {
		return nil, 0, &NoOpenError{From: from}
	}
	recorded = recorded.Sample(o.Devices, o.Seed)
	if o.Policy == nil {
		return []*Plan{recorded}, outage, nil
	}
	whatIf, err := WhatIf(ctx, recorded, WhatIfOptions{Policy: *o.Policy, Library: o.Library,
		Outage: outage, Horizon: recorded.Span() + time.Minute, Seed: o.Seed})
	if err != nil {
		return nil, 0, err
	}
	if o.Compare {
		return []*Plan{recorded, whatIf}, outage, nil
	}
	return []*Plan{whatIf}, outage, nil
}

// planStart returns the instant the plans of fs start from (see
// PlanOptions.From), Unix ns, and whether it is an incident's start.
func planStart(fs *analyze.FleetSchedule, from time.Time) (int64, bool) {
	if !from.IsZero() {
		t := from.UnixNano()
		for i := range fs.Incidents {
			if fs.Incidents[i].LostAt >= t {
				return t, true
			}
		}
		return t, false
	}
	if len(fs.Incidents) > 0 {
		return fs.Incidents[0].LostAt, true
	}
	return fs.Opens[0].At, false
}

// WhatIfOptions describe a what-if: the same devices, the same outage,
// another policy.
type WhatIfOptions struct {
	Policy  policy.Policy
	Library *policy.Policy // the library's own reconnect loop beside the manager, or nil
	// Outage is how long the broker was down from the plan's start (the
	// incident's first connect after its loss); Horizon how long the
	// what-if runs.
	Outage, Horizon time.Duration
	Seed            uint64
}

// WhatIf redraws the schedule of the devices of recorded under another
// policy, through simulate's model: they all lose the broker at the
// plan's start, it is down for the outage, and each connects when the
// model's policy (and library loop) says. Its socket-opens are the
// what-if plan; the model's device i is recorded's device i.
func WhatIf(ctx context.Context, recorded *Plan, o WhatIfOptions) (*Plan, error) {
	if len(recorded.Devices) == 0 {
		return nil, fmt.Errorf("what-if: the recorded schedule has no device")
	}
	p := &Plan{Name: "what-if (" + policyName(o.Policy) + ")", Devices: slices.Clone(recorded.Devices)}
	if o.Policy.KeepaliveS > 0 {
		for i := range p.Devices {
			p.Devices[i].Keepalive = uint16(min(o.Policy.KeepaliveS, 65535))
		}
	}
	cfg := simulate.Config{Devices: len(p.Devices), Outage: o.Outage, Policy: o.Policy, Seed: o.Seed, Library: o.Library,
		Horizon: max(o.Horizon, o.Outage+time.Second), OnOpen: func(op simulate.Open) {
			p.Connects = append(p.Connects, Connect{At: op.At, Wait: time.Duration(op.Delay * 1e9), Device: int32(op.Device), Attempt: op.Attempt})
		}}
	if _, err := simulate.Run(ctx, cfg, io.Discard); err != nil {
		return nil, fmt.Errorf("what-if: %w", err)
	}
	slices.SortStableFunc(p.Connects, func(a, b Connect) int { return cmp.Or(cmp.Compare(a.At, b.At), cmp.Compare(a.Device, b.Device)) })
	return p, nil
}

// policyName names a policy in a what-if: its Name, or its delay rule.
func policyName(p policy.Policy) string {
	if p.Name != "" {
		return p.Name
	}
	return string(p.Delay)
}

// SimulatedWhatIf is a what-if in simulate's model alone, with no broker:
// one outage of one fleet under several policies, each run's figures
// beside the others'.
type SimulatedWhatIf struct {
	// Fleet is the fleet and its outage as every run had them, but for
	// its Policy, which is each run's own.
	Fleet simulate.Config
	Runs  []PolicyRun // in the order of the policies
}

// PolicyRun is one run of a SimulatedWhatIf.
type PolicyRun struct {
	Policy string // the policy's Name, or its delay rule when it has none
	Stats  simulate.Stats
}

// SimulateWhatIf runs fleet under each of policies in turn, through
// simulate's model: the same devices, outage, seed, broker capacity and
// every other field of fleet, only its Policy replaced. It refuses an
// invalid fleet (simulate.Config.Validate's error) before any run.
//
// run makes the i'th run, of cfg, and returns its figures; nil runs
// simulate.Run and discards the records. A caller that keeps them passes
// its own: stormaudit demo ingests each run into a dataset, and prints
// the step before it. The first error run returns ends SimulateWhatIf,
// which returns it as it came.
func SimulateWhatIf(ctx context.Context, fleet simulate.Config, policies []policy.Policy,
	run func(i int, cfg simulate.Config) (simulate.Stats, error)) (*SimulatedWhatIf, error) {
	if len(policies) == 0 {
		return nil, errors.New("what-if: no policy to simulate")
	}
	cfgs := make([]simulate.Config, len(policies))
	for i, p := range policies {
		cfgs[i] = fleet
		cfgs[i].Policy = p
		if err := cfgs[i].Validate(); err != nil {
			return nil, err
		}
	}
	if run == nil {
		run = func(_ int, cfg simulate.Config) (simulate.Stats, error) { return simulate.Run(ctx, cfg, io.Discard) }
	}
	w := &SimulatedWhatIf{Fleet: fleet}
	for i, cfg := range cfgs {
		st, err := run(i, cfg)
		if err != nil {
			return nil, err
		}
		w.Runs = append(w.Runs, PolicyRun{Policy: policyName(cfg.Policy), Stats: st})
	}
	return w, nil
}

// Why says, a sentence each, what the figures mean where they seem to
// contradict each other:
//
//   - a run whose busiest second (Stats.PeakAt) came while the broker was
//     down (before Fleet.Outage) and saw more socket-opens than any second
//     once it was up (Stats.PeakUpPerS): every device's first retries,
//     which nothing answered;
//   - a run gentler on the broker's return (fewer socket-opens a second
//     once it was up) and yet slower to recover (a longer p99 time to
//     recover) than another: the price of the random draws.
//
// It returns nil when nothing seems to contradict.
func (w *SimulatedWhatIf) Why() []string {
	var out []string
	for _, r := range w.Runs {
		st := r.Stats
		if st.PeakAt < w.Fleet.Outage && st.PeakPerS > st.PeakUpPerS {
			out = append(out, fmt.Sprintf("%s: its busiest second came %v after the drop, while the broker was down: "+
				"every device's first retries, which nothing answered; the broker itself saw at most %d a second.", r.Policy, st.PeakAt, st.PeakUpPerS))
		}
	}
	for _, ra := range w.Runs {
		for _, rb := range w.Runs {
			a, b := ra.Stats, rb.Stats
			if a.PeakUpPerS < b.PeakUpPerS && a.TTR99 > b.TTR99 {
				out = append(out, fmt.Sprintf("%s: its p99 time to recover is %v longer than %s's: each device waits out a "+
					"random draw, up to the cap, instead of all at once; the price of %d fewer socket-opens a second on the "+
					"broker's return and %d fewer refused over capacity.", ra.Policy, (a.TTR99-b.TTR99).Round(time.Millisecond),
					rb.Policy, b.PeakUpPerS-a.PeakUpPerS, b.RefusedOverload-a.RefusedOverload))
			}
		}
	}
	return out
}
