package main

import (
	"runtime/debug"
	"strings"
)

// version is set by a release build (-ldflags "-X main.version=v1.2.3");
// otherwise versionText reads what the Go toolchain embedded.
var version = ""

// versionText is what --version prints and datasets record as their
// creator: the release version, else the module's version (set when it
// was installed as module@version), else "devel"; then the VCS revision
// and its time that go build embeds from a checkout, marked "+dirty"
// when the tree had changes.
func versionText() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return orDevel(version)
	}
	v := version
	if v == "" && info.Main.Version != "(devel)" {
		v = info.Main.Version
	}
	return buildText(orDevel(v), info.Settings)
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
