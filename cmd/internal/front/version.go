package front

import (
	"runtime/debug"
	"strings"
)

// module is the path of stormaudit's module.
const module = "github.com/stormaudit/stormaudit"

// Version is what --version prints, datasets record as their creator
// and SARIF names as the tool's version: release (a release build sets
// it with -ldflags "-X main.version=v1.2.3"), else the version of
// stormaudit's module the binary was built from (set when it was
// installed as module@version), else "devel"; then the VCS revision and
// its time that go build embeds from a checkout, marked "+dirty" when the
// tree had changes. Both drivers built from one tree say the same.
func Version(release string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return orDevel(release)
	}
	v := release
	if v == "" {
		v = moduleVersion(info)
	}
	return buildText(orDevel(v), info.Settings)
}

// moduleVersion is the version of stormaudit's module in info: a
// requirement's (a driver in a module of its own built against a
// release), or the main module's when it is stormaudit's or one nested
// in its tree (stormaudit-beam, which replaces the requirement by the
// tree it is in); "" when not known.
func moduleVersion(info *debug.BuildInfo) string {
	for _, d := range info.Deps {
		if d.Path == module && d.Replace == nil && d.Version != "" {
			return d.Version
		}
	}
	if info.Main.Path != module && !strings.HasPrefix(info.Main.Path, module+"/") {
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

// buildText appends to v the revision, its time and whether the tree was
// modified, as the build settings say.
func buildText(v string, settings []debug.BuildSetting) string {
	var rev, at string
	dirty := false
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" || strings.Contains(v, rev[:min(12, len(rev))]) {
		return v // a pseudo-version names the revision, its time and "+dirty" already
	}
	parts := []string{v, rev[:min(12, len(rev))]}
	if dirty {
		parts[1] += "+dirty"
	}
	if at != "" {
		parts = append(parts, at)
	}
	return strings.Join(parts, " ")
}
