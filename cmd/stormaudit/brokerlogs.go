package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"time"

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

// readBrokerLogs reads the --broker-log files of the command called name
// into opts, saying on stderr what each held and naming its first
// rejected lines.
func readBrokerLogs(cmd *cli.Command, name string, opts *analyze.Options) error {
	paths := cmd.StringSlice("broker-log")
	if len(paths) == 0 {
		return nil
	}
	var bo brokerlog.Options
	if f := cmd.String("broker-log-format"); f != "" {
		format, err := brokerlog.ParseFormat(f)
		if err != nil {
			return usageErr("%s: --broker-log-format: %v", name, err)
		}
		bo.Format = format
	}
	if tz := cmd.String("broker-log-tz"); tz != "" {
		loc, err := time.LoadLocation(tz)
		if err != nil {
			return usageErr("%s: --broker-log-tz: expected an IANA time zone name such as Europe/Berlin, found %q", name, tz)
		}
		bo.TZ = loc
	}
	stdin := false
	for _, p := range paths {
		var r io.Reader
		if p == "-" {
			if stdin || slices.Contains(cmd.Args().Slice(), "-") {
				return usageErr("%s: --broker-log: - (stdin) is read once: give the broker log or the audit log as a file", name)
			}
			stdin, r = true, cmd.Root().Reader
		} else {
			f, err := os.Open(p)
			if err != nil {
				return usageErr("%s: --broker-log: %v", name, err)
			}
			defer f.Close()
			r = f
		}
		l, err := brokerlog.Read(r, p, bo)
		if err != nil {
			return usageErr("%s: --broker-log: %v", name, err)
		}
		if !cmd.Bool("quiet") {
			fmt.Fprintf(cmd.Root().ErrWriter, "stormaudit: %s (broker log, %s): %d lines = %d events + %d skipped + %d rejected + %d blank\n",
				p, l.Format, l.Lines, len(l.Events), l.Skipped, l.Rejected, l.Blank)
		}
		for i, rj := range l.Rejects {
			if i == maxBrokerRejectsShown {
				fmt.Fprintf(cmd.Root().ErrWriter, "  ... and %d more rejected lines of %s\n", l.Rejected-i, p)
				break
			}
			field := ""
			if rj.Field != "" {
				field = rj.Field + ": "
			}
			fmt.Fprintf(cmd.Root().ErrWriter, "  %s:%d: %s%s\n", p, rj.Line, field, rj.Reason)
		}
		opts.Broker = append(opts.Broker, l)
	}
	return nil
}
