package main

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/stormaudit/stormaudit/internal/sidefile"
	"github.com/stormaudit/stormaudit/replay"
	"github.com/urfave/cli/v3"
)

// shardFlags reads --shard and --start-at into s: a replay several
// processes make together against one broker, each its share of the
// devices from one start.
func shardFlags(cmd *cli.Command, s *replaySettings) error {
	if !cmd.IsSet("shard") {
		if cmd.IsSet("start-at") && cmd.Bool("compare") {
			return usageErr("replay: --start-at: not with --compare: its what-if starts after the recorded replay")
		}
		if cmd.IsSet("start-at") {
			start, err := startAt(cmd.String("start-at"))
			if err != nil {
				return err
			}
			s.opts.StartAt = start
		}
		return nil
	}
	sh, err := parseShard(cmd.String("shard"))
	if err != nil {
		return err
	}
	switch {
	case cmd.String("broker") == "":
		return usageErr("replay: --shard: the shards drive one broker from several processes: name it with --broker")
	case !cmd.IsSet("start-at"):
		return usageErr("replay: --shard: the shards share one start: give every shard the same --start-at")
	case cmd.IsSet("queued") || cmd.Bool("compare"):
		return usageErr("replay: --shard: not with --queued or --compare: a shard replays one plan's connects")
	}
	start, err := startAt(cmd.String("start-at"))
	if err != nil {
		return err
	}
	s.opts.Shard, s.opts.StartAt = &sh, start
	return nil
}

// parseShard reads I/N, 0 <= I < N.
func parseShard(v string) (replay.Shard, error) {
	i, n, ok := strings.Cut(v, "/")
	a, err1 := strconv.Atoi(i)
	b, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || b < 1 || a < 0 || a >= b {
		return replay.Shard{}, usageErr("replay: --shard: expected I/N with 0 <= I < N (the shard's index and the shards' count), found %q", v)
	}
	return replay.Shard{I: a, N: b}, nil
}

// maxStartWait is how far ahead --start-at may be: a start days away is
// a mistyped date, and the shards would sit waiting for it.
const maxStartWait = 24 * time.Hour

// startAt reads --start-at: an RFC 3339 instant that has not passed and
// is at most maxStartWait away.
func startAt(v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, usageErr("replay: --start-at: expected an RFC 3339 instant (2026-12-07T10:00:00Z), found %q", v)
	}
	if late := time.Since(t); late > 0 {
		return time.Time{}, usageErr("replay: --start-at %s passed %v ago: every connect would be late; give a later start", v, late.Round(time.Millisecond))
	}
	if wait := time.Until(t); wait > maxStartWait {
		return time.Time{}, usageErr("replay: --start-at %s is %v away: expected a start within %v (the shards wait for it)", v, wait.Round(time.Second), maxStartWait)
	}
	return t, nil
}

// runReplayMerge merges the shards' reports (--merge FILE...) into one,
// judges it and writes it as replay does.
func runReplayMerge(cmd *cli.Command, format string) error {
	for _, f := range []string{"shard", "start-at", "broker", "policy", "compare", "queued", "audit", "devices", "from", "speed", "seed",
		"protocol", "link-down", "broker-restart", "capacity", "max-clients", "keepalive", "library-reconnect", "service", "connect-timeout"} {
		if cmd.IsSet(f) {
			return usageErr("replay: --merge reads the shards' reports; --%s is for replaying", f)
		}
	}
	if cmd.Duration("connack-slo") <= 0 || cmd.Duration("max-lateness") <= 0 {
		return usageErr("replay: --connack-slo and --max-lateness: expected durations > 0")
	}
	files := cmd.Args().Slice()
	if len(files) == 0 {
		return usageErr("replay: --merge: expected the shards' reports (replay --shard I/N --format json), one a file")
	}
	var reps []*replay.Report
	for _, f := range files {
		b, err := sidefile.Read(f, sidefile.MaxShardReport)
		if err != nil {
			return failed("replay: --merge", err)
		}
		r, err := replay.ReadJSON(bytes.NewReader(b))
		if err == nil && len(r) != 1 {
			err = fmt.Errorf("a comparison, expected one shard's report")
		}
		if err != nil {
			return failed("", fmt.Errorf("replay: --merge: %s: %w", f, err))
		}
		reps = append(reps, r[0])
	}
	m, err := replay.Merge(reps)
	var me *replay.MergeError
	if errors.As(err, &me) && me.Report >= 0 && me.Report < len(files) {
		return failed("", fmt.Errorf("replay: --merge: %s: %w", files[me.Report], me.Err))
	}
	if err != nil {
		return failed("replay: --merge", err)
	}
	m.Judge(cmd.Duration("connack-slo"), cmd.Duration("max-lateness"))
	if err := writeReplay(cmd, format, []*replay.Report{m}); err != nil {
		return err
	}
	return replayResult([]*replay.Report{m})
}
