package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/stormaudit/stormaudit/internal/near"
	"github.com/urfave/cli/v3"
)

// onUsageError gives flag errors exit status 2 and, for a flag the
// command does not define, names the nearest one it does.
func onUsageError(_ context.Context, cmd *cli.Command, err error, _ bool) error {
	const undefined = "flag provided but not defined: -"
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, undefined); ok {
		name = strings.TrimLeft(name, "-")
		msg = "unknown flag " + flagText(name)
		if cmd.Root() != cmd {
			msg = strings.TrimPrefix(cmd.FullName(), cmd.Root().Name+" ") + ": " + msg
		}
		names := visibleFlagNames(cmd)
		if cmd.Root() != cmd {
			names = append(names, visibleFlagNames(cmd.Root())...) // the root's apply to every command
		}
		if near := nearest(name, names); near != "" {
			msg += fmt.Sprintf("; did you mean %s?", flagText(near))
		}
		msg += fmt.Sprintf(" (%s --help lists the flags)", cmd.FullName())
	}
	return usageErr("%s", msg)
}

// unknownCommand is the action of a command whose subcommands are the
// work: without arguments it shows its help, with one it names the
// nearest command.
func unknownCommand(_ context.Context, cmd *cli.Command) error {
	if cmd.Args().Len() == 0 {
		return cli.ShowSubcommandHelp(cmd)
	}
	name := cmd.Args().First()
	var names []string
	for _, c := range cmd.VisibleCommands() {
		names = append(names, c.Names()...)
	}
	msg := fmt.Sprintf("unknown command %q", name)
	if near := nearest(name, names); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	return usageErr("%s (%s --help lists the commands)", msg, cmd.FullName())
}

func flagText(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// visibleFlagNames lists the names of cmd's flags that its help shows.
func visibleFlagNames(cmd *cli.Command) []string {
	var names []string
	for _, f := range cmd.VisibleFlags() {
		names = append(names, f.Names()...)
	}
	return names
}

// nearest is near.Nearest.
func nearest(s string, candidates []string) string { return near.Nearest(s, candidates) }
