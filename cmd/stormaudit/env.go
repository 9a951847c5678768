package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/urfave/cli/v3"
)

// boolEnv is the environment variable of a boolean flag. Besides Go's
// true/false and 1/0 it takes yes/no, on/off and y/n in any case, as shells
// and CI systems write them.
func boolEnv(key string) cli.ValueSourceChain {
	return cli.NewValueSourceChain(&boolEnvSource{ValueSource: cli.EnvVar(key), key: key})
}

// boolEnvSource is an environment variable read as a boolean.
type boolEnvSource struct {
	cli.ValueSource
	key string
}

// Lookup returns the variable's value, spelled as strconv.ParseBool reads
// it when it is one of the other spellings.
func (s *boolEnvSource) Lookup() (string, bool) {
	v, ok := os.LookupEnv(s.key)
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "yes", "y", "on":
		return "true", ok
	case "no", "n", "off":
		return "false", ok
	}
	return v, ok
}

// IsFromEnv tells the help text that the source is the environment.
func (s *boolEnvSource) IsFromEnv() bool { return true }

// Key is the variable's name, for the help text.
func (s *boolEnvSource) Key() string { return s.key }

// envParseError matches the flag library's error for an environment
// variable it could not parse.
var envParseError = regexp.MustCompile(`^could not parse ("(?:[^"\\]|\\.)*") as (\S+) value from environment variable "([^"]+)" for flag ([\w-]+): (.*)$`)

// envExpected says what each kind of flag takes.
var envExpected = map[string]string{
	"bool":          "true or false (or 1/0, yes/no, on/off)",
	"int64":         "an integer",
	"int":           "an integer",
	"uint64":        "a non-negative integer",
	"float64":       "a number",
	"time.Duration": "a duration such as 500ms, 30s or 2m",
}

// envError rewrites the flag library's error for an environment variable
// it could not parse into one that names the variable, its value, the
// flag and what was expected; other errors are returned as they are.
func envError(err error) error {
	m := envParseError.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	want, ok := envExpected[m[2]]
	if !ok { // a flag's own validation: its words
		return fmt.Errorf("environment variable %s=%s (for --%s): %s", m[3], m[1], m[4], m[5])
	}
	return fmt.Errorf("environment variable %s=%s (for --%s): expected %s", m[3], m[1], m[4], want)
}
