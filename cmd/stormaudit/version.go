package main

import "github.com/stormaudit/stormaudit/cmd/internal/front"

// version is set by a release build (-ldflags "-X main.version=v1.2.3");
// otherwise versionText reads what the Go toolchain embedded.
var version = ""

// versionText is what --version prints, datasets record as their
// creator and SARIF names: front.Version, which stormaudit-beam prints
// too.
func versionText() string { return front.Version(version) }
