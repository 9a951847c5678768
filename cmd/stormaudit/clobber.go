package main

import (
	"os"

	"github.com/stormaudit/stormaudit/cmd/internal/front"
	"github.com/urfave/cli/v3"
)

// sideInputs returns the files the command reads besides its arguments:
// its policy file (not a preset), configuration, baseline, broker logs,
// verifier and redaction keys, replay report, credentials, proof and
// earlier checkpoint, as set on the command line, in the environment or by
// the configuration. An output may overwrite none of them.
func sideInputs(cmd *cli.Command) []string {
	var files []string
	for _, name := range []string{"policy", "baseline", "redact-key", "replay", "credentials", "since", "proof"} {
		if flagNamed(cmd, name) == nil {
			continue
		}
		if v := cmd.String(name); v != "" && v != "-" {
			if _, err := os.Stat(v); err == nil { // a preset name is no file
				files = append(files, v)
			}
		}
	}
	for _, name := range []string{"broker-log", "verifier"} {
		if flagNamed(cmd, name) != nil {
			files = append(files, cmd.StringSlice(name)...)
		}
	}
	if p := front.ConfigPath(cmd.Root().String("config"), cmd.Root().Bool("no-config")); p != "" {
		files = append(files, p)
	}
	return files
}
