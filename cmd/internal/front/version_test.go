package front

import (
	"runtime/debug"
	"testing"
)

// TestVersionOf: what --version says for each way the binary can be
// built, from the build info the toolchain would record for it.
func TestVersionOf(t *testing.T) {
	const rev, at = "3fa884e1c2ab5d6e7f8091a2b3c4d5e6f7089a1b", "2026-12-07T05:40:00Z"
	pseudo := "v0.0.0-20261207054000-3fa884e1c2ab"
	stamp := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "-buildmode", Value: "exe"}, {Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: at}, {Key: "vcs.modified", Value: modified}}
	}
	main := func(version string, settings []debug.BuildSetting) debug.BuildInfo {
		return debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: version}, Settings: settings}
	}
	beam := debug.BuildInfo{Main: debug.Module{Path: modulePath + "/cmd/stormaudit-beam", Version: pseudo}, Settings: stamp("false"),
		Deps: []*debug.Module{{Path: modulePath, Version: "v0.0.0-00010101000000-000000000000", Replace: &debug.Module{Path: "../.."}}}}
	for _, c := range []struct {
		name    string
		release string
		info    debug.BuildInfo
		want    string
	}{
		{"go run, go test", "", debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "(devel)"}}, "devel"},
		{"go build -buildvcs=false, or in a linked worktree", "", main("(devel)", nil), "devel"},
		{"go install module@v1.2.0", "", main("v1.2.0", nil), "v1.2.0"},
		{"go install module@commit", "", main(pseudo, nil), pseudo},
		{"go build in a clone", "", main(pseudo, stamp("false")), "devel 3fa884e1c2ab (2026-12-07T05:40:00Z)"},
		{"go build in a clone with changes", "", main(pseudo+"+dirty", stamp("true")), "devel 3fa884e1c2ab (2026-12-07T05:40:00Z, modified)"},
		{"go build in a clone before Go 1.24", "", main("(devel)", stamp("true")), "devel 3fa884e1c2ab (2026-12-07T05:40:00Z, modified)"},
		{"go build in a clone at a tag", "", main("v1.2.0", stamp("false")), "v1.2.0 3fa884e1c2ab (2026-12-07T05:40:00Z)"},
		{"go build in a clone at a tag, with changes", "", main("v1.2.0+dirty", stamp("true")), "v1.2.0 3fa884e1c2ab (2026-12-07T05:40:00Z, modified)"},
		{"a release build", "v1.3.0", main(pseudo, stamp("false")), "v1.3.0 3fa884e1c2ab (2026-12-07T05:40:00Z)"},
		{"a release build, nothing stamped", "v1.3.0", main("(devel)", nil), "v1.3.0"},
		{"stormaudit-beam in the same clone", "", beam, "devel 3fa884e1c2ab (2026-12-07T05:40:00Z)"},
		{"a revision without its time", "", main("(devel)", []debug.BuildSetting{{Key: "vcs.revision", Value: "3fa884e1"}}), "devel 3fa884e1"},
	} {
		if got := versionOf(c.release, &c.info); got != c.want {
			t.Errorf("%s: versionOf(%q, ...) = %q, want %q", c.name, c.release, got, c.want)
		}
	}
}

// TestModuleVersion: stormaudit's own version, whichever driver's module
// is the main one.
func TestModuleVersion(t *testing.T) {
	beam := modulePath + "/cmd/stormaudit-beam"
	for _, c := range []struct {
		name string
		info debug.BuildInfo
		want string
	}{
		{"check in a checkout", debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "(devel)"}}, ""},
		{"check installed", debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "v1.2.0"}}, "v1.2.0"},
		{"beam in a checkout", debug.BuildInfo{Main: debug.Module{Path: beam, Version: "(devel)"},
			Deps: []*debug.Module{{Path: modulePath, Version: "v0.0.0-00010101000000-000000000000", Replace: &debug.Module{Path: "../.."}}}}, ""},
		{"beam stamped from the tree", debug.BuildInfo{Main: debug.Module{Path: beam, Version: "v0.0.0-20261201183657-eabf701a85e1"},
			Deps: []*debug.Module{{Path: modulePath, Version: "v0.0.0-00010101000000-000000000000", Replace: &debug.Module{Path: "../.."}}}},
			"v0.0.0-20261201183657-eabf701a85e1"},
		{"beam against a release", debug.BuildInfo{Main: debug.Module{Path: beam, Version: "(devel)"},
			Deps: []*debug.Module{{Path: modulePath, Version: "v1.2.0"}}}, "v1.2.0"},
		{"another program", debug.BuildInfo{Main: debug.Module{Path: "example.com/x", Version: "v9.0.0"}}, ""},
	} {
		if got := moduleVersion(&c.info); got != c.want {
			t.Errorf("%s: moduleVersion = %q, want %q", c.name, got, c.want)
		}
	}
}
