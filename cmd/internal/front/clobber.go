package front

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// RefuseClobber returns an error when an output path names one of the
// inputs, or lies inside an input directory (a dataset): writing it
// would destroy what the user gave. "-" (stdout) and "" are never a
// clobber. what names the outputs in the error, as "check: --output".
func RefuseClobber(what string, outputs, inputs []string) error {
	for _, out := range outputs {
		if out == "-" || out == "" {
			continue
		}
		for _, in := range inputs {
			if in == "-" || in == "" {
				continue
			}
			if clobbers(out, in) {
				return fmt.Errorf("%s: the output %s would overwrite the input %s; write it elsewhere", what, out, in)
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
	return Inside(o, i)
}

// Inside reports whether path is dir or in it, both absolute and
// cleaned.
func Inside(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
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

// PolicyFile returns pol, the --policy value, when it names a file (an
// input an output may not overwrite), "" when it is a preset or empty.
func PolicyFile(pol string) string {
	if pol == "" || pol == "-" {
		return ""
	}
	if _, err := os.Stat(pol); err != nil {
		return ""
	}
	return pol
}
