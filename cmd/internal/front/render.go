package front

import (
	"io"
	"path/filepath"
	"strings"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/report"
)

// JUnitDevices is the largest fleet whose devices each get a JUnit
// testcase; larger fleets get one "N other devices" testcase per rule.
const JUnitDevices = 1000

// RenderOptions are what Render needs besides the result. Its fields are
// plain values: a driver may ship them to the worker that renders.
type RenderOptions struct {
	PerRule     int              // text: findings shown per rule (-1: all)
	MaxResults  int              // sarif: results, the worst first (0: all)
	Annotations int              // github: findings annotated (-1: all)
	ExitCode    int              // sarif: the exit status of the run
	FailOn      analyze.Severity // junit: the severity a finding fails at
	Version     string           // sarif: the tool's version (Version)
	// Fingerprints are the findings' fingerprints for sarif, when a
	// baseline removed some (report.Baseline.Filter); nil to compute them.
	Fingerprints []string
	// Devices are the fleet's devices for junit, when the driver has
	// them; nil to take those the check listed (FleetStats.IDs).
	Devices []string
	// Color draws the text's severities in colour (report.TextOptions).
	Color bool
}

// Render writes res to w in format, one of Formats (text for any other).
func Render(w io.Writer, format string, res *analyze.Result, o RenderOptions) error {
	switch format {
	case "json":
		return report.JSON(w, res)
	case "sarif":
		return report.SARIF(w, res, report.SARIFOptions{ExitCode: o.ExitCode, Version: o.Version, MaxResults: o.MaxResults, Fingerprints: o.Fingerprints})
	case "junit":
		opts := report.JUnitOptions{FailOn: o.FailOn, Name: analyze.DeviceName}
		if res.Summary.Devices <= JUnitDevices {
			opts.Devices = o.Devices
			if opts.Devices == nil && res.Summary.Fleet != nil {
				opts.Devices = res.Summary.Fleet.IDs // what the check saw: no second read of the dataset
			}
		}
		return report.JUnit(w, res, opts)
	case "github":
		return report.GitHub(w, res, o.Annotations)
	}
	return report.Text(w, res, report.TextOptions{PerRule: o.PerRule, Color: o.Color})
}

// RelativeSources names res's inputs relative to the working directory
// wd where they are in it or below: an absolute path the user did not
// type is not written into a report that outlives the run.
func RelativeSources(res *analyze.Result, wd string) {
	if wd == "" {
		return
	}
	for i, s := range res.Sources {
		if filepath.IsAbs(s) {
			if rel, err := filepath.Rel(wd, s); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				res.Sources[i] = rel
			}
		}
	}
}
