package report

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/stormaudit/stormaudit/internal/safe"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/auditfmt"
)

// The SARIF version and schema SARIF writes.
const (
	SARIFVersion = "2.1.0"
	SARIFSchema  = "https://json.schemastore.org/sarif-2.1.0.json"
)

// InformationURI is the project's home, the driver's informationUri;
// RulesURI is the page that documents every rule, a section each (the
// rule's helpUri is RulesURI#id, the anchor GitHub makes of the heading
// "## id").
const (
	InformationURI = "https://github.com/stormaudit/stormaudit"
	RulesURI       = InformationURI + "/blob/main/docs/rules.md"
)

// FingerprintKey is the partialFingerprints key of SARIF results, and
// the fingerprint of the baselines WriteBaseline writes; a new way of
// computing the fingerprints gets a new version (FingerprintVersion).
// FingerprintKeyV2 is that of the fingerprints before, which hashed the
// shape of a finding's message: ReadBaseline still reads the baselines
// written with them.
const (
	FingerprintVersion = "v3"
	FingerprintKey     = "stormauditFinding/" + FingerprintVersion
	FingerprintKeyV2   = "stormauditFinding/v2"
)

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
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string       `json:"id"`
	Name                 string       `json:"name,omitempty"`
	ShortDescription     sarifMessage `json:"shortDescription"`
	FullDescription      sarifMessage `json:"fullDescription"`
	Help                 sarifMessage `json:"help"`
	HelpURI              string       `json:"helpUri,omitempty"`
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
	Overrides           []sarifOverride     `json:"ruleConfigurationOverrides,omitempty"`
}

// sarifOverride is a rule the run's configuration turned off: SARIF's
// configurationOverride, pointing at the rule's descriptor.
type sarifOverride struct {
	Descriptor    sarifDescriptorRef `json:"descriptor"`
	Configuration sarifEnabled       `json:"configuration"`
}

type sarifDescriptorRef struct {
	ID    string `json:"id"`
	Index int    `json:"index"`
}

type sarifEnabled struct {
	Enabled bool `json:"enabled"`
}

type sarifNotification struct {
	Level   string       `json:"level"`
	Message sarifMessage `json:"message"`
}

// SARIFOptions configure SARIF.
type SARIFOptions struct {
	// ExitCode is the exit status of the run, which the invocation
	// records.
	ExitCode int
	// Version is the tool's version, if known.
	Version string
	// MaxResults bounds the results written, the worst first (the
	// findings' order); a notification says how many were left out, by
	// severity. 0 means no bound. GitHub code scanning keeps at most
	// 25,000 results of a run, and of a run with more only the 5,000
	// worst: DefaultSARIFMax stays within both.
	MaxResults int
	// Fingerprints, when not nil, are the findings' fingerprints, in
	// order: those of the whole result when a baseline removed some
	// (Baseline.Filter), so that a finding keeps its fingerprint.
	Fingerprints []string
	// Root is the directory the artifact locations of inputs within it
	// are relative to, the run's SrcRoot (the uriBaseId %SRCROOT%): the
	// repository's root. WorkDir is the directory the result's relative
	// input names are relative to. Both are absolute; when WorkDir is
	// empty it is the working directory, and when Root is, SourceRoot of
	// WorkDir.
	Root, WorkDir string
}

// SrcRoot is the uriBaseId of the artifact locations of inputs within
// the repository's root.
const SrcRoot = "%SRCROOT%"

// SourceRoot returns the root of the repository dir is in: dir or the
// nearest directory above it with a .git (a directory, or the file of a
// worktree or submodule); dir itself when none has one. dir is absolute.
func SourceRoot(dir string) string {
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			return dir
		}
		d = up
	}
}

// DefaultSARIFMax is the bound on results a check writes unless told.
const DefaultSARIFMax = 5000

// SARIF writes the result as a SARIF 2.1.0 log (see the package
// documentation). It encodes the results one at a time: its memory does
// not grow with their number beyond a fingerprint each.
func SARIF(w io.Writer, r *analyze.Result, opts SARIFOptions) error {
	// C1 and bidirectional controls a device wrote reach no viewer raw
	e := safe.EscapeWriter(w, safe.JSONEscape)
	err := writeSARIF(e, r, opts)
	if cerr := e.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeSARIF writes what SARIF documents, before its controls are escaped.
func writeSARIF(w io.Writer, r *analyze.Result, opts SARIFOptions) error {
	rules := rulesOf(r)
	run := sarifRun{
		Tool: sarifTool{Driver: sarifDriver{Name: "stormaudit", Version: opts.Version, InformationURI: InformationURI,
			Rules: make([]sarifRule, 0, len(rules))}},
		Invocations: []sarifInvocation{{ExecutionSuccessful: true, ExitCode: opts.ExitCode}},
		Properties: map[string]any{"devices": r.Summary.Devices, "records": r.Summary.Records,
			"rejected": r.Summary.Rejected, "policy": r.Summary.Policy.Source},
	}
	if st := r.Summary.Fleet; st != nil && len(st.Incidents) > 0 {
		// what the fleet went through, as the text says it: SARIF has no
		// place for it but the run's properties
		var incs []string
		var whys []map[string]any
		for i := range st.Incidents {
			in := &st.Incidents[i]
			incs = append(incs, IncidentBlock(in))
			var gone []string
			for _, u := range in.Unrecovered {
				gone = append(gone, u.Device+": "+u.State)
			}
			why := map[string]any{"diagnosis": in.Diagnosis, "unrecovered": len(in.Unrecovered),
				"unrecoveredDevices": gone}
			if c := jsonCostOf(in); c != nil {
				why["cost"] = c
			}
			if p := jsonPresenceOf(presenceOf(in)); p != nil {
				why["presence"] = p
			}
			whys = append(whys, why)
		}
		run.Properties["incidents"] = incs
		run.Properties["incidentDiagnoses"] = whys
		if len(st.ClockOffsets) > 0 {
			run.Properties["clocks"] = ClockText(st.ClockOffsets)
		}
	}
	for _, ri := range rules {
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRuleOf(ri))
	}
	// the rules the configuration turned off: described, and overridden
	// as not enabled, so that a reader sees they did not run by choice
	for _, rule := range analyze.Rules() {
		info := rule.Info()
		if !slices.ContainsFunc(r.Summary.NotRun, func(n analyze.Skip) bool { return n.Rule == info.ID && n.Reason == "disabled" }) {
			continue
		}
		run.Invocations[0].Overrides = append(run.Invocations[0].Overrides, sarifOverride{
			Descriptor: sarifDescriptorRef{ID: info.ID, Index: len(run.Tool.Driver.Rules)}, Configuration: sarifEnabled{Enabled: false}})
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRuleOf(info))
	}
	for _, n := range r.Summary.Notes {
		run.Invocations[0].Notifications = append(run.Invocations[0].Notifications,
			sarifNotification{Level: "note", Message: sarifMessage{Text: n}})
	}
	findings := r.Findings
	if n := opts.MaxResults; n > 0 && len(findings) > n {
		left := map[analyze.Severity]int{}
		for _, f := range findings[n:] {
			left[f.Severity]++
		}
		run.Invocations[0].Notifications = append(run.Invocations[0].Notifications, sarifNotification{Level: "warning",
			Message: sarifMessage{Text: fmt.Sprintf("%d of %d findings are not in this log (%d error, %d warning, %d info): "+
				"results are bounded to the %d worst (--max-results; 0 writes all, which GitHub code scanning truncates beyond 25,000)",
				len(findings)-n, len(findings), left[analyze.Error], left[analyze.Warning], left[analyze.Info], n)}})
		findings = findings[:n]
	}
	idx := ruleIndex(rules)
	fps := opts.Fingerprints
	if fps == nil {
		fps = Fingerprints(r)
	}
	s := newJSONStream(w)
	s.raw("{\n  \"$schema\": \"" + SARIFSchema + "\",\n  \"version\": \"" + SARIFVersion + "\",\n  \"runs\": [\n    {\n      \"tool\": ")
	s.value(run.Tool, 3)
	s.raw(",\n      \"invocations\": ")
	s.value(run.Invocations, 3)
	base := newArtifactBase(opts.Root, opts.WorkDir)
	if base.root != "" {
		s.raw(",\n      \"originalUriBaseIds\": ")
		s.value(map[string]sarifArtifactLocation{SrcRoot: {URI: base.rootURI(),
			Description: &sarifMessage{Text: "the root of the repository the inputs are in (the directory with .git), or the working directory outside one"}}}, 3)
	}
	s.raw(",\n      \"results\": [")
	uris := sarifURIs(r, base)
	var b []byte
	for i := range findings {
		f, fp := &findings[i], fps[i]
		b = append(b[:0], "\n        "...)
		if i > 0 {
			b = append(b[:0], ",\n        "...)
		}
		b = appendSARIFResult(b, r, f, idx[f.Rule], uris, fp)
		s.bytes(b)
	}
	if len(findings) > 0 {
		s.raw("\n      ")
	}
	s.raw("]")
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
		HelpURI:              RuleHelpURI(ri.ID),
		DefaultConfiguration: sarifConfig{Level: sarifLevel(ri.Severity)}}
}

// catalogued holds the ids of the rules analyze knows.
var catalogued = sync.OnceValue(func() map[string]bool {
	ids := map[string]bool{}
	for _, r := range analyze.Rules() {
		ids[r.Info().ID] = true
	}
	return ids
})

// RuleHelpURI returns the address of the section of docs/rules.md on the
// rule id, or "" for a rule analyze does not know (a finding's rule that
// no rule of the check names has no section to point at).
func RuleHelpURI(id string) string {
	if !catalogued()[id] {
		return ""
	}
	return RulesURI + "#" + id // the heading is the id: lower case, hyphens kept
}

// sarifURIs returns the artifact location of each input, and last that
// of a result without records (the first input, or the dataset's
// manifest).
func sarifURIs(r *analyze.Result, base artifactBase) []artifact {
	uris := make([]artifact, 0, len(r.Sources)+1)
	for _, name := range r.Sources {
		uris = append(uris, base.locate(name))
	}
	switch {
	case len(r.Sources) > 0:
		uris = append(uris, uris[0])
	case r.Dataset != "":
		uris = append(uris, base.locate(filepath.Join(r.Dataset, "manifest.json")))
	default:
		uris = append(uris, base.locate("-"))
	}
	return uris
}

// An artifact is the location of an input: a URI, relative to the
// uriBaseId Base when Base is set.
type artifact struct {
	URI, Base string
}

type sarifArtifactLocation struct {
	URI         string        `json:"uri"`
	Description *sarifMessage `json:"description,omitempty"`
}

// artifactBase places inputs: root is the repository's root, wd the
// directory relative names are relative to; root is "" when the working
// directory is not known, and then names are placed as given.
type artifactBase struct {
	root, wd string
}

func newArtifactBase(root, wd string) artifactBase {
	if wd == "" {
		var err error
		if wd, err = os.Getwd(); err != nil {
			return artifactBase{}
		}
	}
	if root == "" {
		root = SourceRoot(wd)
	}
	return artifactBase{root: filepath.Clean(root), wd: filepath.Clean(wd)}
}

// rootURI is the file URI of the root, ending in a slash as SARIF wants
// of a base.
func (b artifactBase) rootURI() string {
	u := fileURI(b.root)
	if !strings.HasSuffix(u, "/") {
		u += "/"
	}
	return u
}

// locate returns the artifact location of the input name: a path within
// the root relative to it (base SrcRoot), one outside as a file URI, and
// stdin as "stdin".
func (b artifactBase) locate(name string) artifact {
	if name == "-" || b.root == "" {
		return artifact{URI: artifactURI(name)}
	}
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(b.wd, p)
	}
	rel, err := filepath.Rel(b.root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return artifact{URI: fileURI(filepath.Clean(p))}
	}
	return artifact{URI: artifactURI(rel), Base: SrcRoot}
}

// appendSARIFResult appends f as one SARIF result, on one line: its
// first record (or, without records, line 1 of the first input: code
// scanning rejects results without a physical location) as its location,
// with the device as a logical location, the others as related
// locations.
func appendSARIFResult(b []byte, r *analyze.Result, f *analyze.Finding, ruleIndex int, uris []artifact, fp string) []byte {
	loc := func(b []byte, ref analyze.Ref) []byte {
		a := uris[len(uris)-1]
		if ref.Source >= 0 && int(ref.Source) < len(r.Sources) {
			a = uris[ref.Source]
		}
		b = append(b, `"physicalLocation":{"artifactLocation":{"uri":`...)
		b = auditfmt.AppendJSONString(b, a.URI)
		if a.Base != "" {
			b = append(b, `,"uriBaseId":`...)
			b = auditfmt.AppendJSONString(b, a.Base)
		}
		b = append(b, `},"region":{"startLine":`...)
		b = strconv.AppendInt(b, max(ref.Line, 1), 10)
		return append(b, `}}`...)
	}
	b = append(b, `{"ruleId":`...)
	b = auditfmt.AppendJSONString(b, f.Rule)
	b = append(b, `,"ruleIndex":`...)
	b = strconv.AppendInt(b, int64(ruleIndex), 10)
	b = append(b, `,"level":"`...)
	b = append(b, sarifLevel(f.Severity)...)
	b = append(b, `","message":{"text":`...)
	b = auditfmt.AppendJSONString(b, f.Message)
	if x := f.Explained(); x != "" { // message, a blank line, explanation: one string
		b = append(b[:len(b)-1], `\n\n`...)
		n := len(b)
		b = auditfmt.AppendJSONString(b, x)
		b = append(b[:n], b[n+1:]...)
	}
	b = append(b, `},"locations":[{`...)
	first := analyze.Ref{Source: -1, Line: 1}
	if len(f.Records) > 0 {
		first = f.Records[0]
	}
	b = loc(b, first)
	b = append(b, `,"logicalLocations":[{"name":`...)
	b = auditfmt.AppendJSONString(b, f.Device)
	b = append(b, `,"kind":"object"}]}]`...)
	if len(f.Records) > 1 {
		b = append(b, `,"relatedLocations":[`...)
		for i, ref := range f.Records[1:] {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = strconv.AppendInt(b, int64(i+1), 10)
			b = append(b, ',')
			b = append(loc(b, ref), '}')
		}
		b = append(b, ']')
	}
	b = append(b, `,"partialFingerprints":{"`+FingerprintKey+`":"`...)
	b = append(b, fp...)
	b = append(b, `"},"properties":{"device":`...)
	b = auditfmt.AppendJSONString(b, f.Device)
	b = append(b, `,"end":"`...)
	b = append(b, Time(f.End)...)
	b = append(b, '"')
	if f.Kind != "" {
		b = append(b, `,"kind":`...)
		b = auditfmt.AppendJSONString(b, f.Kind)
	}
	b = append(b, `,"severity":"`...)
	b = append(b, f.Severity.String()...)
	b = append(b, `","start":"`...)
	b = append(b, Time(f.Start)...)
	return append(b, `"}}`...)
}

// artifactURI turns an input's name into a URI reference: a relative
// path stays relative (with forward slashes, percent-encoded), an absolute
// one becomes a file URI, and stdin is "stdin".
func artifactURI(name string) string {
	if name == "-" {
		return "stdin"
	}
	if filepath.IsAbs(name) {
		return fileURI(name)
	}
	p := filepath.ToSlash(filepath.Clean(name)) // ./f.ndjson is f.ndjson
	return (&url.URL{Path: p}).String()
}

// fileURI returns the file URI of the absolute path p.
func fileURI(p string) string {
	p = filepath.ToSlash(filepath.Clean(p))
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive path
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// fingerprint hashes what identifies a finding across runs: its rule,
// its kind, its device and when it began (the time of its first record),
// none of which depends on where the log sits, on which line a record is,
// on how many records the log holds, or on how its message words it.
func fingerprint(f *analyze.Finding) string {
	return fingerprintOf(f.Rule + "\x00" + f.Kind + "\x00" + f.Device + "\x00" + strconv.FormatInt(f.Start, 10))
}

// fingerprintV2 is the fingerprint of FingerprintKeyV2: the rule, the
// device, the start and what kind of finding of its rule it is, as the
// shape of its message told it (the words, not the numbers), so that
// rewording a message changed it. Kept to read the baselines written
// with it.
func fingerprintV2(f *analyze.Finding) string {
	return fingerprintOf(f.Rule + "\x00" + f.Device + "\x00" + strconv.FormatInt(f.Start, 10) + "\x00" + messageShape(f.Message))
}

var (
	numbers = regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)
	plurals = regexp.MustCompile(`# ([A-Za-z_-]+?)s\b`)
)

// messageShape is a message with its numbers as # and the nouns they
// count in the singular: "3 of 15 delays" and "1 of 1 delay" have one
// shape, "ceiling_s disagrees" another.
func messageShape(msg string) string {
	return plurals.ReplaceAllString(numbers.ReplaceAllString(msg, "#"), "# $1")
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
