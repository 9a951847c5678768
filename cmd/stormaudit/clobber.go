package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/stormaudit/stormaudit/config"
	"github.com/urfave/cli/v3"
)

// refuseClobber returns a usage error when an output path names one of
// the inputs, or lies inside an input directory (a dataset): writing it
// would destroy what the user gave us. "-" (stdout) is never a clobber.
func refuseClobber(command string, outputs, inputs []string) error {
	for _, out := range outputs {
		if out == "-" || out == "" {
			continue
		}
		for _, in := range inputs {
			if in == "-" || in == "" {
				continue
			}
			if clobbers(out, in) {
				return usageErr("%s: the output %s would overwrite the input %s; write it elsewhere", command, out, in)
			}
		}
	}
	return nil
}

// clobbers reports whether writing the file out would change in: the
// same file (by path, or by identity through links), or a path inside in
// when in is a directory.
func clobbers(out, in string) bool {
	o, i := resolved(out), resolved(in)
	if o == i {
		return true
	}
	if so, err := os.Stat(out); err == nil {
		if si, err := os.Stat(in); err == nil && os.SameFile(so, si) {
			return true
		}
	}
	if st, err := os.Stat(in); err != nil || !st.IsDir() {
		return false
	}
	rel, err := filepath.Rel(i, o)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// resolved returns path absolute, with the symbolic links of its longest
// existing prefix resolved.
func resolved(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	rest := ""
	for p := abs; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		if parent := filepath.Dir(p); parent == p {
			return abs
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

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
	root := cmd.Root()
	if p := root.String("config"); p != "" {
		files = append(files, p)
	} else if !root.Bool("no-config") {
		if p, err := config.Find("."); err == nil && p != "" {
			files = append(files, p)
		}
	}
	return files
}
