package main

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
