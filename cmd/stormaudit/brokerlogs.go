package main

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/stormaudit/stormaudit/internal/sidefile"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/brokerlog"
	"github.com/urfave/cli/v3"
)

// brokerFlags are the flags of the commands that take the broker's log as
// a second witness (check, report, browse).
func brokerFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "broker-log", Usage: "the broker's own log, a second witness (repeatable; Mosquitto, EMQX events, AWS IoT lifecycle events or HiveMQ's event.log, told by content; gzip; - for stdin)", TakesFile: true},
		&cli.StringFlag{Name: "broker-log-format", Usage: "the broker logs' format instead of telling it by content: mosquitto, emqx, aws-iot or hivemq"},
		&cli.StringFlag{Name: "broker-log-tz", Usage: "the time zone of broker log stamps that name none (Mosquitto's log_timestamp_format, HiveMQ), as an IANA name such as Europe/Berlin (default UTC)"},
	}
}

// maxBrokerRejectsShown is how many rejected broker log lines a command
// names on stderr.
const maxBrokerRejectsShown = 5

// brokerInput is a --broker-log file as read.
type brokerInput struct {
	name string
	data []byte
}

// brokerPaths returns the --broker-log paths of the command called name,
// and the options they are read with.
func brokerPaths(cmd *cli.Command, name string) ([]string, brokerlog.Options, error) {
	var bo brokerlog.Options
	paths := cmd.StringSlice("broker-log")
	if len(paths) == 0 {
		return nil, bo, nil
	}
	if f := cmd.String("broker-log-format"); f != "" {
		format, err := brokerlog.ParseFormat(f)
		if err != nil {
			return nil, bo, usageErr("%s: --broker-log-format: %v", name, err)
		}
		bo.Format = format
	}
	if tz := cmd.String("broker-log-tz"); tz != "" {
		loc, err := time.LoadLocation(tz)
		if err != nil {
			return nil, bo, usageErr("%s: --broker-log-tz: expected an IANA time zone name such as Europe/Berlin, found %q", name, tz)
		}
		bo.TZ = loc
	}
	stdin := 0
	for _, p := range paths {
		if p == "-" {
			stdin++
		}
	}
	if stdin > 1 || stdin == 1 && slices.Contains(cmd.Args().Slice(), "-") {
		return nil, bo, usageErr("%s: --broker-log: - (stdin) is read once: give the broker log or the audit log as a file", name)
	}
	return paths, bo, nil
}

// openBrokerLog opens a --broker-log path (- for stdin), bounded by
// sidefile.MaxBrokerLog.
func openBrokerLog(cmd *cli.Command, p string) (io.ReadCloser, error) {
	if p == "-" {
		return io.NopCloser(&stdinBound{r: io.LimitReader(cmd.Root().Reader, sidefile.MaxBrokerLog+1)}), nil
	}
	return sidefile.Open(p, sidefile.MaxBrokerLog)
}

// stdinBound fails a read of stdin past sidefile.MaxBrokerLog.
type stdinBound struct {
	r io.Reader
	n int64
}

func (s *stdinBound) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if s.n += int64(n); s.n > sidefile.MaxBrokerLog {
		return 0, fmt.Errorf("-: expected at most %d bytes of broker log, found more", int64(sidefile.MaxBrokerLog))
	}
	return n, err
}

// brokerInputs reads the --broker-log files of the command called name
// whole (ingest stores them byte for byte), and the options they are
// read with.
func brokerInputs(cmd *cli.Command, name string) ([]brokerInput, brokerlog.Options, error) {
	paths, bo, err := brokerPaths(cmd, name)
	if err != nil {
		return nil, bo, err
	}
	var ins []brokerInput
	for _, p := range paths {
		f, err := openBrokerLog(cmd, p)
		if err != nil {
			return nil, bo, usageErr("%s: --broker-log: %v", name, err)
		}
		data, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			return nil, bo, usageErr("%s: --broker-log: %v", name, err)
		}
		ins = append(ins, brokerInput{p, data})
	}
	return ins, bo, nil
}

// readBrokerLogs reads the --broker-log files of the command called name
// into opts, as a stream (what a log costs grows with the clients it
// names, not with its size: analyze.BrokerLog), saying on stderr what
// each held and naming its first rejected lines.
func readBrokerLogs(cmd *cli.Command, name string, opts *analyze.Options) error {
	paths, bo, err := brokerPaths(cmd, name)
	if err != nil {
		return err
	}
	for _, p := range paths {
		f, err := openBrokerLog(cmd, p)
		if err != nil {
			return usageErr("%s: --broker-log: %v", name, err)
		}
		l, err := analyze.LoadBrokerLog(f, p, bo)
		f.Close()
		if err != nil {
			return usageErr("%s: --broker-log: %v", name, err)
		}
		printBrokerLog(cmd, p, l.Log)
		opts.Broker = append(opts.Broker, l)
	}
	return nil
}

// printBrokerLog says on stderr what a broker log held, naming its first
// rejected lines; nothing under --quiet (the check's notes still count
// the rejected lines).
func printBrokerLog(cmd *cli.Command, name string, l *brokerlog.Log) {
	w := cmd.Root().ErrWriter
	if cmd.Bool("quiet") {
		return
	}
	fmt.Fprintf(w, "stormaudit: %s (broker log, %s): %d lines = %d events + %d skipped + %d rejected + %d blank\n",
		name, l.Format, l.Lines, l.Found, l.Skipped, l.Rejected, l.Blank)
	for i, rj := range l.Rejects {
		if i == maxBrokerRejectsShown {
			fmt.Fprintf(w, "  ... and %d more rejected lines of %s\n", l.Rejected-i, name)
			break
		}
		field := ""
		if rj.Field != "" {
			field = rj.Field + ": "
		}
		fmt.Fprintf(w, "  %s:%d: %s%s\n", name, rj.Line, field, rj.Reason)
	}
}
