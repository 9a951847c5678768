package report

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/stormaudit/stormaudit/analyze"
)

// The SARIF version and schema SARIF writes.
const (
	SARIFVersion = "2.1.0"
	SARIFSchema  = "https://json.schemastore.org/sarif-2.1.0.json"
)

// FingerprintKey is the partialFingerprints key of SARIF results; a new
// way of computing it gets a new version.
const FingerprintKey = "stormauditFinding/v1"

// sarifRun is a run of a SARIF log but its results, which SARIF writes one
// by one between its invocations and its properties.
type sarifRun struct {
	Tool        sarifTool
	Invocations []sarifInvocation
	Properties  map[string]any
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name    string      `json:"name"`
	Version string      `json:"version,omitempty"`
	Rules   []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string       `json:"id"`
	Name                 string       `json:"name,omitempty"`
	ShortDescription     sarifMessage `json:"shortDescription"`
	FullDescription      sarifMessage `json:"fullDescription"`
	Help                 sarifMessage `json:"help"`
	DefaultConfiguration sarifConfig  `json:"defaultConfiguration"`
}

type sarifConfig struct {
	Level string `json:"level"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifInvocation struct {
	ExecutionSuccessful bool                `json:"executionSuccessful"`
	ExitCode            int                 `json:"exitCode"`
	Notifications       []sarifNotification `json:"toolExecutionNotifications,omitempty"`
}

type sarifNotification struct {
	Level   string       `json:"level"`
	Message sarifMessage `json:"message"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifMessage      `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	RelatedLocations    []sarifLocation   `json:"relatedLocations,omitempty"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Properties          map[string]any    `json:"properties"`
}

type sarifLocation struct {
	ID               *int           `json:"id,omitempty"`
	PhysicalLocation sarifPhysical  `json:"physicalLocation"`
	LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
	Message          *sarifMessage  `json:"message,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           sarifRegion   `json:"region"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine int64 `json:"startLine"`
}

type sarifLogical struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

// SARIFOptions configure SARIF.
type SARIFOptions struct {
	// ExitCode is the exit status of the run, which the invocation
	// records.
	ExitCode int
	// Version is the tool's version, if known.
	Version string
}

// SARIF writes the result as a SARIF 2.1.0 log (see the package
// documentation). It encodes the results one at a time: its memory does
// not grow with their number beyond a fingerprint each.
func SARIF(w io.Writer, r *analyze.Result, opts SARIFOptions) error {
	rules := rulesOf(r)
	run := sarifRun{
		Tool:        sarifTool{Driver: sarifDriver{Name: "stormaudit", Version: opts.Version, Rules: make([]sarifRule, 0, len(rules))}},
		Invocations: []sarifInvocation{{ExecutionSuccessful: true, ExitCode: opts.ExitCode}},
		Properties: map[string]any{"devices": r.Summary.Devices, "records": r.Summary.Records,
			"rejected": r.Summary.Rejected, "policy": r.Summary.Policy.Source},
	}
	for _, ri := range rules {
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRuleOf(ri))
	}
	for _, n := range r.Summary.Notes {
		run.Invocations[0].Notifications = append(run.Invocations[0].Notifications,
			sarifNotification{Level: "note", Message: sarifMessage{Text: n}})
	}
	idx := ruleIndex(rules)
	seen := map[string]int{}
	s := newJSONStream(w)
	s.raw("{\n  \"$schema\": \"" + SARIFSchema + "\",\n  \"version\": \"" + SARIFVersion + "\",\n  \"runs\": [\n    {\n      \"tool\": ")
	s.value(run.Tool, 3)
	s.raw(",\n      \"invocations\": ")
	s.value(run.Invocations, 3)
	s.raw(",\n      \"results\": ")
	s.list(len(r.Findings), 3, func(i int) {
		f := r.Findings[i]
		res := sarifResultOf(r, f, idx[f.Rule])
		// findings that share rule, device and first record (a device's
		// delays and its ceilings, say) are told apart by their order
		fp := res.PartialFingerprints[FingerprintKey]
		if k := seen[fp]; k > 0 {
			res.PartialFingerprints[FingerprintKey] = fingerprintOf(fp + "\x00" + strconv.Itoa(k))
		}
		seen[fp]++
		s.value(res, 4)
	})
	s.raw(",\n      \"properties\": ")
	s.value(run.Properties, 3)
	s.raw("\n    }\n  ]\n}\n")
	return s.close()
}

func sarifRuleOf(ri analyze.RuleInfo) sarifRule {
	help := ri.Help
	if help == "" {
		help = ri.Title
	}
	name := camelCase(ri.ID)
	if strings.EqualFold(name, ri.ID) {
		name = "" // SARIF wants a name that differs from the id, or none
	}
	return sarifRule{ID: ri.ID, Name: name, ShortDescription: sarifMessage{Text: ri.Title},
		FullDescription:      sarifMessage{Text: help},
		Help:                 sarifMessage{Text: help},
		DefaultConfiguration: sarifConfig{Level: sarifLevel(ri.Severity)}}
}

func sarifResultOf(r *analyze.Result, f analyze.Finding, ruleIndex int) sarifResult {
	text := f.Message
	if f.Explanation != "" {
		text += "\n\n" + f.Explanation
	}
	res := sarifResult{RuleID: f.Rule, RuleIndex: ruleIndex, Level: sarifLevel(f.Severity),
		Message: sarifMessage{Text: text},
		Properties: map[string]any{"device": f.Device, "severity": f.Severity.String(),
			"start": Time(f.Start), "end": Time(f.End)}}
	first := sarifLocationOf(r, analyze.Ref{Source: 0, Line: 1})
	if len(f.Records) > 0 {
		first = sarifLocationOf(r, f.Records[0])
	}
	first.LogicalLocations = []sarifLogical{{Name: f.Device, Kind: "object"}}
	res.Locations = []sarifLocation{first}
	for i, ref := range f.Records[min(1, len(f.Records)):] {
		loc := sarifLocationOf(r, ref)
		id := i + 1
		loc.ID, loc.Message = &id, &sarifMessage{Text: "record " + refText(r.Sources, ref)}
		res.RelatedLocations = append(res.RelatedLocations, loc)
	}
	res.PartialFingerprints = map[string]string{FingerprintKey: fingerprint(r, f)}
	return res
}

// sarifLocationOf is the input and line of a record. A result without
// records, or of a dataset without inputs, still gets one: code scanning
// rejects results without a physical location.
func sarifLocationOf(r *analyze.Result, ref analyze.Ref) sarifLocation {
	name := "-"
	switch {
	case ref.Source >= 0 && int(ref.Source) < len(r.Sources):
		name = r.Sources[ref.Source]
	case r.Dataset != "":
		name = filepath.Join(r.Dataset, "manifest.json")
	}
	return sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: artifactURI(name)},
		Region: sarifRegion{StartLine: max(ref.Line, 1)}}}
}

// artifactURI turns an input's name into a URI reference: a relative
// path stays relative (with forward slashes, percent-encoded), an absolute
// one becomes a file URI, and stdin is "stdin".
func artifactURI(name string) string {
	if name == "-" {
		return "stdin"
	}
	p := filepath.ToSlash(name)
	if filepath.IsAbs(name) {
		if !strings.HasPrefix(p, "/") {
			p = "/" + p // a Windows drive path
		}
		return (&url.URL{Scheme: "file", Path: p}).String()
	}
	return (&url.URL{Path: p}).String()
}

// fingerprint hashes what identifies a finding across runs: its rule,
// device and first record (input and line), or its start when it has no
// records.
func fingerprint(r *analyze.Result, f analyze.Finding) string {
	where := "start " + strconv.FormatInt(f.Start, 10)
	if len(f.Records) > 0 {
		where = refText(r.Sources, f.Records[0])
	}
	return fingerprintOf(f.Rule + "\x00" + f.Device + "\x00" + where)
}

func fingerprintOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}

func sarifLevel(s analyze.Severity) string {
	switch s {
	case analyze.Error:
		return "error"
	case analyze.Warning:
		return "warning"
	}
	return "note"
}

// camelCase turns a rule id (reset-without-connack) into a SARIF rule
// name (ResetWithoutConnack).
func camelCase(id string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(id, func(r rune) bool { return r == '-' || r == '_' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}
