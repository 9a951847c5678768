// Command stormaudit checks, reconstructs and replays the audit logs that
// MQTT device fleets write while they reconnect after an outage.
//
// Machine-readable output goes to stdout; diagnostics, summaries and
// progress go to stderr. Exit status 2 means a usage, input or I/O error,
// 130 that Ctrl-C (SIGINT) stopped it and 143 that SIGTERM did (the
// shell's 128 + signal); each command documents what 0 and 1 mean for it.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"syscall"
	"unicode/utf8"

	"github.com/stormaudit/stormaudit/internal/safe"
	"github.com/stormaudit/stormaudit/internal/termquery"

	"github.com/urfave/cli/v3"
)

func main() {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		signal.Stop(sigs) // a second interrupt ends the program at once
		cancel(&signalError{sig: sig.(syscall.Signal)})
	}()
	code := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	os.Exit(code)
}

// signalError is the cause of a run cancelled by a signal.
type signalError struct{ sig syscall.Signal }

func (e *signalError) Error() string { return "interrupted (" + signalName(e.sig) + ")" }

// exitCode is the shell's convention for a program a signal ended:
// 128 + the signal's number (130 for Ctrl-C, 143 for SIGTERM).
func (e *signalError) exitCode() int { return 128 + int(e.sig) }

func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}

// run runs the command line args and returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	termquery.Restore() // before anything reads TERM or starts a program
	app := newApp(stdin, stdout, stderr)
	if len(args) > 1 && args[len(args)-1] == completeFlag && complete(app, args, stdout) {
		return 0
	}
	err := app.Run(ctx, args)
	if err != nil {
		err = envError(err)
	}
	var se *signalError
	if err == nil && errors.As(context.Cause(ctx), &se) {
		err = se // what it did may be incomplete
	}
	if err == nil {
		return 0
	}
	code := 2
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	if errors.As(context.Cause(ctx), &se) {
		// Stopped by a signal: the shell's exit status, and what the
		// command said of it unless it only says the context ended.
		code = se.exitCode()
		if errors.Is(err, context.Canceled) {
			err = se
		}
	}
	if err.Error() != "" {
		fmt.Fprintf(stderr, "stormaudit: %s\n", clipMessage(safe.Lines(requiredText(err.Error())))) // errors quote inputs and devices
	}
	return code
}

// maxMessage is the longest error message printed whole: one that quotes
// a value of megabytes (a flag, a configuration value) is cut.
const maxMessage = 4096

// clipMessage returns msg cut to maxMessage bytes (at a character),
// saying how long it was.
func clipMessage(msg string) string {
	if len(msg) <= maxMessage {
		return msg
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + fmt.Sprintf("... (the message goes on: %d bytes in all)", len(msg))
}

func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.Command {
	app := &cli.Command{
		Name:                            "stormaudit",
		Usage:                           "audit the reconnect logs of MQTT device fleets",
		Version:                         versionText(),
		EnableShellCompletion:           true,
		ConfigureShellCompletionCommand: configureCompletion,
		Suggest:                         true,
		Reader:                          stdin,
		Writer:                          stdout,
		ErrWriter:                       stderr,
		ExitErrHandler:                  func(context.Context, *cli.Command, error) {},
		OnUsageError:                    onUsageError,
		Action:                          unknownCommand,
		Flags: append(slices.Clone(rootConfigFlags), colorFlag,
			&cli.StringFlag{Name: "cpuprofile", Usage: "write a CPU profile to this file (for development)", Hidden: true},
			&cli.StringFlag{Name: "trace", Usage: "write an execution trace to this file (for development)", Hidden: true},
			&cli.StringFlag{Name: "memprofile", Usage: "write an allocation profile to this file when done (for development)", Hidden: true},
		),
		Before: startProfile,
		After:  stopProfile,
		Commands: []*cli.Command{
			ingestCommand(),
			verifyCommand(),
			proveCommand(),
			keygenCommand(),
			exportCommand(),
			simulateCommand(),
			replayCommand(),
			demoCommand(),
			policyCommand(),
			checkCommand(),
			rulesCommand(),
			reportCommand(),
			timelineCommand(),
			browseCommand(),
			configCommand(),
		},
	}
	document(app, "")
	return app
}

// startProfile starts the CPU profile and the execution trace that
// --cpuprofile and --trace ask for; stopProfile stops them and writes the
// allocation profile --memprofile asks for.
func startProfile(ctx context.Context, cmd *cli.Command) (context.Context, error) {
	if path := cmd.String("cpuprofile"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return ctx, usageErr("--cpuprofile: %v", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return ctx, err
		}
	}
	if path := cmd.String("trace"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return ctx, usageErr("--trace: %v", err)
		}
		if err := trace.Start(f); err != nil {
			return ctx, err
		}
	}
	return ctx, nil
}

func stopProfile(ctx context.Context, cmd *cli.Command) error {
	if cmd.String("cpuprofile") != "" {
		pprof.StopCPUProfile()
	}
	if cmd.String("trace") != "" {
		trace.Stop()
	}
	if path := cmd.String("memprofile"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return usageErr("--memprofile: %v", err)
		}
		defer f.Close()
		return pprof.Lookup("allocs").WriteTo(f, 0)
	}
	return nil
}
