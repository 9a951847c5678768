package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/urfave/cli/v3"
	"golang.org/x/term"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/tui"
)

func browseCommand() *cli.Command {
	return &cli.Command{
		Name:      "browse",
		Usage:     "browse the fleet, its devices, their timelines and the findings in the terminal",
		ArgsUsage: "INPUT...",
		Description: `Opens INPUT (one dataset directory, or audit logs and "-" for stdin, read as
by "stormaudit check") in a terminal browser with four views: the fleet over
time, the devices, one device's timeline and the findings. Keys: arrows or
j/k move, tab changes view, enter opens, / searches, n/N next and previous
match, e/E next and previous finding, ? all keys, q quits. NO_COLOR turns
colour off. With "-" the logs come from stdin and the keys from the terminal.

Exit status: 0 quit; 2 usage, input or I/O errors, or no terminal;
130 interrupted.`,
		OnUsageError: onUsageError,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "policy", Usage: "the declared policy: a policy file or a preset name (default: inferred from the log)", Sources: cli.EnvVars("STORMAUDIT_POLICY")},
			&cli.DurationFlag{Name: "window", Value: analyze.DefaultWindow, Usage: "the window socket-opens are counted in for the fleet's figures"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print no ingest summary", Sources: boolEnv("STORMAUDIT_QUIET")},
		}, append(brokerFlags(), windowFlags()...)...),
		Action: runBrowse,
	}
}

func runBrowse(ctx context.Context, cmd *cli.Command) error {
	opts, err := checkOptions(cmd, "browse")
	if err != nil {
		return err
	}
	if cmd.Args().Len() == 0 {
		return usageErr("browse: no INPUT given; expected a dataset directory, or audit log files or - for stdin")
	}
	out, ok := cmd.Root().Writer.(*os.File)
	if !ok || !term.IsTerminal(int(out.Fd())) {
		return usageErr("browse: standard output is not a terminal; stormaudit check writes reports to files and pipes")
	}
	in, err := openInput(ctx, cmd, "browse")
	if err != nil {
		return err
	}
	defer in.close()
	if in.man.Rows == 0 {
		return failed("browse", fmt.Errorf("no record to browse: %d lines read, %d rejected, %d duplicates",
			in.man.Totals.Lines, in.man.Totals.Rejected, in.man.Totals.Duplicates))
	}
	if err := applyWindow(cmd, "browse", in.dir, &opts); err != nil {
		return err
	}
	m, err := tui.New(tui.Options{Dir: in.dir, Name: strings.Join(cmd.Args().Slice(), " "), Check: opts, Renderer: colorRenderer(cmd, out)})
	if err != nil {
		return failed("browse", err)
	}
	popts := []tea.ProgramOption{tea.WithAltScreen(), tea.WithContext(ctx), tea.WithOutput(out)}
	if f, ok := cmd.Root().Reader.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		popts = append(popts, tea.WithInput(f))
	} else {
		popts = append(popts, tea.WithInputTTY()) // the logs came on stdin: keys come from the terminal
	}
	_, err = tea.NewProgram(m, popts...).Run()
	switch {
	case errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil:
		return interrupted(errors.New("browse: interrupted"))
	case err != nil:
		return failed("browse", err)
	}
	return nil
}
