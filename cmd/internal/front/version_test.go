package front

import (
	"runtime/debug"
	"testing"
)

// TestBuildText: the revision the toolchain embeds is named once, with
// its time and whether the tree was modified.
func TestBuildText(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "eabf701a85e1c2d3"}, {Key: "vcs.time", Value: "2026-12-01T18:36:57Z"}}
	dirty := append(rev[:2:2], debug.BuildSetting{Key: "vcs.modified", Value: "true"})
	for _, c := range []struct {
		v        string
		settings []debug.BuildSetting
		want     string
	}{
		{"devel", nil, "devel"},
		{"devel", rev, "devel eabf701a85e1 2026-12-01T18:36:57Z"},
		{"v1.2.0", dirty, "v1.2.0 eabf701a85e1+dirty 2026-12-01T18:36:57Z"},
		{"v0.0.0-20261201183657-eabf701a85e1+dirty", dirty, "v0.0.0-20261201183657-eabf701a85e1+dirty"},
	} {
		if got := buildText(c.v, c.settings); got != c.want {
			t.Errorf("buildText(%q, %v) = %q, want %q", c.v, c.settings, got, c.want)
		}
	}
}

// TestModuleVersion: stormaudit's own version, whichever driver's module
// is the main one.
func TestModuleVersion(t *testing.T) {
	beam := module + "/cmd/stormaudit-beam"
	for _, c := range []struct {
		name string
		info debug.BuildInfo
		want string
	}{
		{"check in a checkout", debug.BuildInfo{Main: debug.Module{Path: module, Version: "(devel)"}}, ""},
		{"check installed", debug.BuildInfo{Main: debug.Module{Path: module, Version: "v1.2.0"}}, "v1.2.0"},
		{"beam in a checkout", debug.BuildInfo{Main: debug.Module{Path: beam, Version: "(devel)"},
			Deps: []*debug.Module{{Path: module, Version: "v0.0.0-00010101000000-000000000000", Replace: &debug.Module{Path: "../.."}}}}, ""},
		{"beam stamped from the tree", debug.BuildInfo{Main: debug.Module{Path: beam, Version: "v0.0.0-20261201183657-eabf701a85e1"},
			Deps: []*debug.Module{{Path: module, Version: "v0.0.0-00010101000000-000000000000", Replace: &debug.Module{Path: "../.."}}}},
			"v0.0.0-20261201183657-eabf701a85e1"},
		{"beam against a release", debug.BuildInfo{Main: debug.Module{Path: beam, Version: "(devel)"},
			Deps: []*debug.Module{{Path: module, Version: "v1.2.0"}}}, "v1.2.0"},
		{"another program", debug.BuildInfo{Main: debug.Module{Path: "example.com/x", Version: "v9.0.0"}}, ""},
	} {
		if got := moduleVersion(&c.info); got != c.want {
			t.Errorf("%s: moduleVersion = %q, want %q", c.name, got, c.want)
		}
	}
}
