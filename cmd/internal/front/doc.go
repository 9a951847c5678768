// Package front is the front end of stormaudit check, shared by its two
// drivers: stormaudit check (cmd/stormaudit) and stormaudit-beam check
// (cmd/stormaudit-beam). Each driver parses its own command line; what
// the values mean, what is refused and what is written is decided here,
// once, so that both drivers take the same flags and configuration to the
// same findings and the same bytes.
//
// # Configuration
//
// LoadConfig finds and reads stormaudit.toml (package config) as --config
// and --no-config say; ApplyConfig sets a driver's flags from it, through
// the driver's Flags, where the command line and the environment left
// them unset; Options turns it, with --policy and --window, into
// analyze.Options: the rules disabled, their severities and thresholds,
// the policy resolved.
//
// # Outputs
//
// ParseOutputs pairs --format with --output: one path per format, "-"
// for stdout at most once, and no file named twice (a.json and ./a.json
// are one file). RefuseClobber refuses an output that would overwrite an
// input. Render writes a result in one format.
//
// # Exit status
//
// ParseFailOn reads --fail-on (any case; "" is its default, error);
// ExitStatus counts the findings at or above it, and Failing says so.
// Both drivers exit 0 when none is, 1 when some are, 2 on any error:
// every error this package returns is a usage or input error, exit
// status 2.
//
// # Version
//
// Version is the version string both drivers print and put in SARIF.
package front
