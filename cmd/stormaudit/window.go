package main

import (
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/stormaudit/stormaudit/analyze"
)

// windowFlags are --since and --until: check, report, browse and timeline
// judge only the records recorded in [since, until).
func windowFlags() []cli.Flag {
	const rel = `: RFC 3339 (2026-11-30T14:17:30Z), or relative to the first incident's loss ("incident", "incident-30s", "incident+2m")`
	return []cli.Flag{
		&cli.StringFlag{Name: "since", Usage: "judge only the records recorded at or after this" + rel},
		&cli.StringFlag{Name: "until", Usage: "judge only the records recorded before this" + rel},
	}
}

// The range a window's bound may take: the years of the records'
// timestamps (docs/format.md), which int64 nanoseconds hold. A bound
// outside it would overflow, and 0001-01-01 would read as no bound.
var (
	earliestBound = time.Date(1678, 1, 1, 0, 0, 0, 0, time.UTC)
	latestBound   = time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC)
)

// checkBound refuses a bound t of --flag (as written, s) outside
// [earliestBound, latestBound].
func checkBound(flag, s string, t time.Time) error {
	if t.Before(earliestBound) || t.After(latestBound) {
		return usageErr("--%s %s: expected a time from 1678-01-01 to 2262-01-01 (the range of the records' timestamps)", flag, s)
	}
	return nil
}

// bound is one end of a window: a time, or an offset from the first
// incident's loss.
type bound struct {
	at       time.Time
	incident bool
	offset   time.Duration
}

// parseBound reads the value of --since or --until.
func parseBound(flag, s string) (bound, error) {
	if rest, ok := strings.CutPrefix(s, "incident"); ok {
		b := bound{incident: true}
		if rest == "" {
			return b, nil
		}
		d, err := time.ParseDuration(rest)
		if err != nil || (rest[0] != '+' && rest[0] != '-') {
			return b, usageErr("--%s %q: expected incident, or incident followed by + or - and a duration (incident-30s, incident+2m)", flag, s)
		}
		b.offset = d
		return b, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return bound{}, usageErr("--%s %q: expected an RFC 3339 time (2026-11-30T14:17:30Z) or a time relative to the first incident (incident-30s)", flag, s)
	}
	return bound{at: t}, checkBound(flag, s, t)
}

// window reads --since and --until: the bounds given, and whether one is
// relative to the first incident.
func window(cmd *cli.Command) (since, until *bound, relative bool, err error) {
	for _, f := range []struct {
		name string
		b    **bound
	}{{"since", &since}, {"until", &until}} {
		if v := cmd.String(f.name); v != "" {
			b, err := parseBound(f.name, v)
			if err != nil {
				return nil, nil, false, err
			}
			*f.b, relative = &b, relative || b.incident
		}
	}
	return since, until, relative, nil
}

// windowRelative reports whether --since or --until is relative to the
// first incident, which takes a check of the whole log to find.
func windowRelative(cmd *cli.Command) bool {
	_, _, rel, _ := window(cmd)
	return rel
}

// applyWindow sets opts.Since and Until from --since and --until. A bound
// relative to the first incident is resolved by a check of the whole
// dataset in dir (dir "" when the bounds are absolute).
func applyWindow(cmd *cli.Command, name, dir string, opts *analyze.Options) error {
	since, until, rel, err := window(cmd)
	if err != nil || since == nil && until == nil {
		return err
	}
	var lost time.Time
	if rel {
		whole := *opts
		whole.Observe = nil
		res, err := analyze.Check(dir, whole)
		if err != nil {
			return failed(name+": finding the first incident for --since/--until", err)
		}
		if st := res.Summary.Fleet; st == nil || len(st.Incidents) == 0 {
			return usageErr("%s: --since/--until relative to the first incident: the log has no incident (no devices lost the connection together)", name)
		}
		lost = time.Unix(0, res.Summary.Fleet.Incidents[0].LostAt).UTC()
	}
	resolve := func(b *bound) time.Time {
		if b == nil {
			return time.Time{}
		}
		if b.incident {
			return lost.Add(b.offset)
		}
		return b.at
	}
	opts.Since, opts.Until = resolve(since), resolve(until)
	for _, b := range []struct {
		flag string
		b    *bound
		t    time.Time
	}{{"since", since, opts.Since}, {"until", until, opts.Until}} {
		if b.b != nil && b.b.incident {
			if err := checkBound(b.flag, cmd.String(b.flag)+" ("+b.t.Format(time.RFC3339Nano)+")", b.t); err != nil {
				return err
			}
		}
	}
	if !opts.Since.IsZero() && !opts.Until.IsZero() && !opts.Since.Before(opts.Until) {
		return usageErr("%s: --since %s is not before --until %s: the window holds nothing", name,
			opts.Since.Format(time.RFC3339Nano), opts.Until.Format(time.RFC3339Nano))
	}
	return nil
}
