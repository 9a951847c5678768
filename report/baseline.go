package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/stormaudit/stormaudit/analyze"
)

// BaselineVersion is the version of the baseline file format.
const BaselineVersion = 1

// A Baseline is a set of findings a fleet has accepted, known by their
// fingerprints (FingerprintKey): check --baseline reports only the
// findings absent from it, so that a fleet can adopt the tool without
// fixing its history first.
type Baseline struct {
	fps map[string]bool
	key string // the fingerprints': FingerprintKey, or FingerprintKeyV2
}

// baselineFile is the file: one entry per finding, with what a reviewer
// needs to recognise it beside its fingerprint.
type baselineFile struct {
	Version     int             `json:"version"`
	Fingerprint string          `json:"fingerprint"` // FingerprintKey
	Findings    []baselineEntry `json:"findings"`
}

type baselineEntry struct {
	Fingerprint string `json:"fingerprint"`
	Rule        string `json:"rule"`
	Kind        string `json:"kind,omitempty"` // none in a baseline of v2
	Severity    string `json:"severity"`
	Device      string `json:"device"`
	Start       string `json:"start"`
	Message     string `json:"message"`
}

// Fingerprints returns the fingerprint of each finding of r, in order:
// the hash of rule, kind, device and start, with an ordinal for the
// findings that share all four, as SARIF writes them.
func Fingerprints(r *analyze.Result) []string {
	return fingerprints(r, fingerprint)
}

// fingerprints returns fp of each finding of r, with an ordinal for the
// findings that share one.
func fingerprints(r *analyze.Result, fingerprint func(*analyze.Finding) string) []string {
	fps := make([]string, len(r.Findings))
	seen := map[string]int{}
	for i := range r.Findings {
		fp := fingerprint(&r.Findings[i])
		if k := seen[fp]; k > 0 {
			seen[fp]++
			fp = fingerprintOf(fp + "\x00" + strconv.Itoa(k))
		} else {
			seen[fp]++
		}
		fps[i] = fp
	}
	return fps
}

// WriteBaseline writes a baseline of every finding of r.
func WriteBaseline(w io.Writer, r *analyze.Result) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("{\n  \"version\": " + strconv.Itoa(BaselineVersion) + ",\n  \"fingerprint\": " + strconv.Quote(FingerprintKey) + ",\n  \"findings\": [")
	for i, fp := range Fingerprints(r) {
		f := &r.Findings[i]
		b, err := json.Marshal(baselineEntry{Fingerprint: fp, Rule: f.Rule, Kind: f.Kind, Severity: f.Severity.String(), Device: f.Device,
			Start: Time(f.Start), Message: f.Message})
		if err != nil {
			return err
		}
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n    ")
		bw.Write(b)
	}
	if len(r.Findings) > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteString("]\n}\n")
	return bw.Flush()
}

// ReadBaseline reads a baseline that WriteBaseline wrote, or that it
// wrote before fingerprints v3, whose fingerprints of v2 it matches
// findings by (Baseline.Version says which).
func ReadBaseline(rd io.Reader) (*Baseline, error) {
	dec := json.NewDecoder(rd)
	dec.DisallowUnknownFields()
	var f baselineFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not a stormaudit baseline: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("not a stormaudit baseline: expected the end of the file after its JSON document, found more (at byte %d)", dec.InputOffset())
	}
	switch {
	case f.Version != BaselineVersion:
		return nil, fmt.Errorf("version: expected %d, found %d", BaselineVersion, f.Version)
	case f.Fingerprint != FingerprintKey && f.Fingerprint != FingerprintKeyV2:
		return nil, fmt.Errorf("fingerprint: expected %q (or %q), found %q: write the baseline again with this stormaudit (--write-baseline)",
			FingerprintKey, FingerprintKeyV2, f.Fingerprint)
	}
	b := &Baseline{fps: make(map[string]bool, len(f.Findings)), key: f.Fingerprint}
	for i, e := range f.Findings {
		if len(e.Fingerprint) != 32 {
			return nil, fmt.Errorf("findings[%d]: fingerprint: expected 32 hex digits, found %q", i, e.Fingerprint)
		}
		b.fps[e.Fingerprint] = true
	}
	return b, nil
}

// Len returns the number of findings in the baseline.
func (b *Baseline) Len() int { return len(b.fps) }

// Version returns the version of the baseline's fingerprints: "v3"
// (FingerprintVersion), or "v2" for a baseline written before, which
// a rewording of a finding's message orphans: write it again to get v3.
func (b *Baseline) Version() string {
	_, v, _ := strings.Cut(b.key, "/")
	return v
}

// Filter drops from r the findings in the baseline, recounts the summary
// and notes what it did; it returns the fingerprints of the findings
// kept, in order (for SARIFOptions.Fingerprints), and how many it
// dropped.
func (b *Baseline) Filter(r *analyze.Result) (kept []string, dropped int) {
	fps := Fingerprints(r)
	match := fps // the fingerprints of the baseline's version
	if b.key == FingerprintKeyV2 {
		match = fingerprints(r, fingerprintV2)
	}
	out := r.Findings[:0]
	for i, f := range r.Findings {
		if b.fps[match[i]] {
			dropped++
			continue
		}
		out = append(out, f)
		kept = append(kept, fps[i])
	}
	clear(r.Findings[len(out):])
	r.Findings = out
	s := &r.Summary
	s.ByRule, s.BySeverity = map[string]int{}, map[string]int{}
	for _, f := range r.Findings {
		s.ByRule[f.Rule]++
		s.BySeverity[f.Severity.String()]++
	}
	s.Notes = append(s.Notes, fmt.Sprintf("baseline: %d of the %d findings are in the baseline and not reported; %d of the baseline's %d were not found",
		dropped, dropped+len(out), len(b.fps)-dropped, len(b.fps)))
	return kept, dropped
}
