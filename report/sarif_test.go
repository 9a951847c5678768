package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stormaudit/stormaudit/analyze"
)

// decodedSARIF is the part of a SARIF log that code scanning reads.
type decodedSARIF struct {
	Schema  string `json:"$schema"`
	Version string
	Runs    []struct {
		Tool struct {
			Driver struct {
				Name           string
				Version        string
				InformationURI string
				Rules          []struct {
					ID, Name                                string
					ShortDescription, FullDescription, Help struct{ Text string }
					HelpURI                                 string
					DefaultConfiguration                    struct{ Level string }
				}
			}
		}
		Properties         map[string]any
		OriginalURIBaseIDs map[string]struct {
			URI         string
			Description struct{ Text string }
		}
		Invocations []struct {
			ExecutionSuccessful        bool
			ExitCode                   int
			ToolExecutionNotifications []struct {
				Level   string
				Message struct{ Text string }
			}
		}
		Results []struct {
			RuleID    string
			RuleIndex int
			Level     string
			Message   struct{ Text string }
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct{ URI, URIBaseID string }
					Region           struct{ StartLine int64 }
				}
				LogicalLocations []struct{ Name, Kind string }
			}
			RelatedLocations []struct {
				ID               int
				PhysicalLocation struct {
					ArtifactLocation struct{ URI string }
					Region           struct{ StartLine int64 }
				}
			}
			PartialFingerprints map[string]string
			Properties          map[string]any
		}
	}
}

func sarifOf(t *testing.T, exit int) decodedSARIF {
	t.Helper()
	var b bytes.Buffer
	if err := SARIF(&b, fixture(), SARIFOptions{ExitCode: exit, Version: "1.2.3", Root: "/repo", WorkDir: "/repo"}); err != nil {
		t.Fatal(err)
	}
	var log decodedSARIF
	if err := json.Unmarshal(b.Bytes(), &log); err != nil {
		t.Fatalf("decode: %v\n%s", err, b.Bytes())
	}
	return log
}

func TestSARIF(t *testing.T) {
	log := sarifOf(t, 1)
	if log.Schema != SARIFSchema || log.Version != "2.1.0" || len(log.Runs) != 1 {
		t.Fatalf("header = %q %q, %d runs", log.Schema, log.Version, len(log.Runs))
	}
	run := log.Runs[0]
	d := run.Tool.Driver
	if d.Name != "stormaudit" || d.Version != "1.2.3" || len(d.Rules) != 3 {
		t.Fatalf("driver = %+v", d)
	}
	if r := d.Rules[1]; r.ID != "delay-bounds" || r.Name != "DelayBounds" || r.ShortDescription.Text == "" ||
		r.FullDescription.Text == "" || r.Help.Text == "" || r.DefaultConfiguration.Level != "error" {
		t.Errorf("rule 1 = %+v", r)
	}
	if d.InformationURI != InformationURI {
		t.Errorf("informationUri = %q, want %q", d.InformationURI, InformationURI)
	}
	if u := d.Rules[2].HelpURI; u != "https://github.com/stormaudit/stormaudit/blob/main/docs/rules.md#hot-loop" {
		t.Errorf("hot-loop helpUri = %q", u)
	}
	if d.Rules[0].Name != "" {
		t.Errorf("resync: name %q, want none (a name must differ from the id)", d.Rules[0].Name)
	}
	if d.Rules[2].DefaultConfiguration.Level != "warning" {
		t.Errorf("hot-loop level = %q", d.Rules[2].DefaultConfiguration.Level)
	}
	if whys, _ := run.Properties["incidentDiagnoses"].([]any); len(whys) != 1 ||
		fmt.Sprint(whys[0]) != "map[diagnosis:no-answer unrecovered:1 unrecoveredDevices:[dev-0004: waiting]]" {
		t.Errorf("incidentDiagnoses = %v", run.Properties["incidentDiagnoses"])
	}
	if incs, _ := run.Properties["incidents"].([]any); len(incs) != 1 || !strings.Contains(fmt.Sprint(incs[0]), "why: nothing answered") {
		t.Errorf("incidents = %v", run.Properties["incidents"])
	}
	inv := run.Invocations
	if len(inv) != 1 || !inv[0].ExecutionSuccessful || inv[0].ExitCode != 1 || len(inv[0].ToolExecutionNotifications) != 1 {
		t.Errorf("invocations = %+v", inv)
	}
	if len(run.Results) != 5 {
		t.Fatalf("%d results, want 5", len(run.Results))
	}
	for i, res := range run.Results {
		if d.Rules[res.RuleIndex].ID != res.RuleID {
			t.Errorf("result %d: ruleIndex %d is %s, not %s", i, res.RuleIndex, d.Rules[res.RuleIndex].ID, res.RuleID)
		}
		if len(res.Locations) != 1 || res.Locations[0].PhysicalLocation.ArtifactLocation.URI == "" ||
			res.Locations[0].PhysicalLocation.Region.StartLine < 1 {
			t.Errorf("result %d: locations %+v, want one physical location", i, res.Locations)
		}
		if len(res.PartialFingerprints[FingerprintKey]) != 32 {
			t.Errorf("result %d: fingerprints %v", i, res.PartialFingerprints)
		}
	}
	r0 := run.Results[0]
	if r0.Level != "error" || r0.Message.Text != "dev-0002 drew 41.2 s at attempt 3\n\nthe ceiling at attempt 3 is min(120, 1*2^3) = 8 s" {
		t.Errorf("result 0 = %+v", r0)
	}
	loc := r0.Locations[0]
	if a := loc.PhysicalLocation.ArtifactLocation; a.URI != "logs/gw-a.ndjson" || a.URIBaseID != "%SRCROOT%" || loc.PhysicalLocation.Region.StartLine != 12 {
		t.Errorf("result 0 location = %+v", loc.PhysicalLocation)
	}
	if k := r0.Properties["kind"]; k != "delay-bounds/delay-outside-bounds" {
		t.Errorf("result 0 kind = %v", k)
	}
	if len(loc.LogicalLocations) != 1 || loc.LogicalLocations[0].Name != "dev-0002" || loc.LogicalLocations[0].Kind != "object" {
		t.Errorf("result 0 logical locations = %+v", loc.LogicalLocations)
	}
	if rl := r0.RelatedLocations; len(rl) != 1 || rl[0].ID != 1 || rl[0].PhysicalLocation.Region.StartLine != 14 {
		t.Errorf("result 0 related locations = %+v", rl)
	}
	if u := run.Results[1].Locations[0].PhysicalLocation.ArtifactLocation.URI; u != "./odd,name:x.ndjson" {
		t.Errorf("uri = %q", u)
	}
	// A finding without records is placed at line 1 of the first input.
	if p := run.Results[2].Locations[0].PhysicalLocation; p.ArtifactLocation.URI != "logs/gw-a.ndjson" || p.Region.StartLine != 1 {
		t.Errorf("fleet finding location = %+v", p)
	}
	if a := run.Results[3].Locations[0].PhysicalLocation.ArtifactLocation; a.URI != "stdin" || a.URIBaseID != "" {
		t.Errorf("stdin artifact = %+v", a)
	}
	if b := run.OriginalURIBaseIDs; len(b) != 1 || b["%SRCROOT%"].URI != "file:///repo/" || b["%SRCROOT%"].Description.Text == "" {
		t.Errorf("originalUriBaseIds = %+v, want %%SRCROOT%% file:///repo/", b)
	}
	if lv := run.Results[4].Level; lv != "note" {
		t.Errorf("info level = %q, want note", lv)
	}
	if log := sarifOf(t, 0); log.Runs[0].Invocations[0].ExitCode != 0 {
		t.Errorf("exit code not recorded")
	}
}

// TestSARIFFingerprints: a finding's fingerprint depends on its rule,
// kind, device and start only (not on its message, its numbers, its
// explanation, its end or where its records are), and differs between
// findings.
func TestSARIFFingerprints(t *testing.T) {
	r := fixture()
	seen := map[string]int{}
	for i := range r.Findings {
		fp := fingerprint(&r.Findings[i])
		if j, ok := seen[fp]; ok {
			t.Errorf("findings %d and %d share fingerprint %s", j, i, fp)
		}
		seen[fp] = i
	}
	f := analyze.Finding{Rule: "delay-bounds", Kind: "delay-bounds/delay-outside-bounds", Device: "dev-1", Start: 5,
		Message: "3 of 15 delays outside the policy's bounds; the worst 41.2 s"}
	fp := fingerprint(&f)
	g := f
	g.Message, g.Explanation, g.End = "1 of 1 delay outside the policy's bounds; the worst 7 s", "", 9
	g.Records = []analyze.Ref{{Source: 1, Line: 99, File: 0, Row: 3}}
	if got := fingerprint(&g); got != fp {
		t.Errorf("fingerprint changed with the numbers, the explanation or the records: %s, was %s", got, fp)
	}
	for name, change := range map[string]func(*analyze.Finding){
		"device": func(f *analyze.Finding) { f.Device = "dev-0009" },
		"rule":   func(f *analyze.Finding) { f.Rule = "hot-loop" },
		"kind":   func(f *analyze.Finding) { f.Kind = "delay-bounds/ceiling-mismatch" },
		"start":  func(f *analyze.Finding) { f.Start++ },
	} {
		g := f
		change(&g)
		if fingerprint(&g) == fp {
			t.Errorf("fingerprint did not change with the %s", name)
		}
	}
}

// TestFingerprintSurvivesRewording: a finding whose message is reworded
// (a new release says it otherwise) keeps its v3 fingerprint, where its
// v2 fingerprint, which hashed the message's shape, changed: every
// baseline entry of v2 was orphaned by it.
func TestFingerprintSurvivesRewording(t *testing.T) {
	before := analyze.Finding{Rule: "hot-loop", Kind: "hot-loop/tight-loop", Device: "dev-0007", Start: t0,
		Message: "retried in a tight loop: 12 attempts waiting less than 0.1 s each, in 1 run of 5 or more"}
	after := before
	after.Message = "12 retries less than 0.1 s apart (1 run of at least 5): a tight loop"
	if a, b := fingerprint(&before), fingerprint(&after); a != b {
		t.Errorf("v3 fingerprint changed with the wording: %s, then %s", a, b)
	}
	if a, b := fingerprintV2(&before), fingerprintV2(&after); a == b {
		t.Errorf("v2 fingerprint %s did not change with the wording: the test shows nothing", a)
	}
	for _, r := range []*analyze.Result{{Findings: []analyze.Finding{before}}, {Findings: []analyze.Finding{after}}} {
		if fps := Fingerprints(r); len(fps) != 1 || fps[0] != fingerprint(&before) {
			t.Errorf("Fingerprints(%q) = %v, want [%s]", r.Findings[0].Message, fps, fingerprint(&before))
		}
	}
}

// TestFingerprintsPinned: the fingerprints of one finding, as v2 (what
// stormaudit wrote before v3, read from old baselines) and v3 compute
// them. A change of either breaks every baseline and alert of its
// version: a new way of fingerprinting is a new version.
func TestFingerprintsPinned(t *testing.T) {
	f := analyze.Finding{Rule: "delay-bounds", Kind: "delay-bounds/delay-outside-bounds", Device: "dev-0007", Start: 1_764_512_250_123_456_000,
		Message: "3 of 15 delays outside the policy's bounds (2 above, 1 below); the worst 41.2 s at attempt 3, bounds [0, 8] s"}
	if got, want := fingerprintV2(&f), "2ad2273f25311d6cdbbdba9645b419e0"; got != want { // as stormaudit before v3 computed it
		t.Errorf("v2 fingerprint %s, want %s", got, want)
	}
	if got, want := fingerprint(&f), "e9a6364107e620ad1098e7e385e9c887"; got != want {
		t.Errorf("v3 fingerprint %s, want %s", got, want)
	}
}

// TestBaselineKeepsKindsApart: two findings of one rule, device and start
// (a device's delays and its ceilings) keep their own fingerprints
// whichever is present, so a baseline of one never hides the other.
func TestBaselineKeepsKindsApart(t *testing.T) {
	old := analyze.Finding{Rule: "delay-bounds", Kind: "delay-bounds/ceiling-mismatch", Severity: analyze.Warning, Device: "dev-1", Start: 5,
		Message: "ceiling_s disagrees with the policy at 2 attempts"}
	newer := analyze.Finding{Rule: "delay-bounds", Kind: "delay-bounds/delay-outside-bounds", Severity: analyze.Warning, Device: "dev-1", Start: 5,
		Message: "4 of 9 delays outside the policy's bounds"}
	var b strings.Builder
	if err := WriteBaseline(&b, &analyze.Result{Findings: []analyze.Finding{old}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"kind":"delay-bounds/ceiling-mismatch"`) || !strings.Contains(b.String(), `"fingerprint": "stormauditFinding/v3"`) {
		t.Errorf("baseline:\n%s\nwant v3, with the finding's kind", b.String())
	}
	base, err := ReadBaseline(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if base.Version() != "v3" {
		t.Errorf("version %q, want v3", base.Version())
	}
	r := &analyze.Result{Findings: []analyze.Finding{newer, old}}
	base.Filter(r)
	if len(r.Findings) != 1 || r.Findings[0].Message != newer.Message {
		t.Errorf("kept %v, want the new finding alone", r.Findings)
	}
}

// TestBaselineV2: a baseline of v2 fingerprints (the format stormaudit
// wrote before v3: no kinds, the fingerprints of the messages' shapes)
// is read, says it is v2, and drops the findings it lists, matched by
// their v2 fingerprints, while the findings kept keep their v3 ones.
func TestBaselineV2(t *testing.T) {
	r := fixture()
	v2 := fingerprints(r, fingerprintV2)
	doc := `{"version": 1, "fingerprint": "stormauditFinding/v2", "findings": [
		{"fingerprint":"` + v2[0] + `","rule":"delay-bounds","severity":"error","device":"dev-0002","start":"2026-11-30T14:17:35Z","message":"dev-0002 drew 41.2 s at attempt 3"},
		{"fingerprint":"` + v2[2] + `","rule":"resync","severity":"error","device":"fleet","start":"2026-11-30T14:17:30Z","message":"40 devices drew the same delays"}]}`
	base, err := ReadBaseline(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if base.Version() != "v2" || base.Len() != 2 {
		t.Errorf("version %q, %d findings; want v2, 2", base.Version(), base.Len())
	}
	v3 := Fingerprints(r)
	kept, dropped := base.Filter(r)
	if dropped != 2 || len(r.Findings) != 3 || !slices.Equal(kept, []string{v3[1], v3[3], v3[4]}) {
		t.Errorf("dropped %d, kept %v (%d findings); want 2 dropped and the v3 fingerprints of findings 1, 3 and 4 %v", dropped, kept, len(r.Findings), v3)
	}
}

// TestRuleHelpURIs: every rule's helpUri points at an anchor that GitHub
// makes of a heading of docs/rules.md, and a rule analyze does not know
// has none.
func TestRuleHelpURIs(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "rules.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := githubAnchors(string(doc))
	if !anchors["resync"] || !anchors["known-limits"] {
		t.Fatalf("anchors %v: want resync and known-limits among them", anchors)
	}
	rules := analyze.Rules()
	if len(rules) < 20 {
		t.Fatalf("%d rules", len(rules))
	}
	for _, r := range rules {
		id := r.Info().ID
		u := RuleHelpURI(id)
		a, ok := strings.CutPrefix(u, RulesURI+"#")
		if !ok || !anchors[a] {
			t.Errorf("%s: helpUri %q: no heading of docs/rules.md has anchor %q", id, u, a)
		}
	}
	if u := RuleHelpURI("no-such-rule"); u != "" {
		t.Errorf("an unknown rule's helpUri = %q, want none", u)
	}
}

// githubAnchors returns the anchors GitHub gives the headings of a
// Markdown document: the heading's text without its inline markup, in
// lower case, without punctuation but hyphens and underscores, spaces as
// hyphens, and "-1", "-2" ... after a repeated one. Fenced code is not
// read for headings.
func githubAnchors(doc string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for line := range strings.Lines(doc) {
		line = strings.TrimRight(line, "\n")
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		text := strings.TrimLeft(line, "#")
		if fenced || text == line || len(line)-len(text) > 6 || !strings.HasPrefix(text, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(text)) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			seen[a]++
			a += "-" + strconv.Itoa(n)
		} else {
			seen[a]++
		}
		anchors[a] = true
	}
	return anchors
}

func TestGitHubAnchors(t *testing.T) {
	got := githubAnchors("# Rules\n\n## `hot-loop`: a tight loop!\n```\n## not a heading\n```\n## Terms\n## Terms\n####### seven\n#nospace\n")
	want := map[string]bool{"rules": true, "hot-loop-a-tight-loop": true, "terms": true, "terms-1": true}
	if !maps.Equal(got, want) {
		t.Errorf("anchors %v, want %v", got, want)
	}
}

func TestArtifactURI(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"log.ndjson", "log.ndjson"},
		{"logs/gw a.ndjson", "logs/gw%20a.ndjson"},
		{"-", "stdin"},
		{"/var/log/gw.ndjson", "file:///var/log/gw.ndjson"},
		{"a:b.ndjson", "./a:b.ndjson"},
		{"100%.csv", "100%25.csv"},
	} {
		if got := artifactURI(tt.in); got != tt.want {
			t.Errorf("artifactURI(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestArtifactLocations: an input within the repository is located
// relative to its root (%SRCROOT%), however it was named (../logs/x.ndjson
// from a subdirectory, or an absolute path); one outside is a file URI.
func TestArtifactLocations(t *testing.T) {
	b := newArtifactBase("/repo", "/repo/ci")
	for _, tt := range []struct{ in, uri, base string }{
		{"../logs/x.ndjson", "logs/x.ndjson", "%SRCROOT%"},
		{"x.ndjson", "ci/x.ndjson", "%SRCROOT%"},
		{"./x.ndjson", "ci/x.ndjson", "%SRCROOT%"},
		{"/repo/logs/y.ndjson", "logs/y.ndjson", "%SRCROOT%"},
		{"../logs/gw a.ndjson", "logs/gw%20a.ndjson", "%SRCROOT%"},
		{"../a:b.ndjson", "./a:b.ndjson", "%SRCROOT%"},
		{"../../elsewhere/z.ndjson", "file:///elsewhere/z.ndjson", ""},
		{"/var/log/gw.ndjson", "file:///var/log/gw.ndjson", ""},
		{"/repository/x.ndjson", "file:///repository/x.ndjson", ""},
		{"-", "stdin", ""},
	} {
		if got := b.locate(tt.in); got != (artifact{tt.uri, tt.base}) {
			t.Errorf("locate(%q) = %+v, want %q base %q", tt.in, got, tt.uri, tt.base)
		}
	}
	if u := (artifactBase{root: "/"}).rootURI(); u != "file:///" {
		t.Errorf("root / = %q", u)
	}
	if u := b.rootURI(); u != "file:///repo/" {
		t.Errorf("root /repo = %q", u)
	}
}

// TestSourceRoot: the root is the nearest directory up with a .git, a
// directory or a worktree's file; without one, the directory itself.
func TestSourceRoot(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "repo", "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if SourceRoot(dir) == dir { // no .git above the temporary directory
		if got := SourceRoot(sub); got != sub {
			t.Errorf("no .git: SourceRoot = %s, want %s", got, sub)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "repo", ".git"), []byte("gitdir: /elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := SourceRoot(sub), filepath.Join(dir, "repo"); got != want {
		t.Errorf("SourceRoot = %s, want %s", got, want)
	}
	if err := os.Mkdir(filepath.Join(dir, "repo", "a", ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, want := SourceRoot(sub), filepath.Join(dir, "repo", "a"); got != want {
		t.Errorf("SourceRoot = %s, want %s (the nearest)", got, want)
	}
}

func TestCamelCase(t *testing.T) {
	for in, want := range map[string]string{"reset-without-connack": "ResetWithoutConnack", "resync": "Resync", "a--b": "AB"} {
		if got := camelCase(in); got != want {
			t.Errorf("camelCase(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSARIFFingerprintsDistinct: two findings of one rule and device that
// rest first on the same record (a device's delays and its ceilings) get
// distinct fingerprints, or code scanning merges them into one alert.
func TestSARIFFingerprintsDistinct(t *testing.T) {
	ref := analyze.Ref{Source: 0, Line: 7}
	r := &analyze.Result{Sources: []string{"log.ndjson"}, Rules: []analyze.RuleInfo{{ID: "delay-bounds", Severity: analyze.Error, Title: "t"}},
		Findings: []analyze.Finding{
			{Rule: "delay-bounds", Kind: "delay-bounds/delay-outside-bounds", Severity: analyze.Error, Device: "dev-1", Message: "delays", Records: []analyze.Ref{ref}},
			{Rule: "delay-bounds", Kind: "delay-bounds/ceiling-mismatch", Severity: analyze.Error, Device: "dev-1", Message: "ceilings", Records: []analyze.Ref{ref}},
		}}
	var b bytes.Buffer
	if err := SARIF(&b, r, SARIFOptions{}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runs []struct {
			Results []struct {
				PartialFingerprints map[string]string `json:"partialFingerprints"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	rs := doc.Runs[0].Results
	if len(rs) != 2 || rs[0].PartialFingerprints[FingerprintKey] == rs[1].PartialFingerprints[FingerprintKey] {
		t.Fatalf("fingerprints %v, want two distinct", rs)
	}
}

// TestBaselineRefusesTrailingBytes: a baseline is one JSON document;
// anything after it is not taken silently (issue 25).
func TestBaselineRefusesTrailingBytes(t *testing.T) {
	var b strings.Builder
	if err := WriteBaseline(&b, &analyze.Result{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadBaseline(strings.NewReader(b.String() + "\n\n")); err != nil {
		t.Errorf("a baseline ending in blank lines: %v", err)
	}
	if _, err := ReadBaseline(strings.NewReader(b.String() + `{"version":1}`)); err == nil || !strings.Contains(err.Error(), "found more") {
		t.Errorf("trailing bytes: %v, want an error", err)
	}
}

// TestControlsEscapedInFiles: a message and a note carrying U+202E and
// U+009B (a device's client id) reach JSON, SARIF and JUnit escaped, and
// each still parses (issue 25: they reached the files raw).
func TestControlsEscapedInFiles(t *testing.T) {
	r := &analyze.Result{Findings: []analyze.Finding{{Rule: "hot-loop", Severity: analyze.Warning, Device: "dev\u202e1\u009b",
		Message: "dev\u202e1 retried", Explanation: "x\u009by"}}, Summary: analyze.Summary{Notes: []string{"dev\u202e1 noted"}}}
	for name, write := range map[string]func(*strings.Builder) error{
		"json":  func(b *strings.Builder) error { return JSON(b, r) },
		"sarif": func(b *strings.Builder) error { return SARIF(b, r, SARIFOptions{}) },
		"junit": func(b *strings.Builder) error { return JUnit(b, r, JUnitOptions{}) },
	} {
		var b strings.Builder
		if err := write(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.ContainsAny(b.String(), "\u202e\u009b") {
			t.Errorf("%s: a control reached the file raw", name)
		}
		if name == "junit" {
			if err := xml.Unmarshal([]byte(b.String()), new(any)); err != nil {
				t.Errorf("junit does not parse: %v", err)
			}
		} else if !json.Valid([]byte(b.String())) {
			t.Errorf("%s is not JSON", name)
		}
	}
}
