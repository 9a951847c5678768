package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/stormaudit/stormaudit/policy"
	"github.com/urfave/cli/v3"
)

func policyCommand() *cli.Command {
	return &cli.Command{
		Name:  "policy",
		Usage: "list, show and check reconnect policies",
		Description: `A reconnect policy is a TOML or JSON file that declares how a fleet's
clients back off (docs/policy.md), or one of the built-in presets. Where a
command takes --policy, it takes a file or a preset name.`,
		OnUsageError: onUsageError,
		Action:       unknownCommand,
		Commands: []*cli.Command{
			{
				Name:         "list",
				Usage:        "list the built-in presets",
				OnUsageError: onUsageError,
				Action:       runPolicyList,
			},
			{
				Name:         "show",
				Usage:        "print a preset or a policy file as a file to start from",
				ArgsUsage:    "NAME|FILE",
				OnUsageError: onUsageError,
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Usage: "toml or json", Value: "toml"},
				},
				Action: runPolicyShow,
			},
			{
				Name:  "check",
				Usage: "validate a policy file",
				Description: `Prints FILE: ok and a summary of the policy, or the first problem with
its line and key. Exit status 0: valid; 2: invalid, or not readable.`,
				ArgsUsage:    "FILE",
				OnUsageError: onUsageError,
				Action:       runPolicyCheck,
			},
		},
	}
}

func runPolicyList(ctx context.Context, cmd *cli.Command) error {
	if cmd.NArg() != 0 {
		return usageErr("policy list: expected no arguments, found %d", cmd.NArg())
	}
	names := policy.PresetNames()
	width := len(slices.MaxFunc(names, func(a, b string) int { return len(a) - len(b) }))
	for _, name := range names {
		fmt.Fprintf(cmd.Root().Writer, "%-*s  %s\n", width, name, policy.Describe(name))
	}
	return nil
}

func runPolicyShow(ctx context.Context, cmd *cli.Command) error {
	if cmd.NArg() != 1 {
		return usageErr("policy show: expected one preset NAME or policy FILE, found %d arguments", cmd.NArg())
	}
	format := cmd.String("format")
	if format != "toml" && format != "json" {
		return usageErr("policy show: --format: expected toml or json, found %q", format)
	}
	p, err := policy.Resolve(cmd.Args().First())
	if err != nil {
		return usageErr("policy show: %v", err)
	}
	var out []byte
	if format == "toml" {
		out = p.AppendTOML(nil)
	} else {
		out = p.AppendJSON(nil)
	}
	_, err = cmd.Root().Writer.Write(out)
	return err
}

func runPolicyCheck(ctx context.Context, cmd *cli.Command) error {
	if cmd.NArg() != 1 {
		return usageErr("policy check: expected one policy FILE, found %d arguments", cmd.NArg())
	}
	path := cmd.Args().First()
	p, err := policy.Load(path)
	if errors.Is(err, fs.ErrNotExist) && policy.Describe(path) != "" {
		return usageErr("policy check: %v (%s is a preset: stormaudit policy show %s writes it as a file)", err, path, path)
	}
	if err != nil {
		return usageErr("policy check: %v", err)
	}
	fmt.Fprintf(cmd.Root().Writer, "%s: ok (%s)\n", path, p.Summary())
	return nil
}
