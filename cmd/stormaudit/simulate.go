package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/stormaudit/stormaudit/ingest"

	"github.com/urfave/cli/v3"

	"github.com/stormaudit/stormaudit/dataset"
	"github.com/stormaudit/stormaudit/policy"
	"github.com/stormaudit/stormaudit/simulate"
)

func simulateCommand() *cli.Command {
	return &cli.Command{
		Name:      "simulate",
		Usage:     "write the audit records a modelled fleet would write in an outage",
		ArgsUsage: " ",
		Description: `Simulates N devices that lose the broker at the same instant and reconnect
under a policy (a preset name or a policy file; see "stormaudit policy list"),
and writes their audit records as NDJSON to --output (default stdout), or
ingests them straight into a dataset with --dataset. The same --seed gives
byte-identical output. The figures of the run are printed on stderr.

Pathologies: --same-seed (a copied image), --tick (timer quantisation),
--flaps (the broker comes back briefly and drops again), --bad-auth (a
fraction of devices with bad credentials), --devices-per-host (devices
sharing a host's connect spacing), --capacity (the broker refuses connects
beyond N per window), --library-reconnect (a second reconnect owner: the MQTT
library's own loop, such as paho-python, beside the manager that writes the
records).

--cold-boot powers the fleet up instead of dropping it: each device waits a
random startup delay below the policy's startup_spread_s before its first
attempt. --outbox-rate gives every device an outbox that queues messages
while it is offline (at most the policy's outbox_limit) and flushes them,
--flush-batch a second or all at once, once it is connected; the records
then carry outbox_depth and outbox_flushed. --service records each
device's first useful exchange after it connects (the service stage);
--service-down keeps the application behind the broker down a while after
the broker is back. --commands-rate queues commands for each device while
it is offline, and --command-ttl expires them; the first useful exchange
after the return counts them. --broker-log writes the broker's log beside
the records, every device declaring a will and saying online on each
connect. docs/simulate.md describes the model.`,
		OnUsageError: onUsageError,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "devices", Aliases: []string{"n"}, Value: 1000, Usage: "fleet size"},
			&cli.DurationFlag{Name: "outage", Value: time.Minute, Usage: "how long the broker is down"},
			&cli.StringFlag{Name: "policy", Value: "full-jitter", Usage: "reconnect policy: a preset name or a policy file", Sources: cli.EnvVars("STORMAUDIT_POLICY")},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the devices' random sources"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "-", Usage: "write the NDJSON records to this file (- for stdout)"},
			&cli.StringFlag{Name: "dataset", Usage: "ingest the records into this new dataset directory instead"},
			&cli.TimestampFlag{Name: "start", Usage: "the instant of the drop, RFC 3339 (default 2026-11-30T14:17:30Z)", Config: cli.TimestampConfig{Layouts: []string{time.RFC3339Nano}}},
			&cli.DurationFlag{Name: "horizon", Usage: "end the run this long after the drop (default: 15m after the broker is up for good)"},
			&cli.DurationFlag{Name: "latency", Value: simulate.DefaultLatency, Usage: "from socket-open to CONNACK or failure (at least 1µs)"},
			&cli.BoolFlag{Name: "same-seed", Usage: "every device draws from the same seed (a copied image)"},
			&cli.DurationFlag{Name: "tick", Usage: "round delays up to a multiple of this timer tick"},
			&cli.IntFlag{Name: "flaps", Usage: "times the broker comes back briefly and drops again"},
			&cli.DurationFlag{Name: "flap-up", Value: 3 * time.Second, Usage: "how long each flap keeps the broker up"},
			&cli.DurationFlag{Name: "flap-down", Value: 20 * time.Second, Usage: "how long the broker is down after each flap"},
			&cli.Float64Flag{Name: "bad-auth", Usage: "fraction of devices with bad credentials"},
			&cli.IntFlag{Name: "devices-per-host", Value: 1, Usage: "devices sharing one host_id and its connect spacing"},
			&cli.IntFlag{Name: "capacity", Usage: "connects the broker accepts per window (0: unlimited)"},
			&cli.DurationFlag{Name: "capacity-window", Value: time.Second, Usage: "the window of --capacity"},
			&cli.StringFlag{Name: "library-reconnect", Usage: "give every device the MQTT library's own reconnect loop beside its manager, under this policy (a preset name, such as paho-python, or a policy file)"},
			&cli.BoolFlag{Name: "cold-boot", Usage: "power the fleet up at --start instead of dropping it (a start spread by the policy's startup_spread_s)"},
			&cli.Float64Flag{Name: "outbox-rate", Usage: "messages per second each device queues in its outbox while offline (0: no outbox)"},
			&cli.IntFlag{Name: "flush-batch", Usage: "outbox messages a connected device sends per second (0: all at once)"},
			&cli.BoolFlag{Name: "attempt-ids", Usage: "write an attempt_id on each record of an attempt"},
			&cli.BoolFlag{Name: "address-down", Usage: "make the outage a failed address service (DHCP) instead of a dead broker: attempts fail at the address stage while it lasts"},
			&cli.BoolFlag{Name: "service", Usage: "record the service stage: each device's first useful exchange after its connect"},
			&cli.StringFlag{Name: "broker-log", Usage: "also write the broker's log to this file, as Mosquitto writes it with log_type all: every accept with its Last Will and the device's own retained online, and the broker's returns (check --broker-log reads it)"},
			&cli.Float64Flag{Name: "commands-rate", Usage: "commands per second the broker queues for each device's session while it is offline, counted (inbound_redelivered) on its first useful exchange after the return (implies --service)"},
			&cli.DurationFlag{Name: "command-ttl", Usage: "how long a queued command stays valid; those older on arrival are ignored and counted (inbound_expired) (0: never expire)"},
			&cli.DurationFlag{Name: "service-down", Usage: "keep the application behind the broker down this long after the broker is back (implies --service): devices connect but are not served"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print no figures", Sources: boolEnv("STORMAUDIT_QUIET")},
		},
		Action: runSimulate,
	}
}

func runSimulate(ctx context.Context, cmd *cli.Command) (err error) {
	if cmd.NArg() > 0 {
		return usageErr("simulate: unexpected argument %q; the fleet is described by flags", cmd.Args().First())
	}
	cfg, err := simulateConfig(cmd)
	if err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return simulateErr(err) // before any output is created or emptied
	}
	if need, have := simulate.MemoryEstimate(cfg), availableMemory(); have > 0 && need > have {
		return usageErr("simulate: --devices: %d devices need about %s of memory, and this machine has %s available; simulate fewer",
			cfg.Devices, gib(need), gib(have))
	}
	var st simulate.Stats
	if path := cmd.String("broker-log"); path != "" {
		if path == "-" {
			return usageErr("simulate: --broker-log: expected a file; standard output carries the records")
		}
		if out := cmd.String("output"); out != "-" && (filepath.Clean(out) == filepath.Clean(path) || sameFile(path, out)) {
			return usageErr("simulate: --broker-log %s is --output too: expected two files", path)
		}
		w, finish, err := openOutput(path, nil) // through a temporary file
		if err != nil {
			return failed("simulate", err)
		}
		bw := bufio.NewWriterSize(w, 1<<20)
		cfg.BrokerLog = bw
		defer func() {
			ferr := bw.Flush()
			if ferr = finish(ferr); ferr != nil && err == nil {
				err = failed("simulate", ferr)
			}
		}()
	}
	if dir := cmd.String("dataset"); dir != "" {
		if cmd.IsSet("output") {
			return usageErr("simulate: --output and --dataset exclude each other")
		}
		st, err = simulateIntoDataset(ctx, cmd, cfg, dir)
	} else {
		st, err = simulateToFile(ctx, cmd, cfg, cmd.String("output"))
	}
	if err != nil {
		return err
	}
	if !cmd.Bool("quiet") {
		printSimulateStats(cmd.Root().ErrWriter, cfg, cmd.String("policy"), st)
	}
	return nil
}

// simulateConfig reads the flags into a Config.
func simulateConfig(cmd *cli.Command) (simulate.Config, error) {
	pol, err := policy.Resolve(cmd.String("policy"))
	if err != nil {
		return simulate.Config{}, usageErr("simulate: --policy: %v", err)
	}
	cfg := simulate.Config{
		Devices: int(cmd.Int("devices")), Outage: cmd.Duration("outage"), Policy: pol, Seed: cmd.Uint64("seed"),
		Start: cmd.Timestamp("start"), Horizon: cmd.Duration("horizon"), Latency: cmd.Duration("latency"),
		SameSeed: cmd.Bool("same-seed"), Tick: cmd.Duration("tick"),
		BadAuth: cmd.Float64("bad-auth"), DevicesPerHost: int(cmd.Int("devices-per-host")),
		Capacity: int(cmd.Int("capacity")), CapacityWindow: cmd.Duration("capacity-window"),
		ColdBoot: cmd.Bool("cold-boot"), OutboxPerS: cmd.Float64("outbox-rate"), FlushBatch: int(cmd.Int("flush-batch")),
		AttemptIDs: cmd.Bool("attempt-ids"), Service: cmd.Bool("service"), ServiceDown: cmd.Duration("service-down"),
		CommandsPerS: cmd.Float64("commands-rate"), CommandTTL: cmd.Duration("command-ttl"),
		AddressDown: cmd.Bool("address-down"),
	}
	if cfg.Latency == 0 {
		cfg.Latency = -1 // simulate.Config reads 0 as the default
	}
	if name := cmd.String("library-reconnect"); name != "" {
		lib, err := policy.Resolve(name)
		if err != nil {
			return simulate.Config{}, usageErr("simulate: --library-reconnect: %v", err)
		}
		cfg.Library = &lib
	}
	if cfg.Flaps = int(cmd.Int("flaps")); cfg.Flaps > 0 {
		cfg.FlapUp, cfg.FlapDown = cmd.Duration("flap-up"), cmd.Duration("flap-down")
	}
	return cfg, nil
}

func simulateToFile(ctx context.Context, cmd *cli.Command, cfg simulate.Config, path string) (simulate.Stats, error) {
	w, finish, err := openOutput(path, cmd.Root().Writer) // through a temporary file
	if err != nil {
		return simulate.Stats{}, failed("simulate", err)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	st, err := simulate.Run(ctx, cfg, bw)
	if err == nil {
		err = bw.Flush()
	}
	return st, simulateErr(finish(err))
}

// simulateIntoDataset streams the records into a new dataset.
func simulateIntoDataset(ctx context.Context, cmd *cli.Command, cfg simulate.Config, dir string) (simulate.Stats, error) {
	st, man, err := simulateDataset(ctx, cfg, dir)
	if err != nil {
		return st, err
	}
	if !cmd.Bool("quiet") {
		printIngestSummary(cmd.Root().ErrWriter, dir, man)
	}
	return st, nil
}

// simulateDataset runs cfg and ingests its records, through a pipe, into
// the new dataset dir.
func simulateDataset(ctx context.Context, cfg simulate.Config, dir string) (simulate.Stats, *dataset.Manifest, error) {
	pr, pw := io.Pipe()
	var st simulate.Stats
	var serr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		bw := bufio.NewWriterSize(pw, 1<<20)
		st, serr = simulate.Run(ctx, cfg, bw)
		if serr == nil {
			serr = bw.Flush()
		}
		pw.CloseWithError(serr)
	}()
	src := ingest.Source{Name: fmt.Sprintf("simulate-seed-%d.ndjson", cfg.Seed), Reader: pr}
	man, err := ingestRun(ctx, dir, []ingest.Source{src}, ingest.Options{CreatedBy: "stormaudit " + versionText()})
	pr.CloseWithError(errIngestEnded)
	<-done
	if serr != nil && !errors.Is(serr, errIngestEnded) {
		return st, nil, simulateErr(serr)
	}
	if err != nil {
		return st, nil, failed("simulate: ingest", err)
	}
	return st, man, nil
}

// configFlags names the flag of each simulate.Config field.
var configFlags = map[string]string{
	"Devices": "--devices", "Outage": "--outage", "Flaps": "--flaps", "FlapUp and FlapDown": "--flap-up and --flap-down",
	"BadAuth": "--bad-auth", "DevicesPerHost": "--devices-per-host", "Capacity": "--capacity",
	"CapacityWindow": "--capacity-window", "Tick": "--tick", "Horizon": "--horizon", "Start": "--start",
	"Library": "--library-reconnect", "ColdBoot": "--cold-boot", "OutboxPerS": "--outbox-rate", "FlushBatch": "--flush-batch",
	"ServiceDown": "--service-down", "AddressDown": "--address-down", "CommandsPerS": "--commands-rate", "CommandTTL": "--command-ttl", "BrokerLog": "--broker-log",
}

// errIngestEnded tells the simulation that nobody reads its records any more.
var errIngestEnded = errors.New("the ingest ended")

func simulateErr(err error) error {
	var ce *simulate.ConfigError
	var fe *policy.FieldError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		if flag, ok := configFlags[ce.Field]; ok {
			return usageErr("simulate: %s: expected %s, found %s", flag, ce.Expected, ce.Found)
		}
		return usageErr("simulate: %v", err)
	case errors.As(err, &fe):
		return usageErr("simulate: --policy: %v", err)
	}
	return failed("simulate", err)
}

func printSimulateStats(w io.Writer, cfg simulate.Config, pol string, st simulate.Stats) {
	fmt.Fprintf(w, "simulated:  %d devices, broker down %v (up for good at +%v), policy %s, seed %d; %d records to +%v\n",
		st.Devices, cfg.Outage, st.BrokerUp, pol, cfg.Seed, st.Records, st.Horizon)
	fmt.Fprintf(w, "on return:  socket-opens once the broker was up peaked at %d/s at +%v\n", st.PeakUpPerS, st.PeakUpAt)
	fmt.Fprintf(w, "attempts:   %d socket-opens (the broker up or not); they peaked at %d/s at +%v, mean %.1f/s, peak-to-mean %.1f\n",
		st.Attempts, st.PeakPerS, st.PeakAt, st.MeanPerS, st.PeakToMean)
	if cfg.Library != nil {
		fmt.Fprintf(w, "library:    every device also runs the library's own reconnect (%s): %d socket-opens the log does not show, counted in the peaks\n",
			cfg.Library.Summary(), st.LibraryAttempts)
	}
	fmt.Fprintf(w, "failures:   %d with the broker down, %d refused over capacity, %d refused for bad credentials\n",
		st.Failed, st.RefusedOverload, st.RefusedAuth)
	ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	fmt.Fprintf(w, "recovered:  %d of %d devices (%d not recovered); time to recover p50 %v, p90 %v, p99 %v, max %v\n",
		st.Recovered, st.Devices, st.NotRecovered, ms(st.TTR50), ms(st.TTR90), ms(st.TTR99), ms(st.TTRMax))
}
