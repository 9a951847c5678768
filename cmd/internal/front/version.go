package front

import (
	"runtime/debug"
	"strings"

	"golang.org/x/mod/module"
)

// modulePath is the path of stormaudit's module.
const modulePath = "github.com/stormaudit/stormaudit"

// Version is what --version prints, datasets record as their creator
// and SARIF names as the tool's version: release (a release build sets
// it with -ldflags "-X main.version=v1.2.3"), else the version of
// stormaudit's module the binary was built from when it is a real one
// (installed as module@version), else "devel"; then, when the Go
// toolchain stamped the checkout it was built in (go build or go
// install in a git clone, as -buildvcs=auto does), the revision's first
// 12 hex digits, its commit time and whether the tree had changes:
//
//	v1.2.3
//	devel 3fa884e1c2ab (2026-12-07T05:40:00Z)
//	devel 3fa884e1c2ab (2026-12-07T05:40:00Z, modified)
//	devel
//
// The last is what go run, go test and a build with nothing stamped
// say: under -buildvcs=false, or in a linked git worktree, whose .git
// is a file the toolchain does not take for a repository
// (golang/go#58218). Both drivers built from one tree say the same.
func Version(release string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return orDevel(release)
	}
	return versionOf(release, info)
}

// versionOf is Version for the build info given.
func versionOf(release string, info *debug.BuildInfo) string {
	v := release
	if v == "" {
		v = moduleVersion(info)
	}
	rev, at, modified := vcsStamp(info.Settings)
	if rev == "" {
		return orDevel(v)
	}
	short := rev[:min(12, len(rev))]
	// From a checkout, the toolchain makes the main module's version
	// from the same stamp: a pseudo-version naming the revision (or the
	// tag on it), "+dirty" when modified. Said once, in the stamp's words.
	v = strings.TrimSuffix(v, "+dirty")
	if module.IsPseudoVersion(v) {
		if r, err := module.PseudoVersionRev(v); err == nil && r == short {
			v = ""
		}
	}
	var about []string
	if at != "" {
		about = append(about, at)
	}
	if modified {
		about = append(about, "modified")
	}
	s := orDevel(v) + " " + short
	if len(about) > 0 {
		s += " (" + strings.Join(about, ", ") + ")"
	}
	return s
}

// vcsStamp is what the toolchain stamped of the checkout a binary was
// built in: the revision, its commit time (RFC 3339, UTC) and whether
// the tree had changes; "" when nothing was stamped.
func vcsStamp(settings []debug.BuildSetting) (rev, at string, modified bool) {
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	return rev, at, modified
}

// moduleVersion is the version of stormaudit's module in info: a
// requirement's (a driver in a module of its own built against a
// release), or the main module's when it is stormaudit's or one nested
// in its tree (stormaudit-beam, which replaces the requirement by the
// tree it is in); "" when not known.
func moduleVersion(info *debug.BuildInfo) string {
	for _, d := range info.Deps {
		if d.Path == modulePath && d.Replace == nil && d.Version != "" {
			return d.Version
		}
	}
	if info.Main.Path != modulePath && !strings.HasPrefix(info.Main.Path, modulePath+"/") {
		return ""
	}
	if info.Main.Version == "(devel)" {
		return ""
	}
	return info.Main.Version
}

func orDevel(v string) string {
	if v == "" {
		return "devel"
	}
	return v
}
