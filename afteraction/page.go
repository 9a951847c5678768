package afteraction

import (
	"fmt"
	"html/template"
	"slices"
	"strings"
	"time"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/dataset"
	"github.com/stormaudit/stormaudit/replay"
	"github.com/stormaudit/stormaudit/report"
)

// page is what the template shows: every value is text that
// html/template escapes, but for the charts, which vgsvg escaped.
type page struct {
	Title, Generated, Version, Source string
	// Verdict answers the reviewer's first questions in words, a line per
	// incident (report.Verdict).
	Verdict []string

	Devices       int
	Records       int64
	Inputs        []inputView
	Totals        dataset.Counts
	Verify        []kv
	VerifyState   string // "intact", "tampered" or "" when none ran
	VerifyNote    string
	Policy        string
	PolicyKeys    []kv
	Fleet         []kv
	Incidents     []incidentView
	MoreIncidents int
	Activity      chartView
	TTR           chartView
	Strip         chartView
	RulesChart    template.HTML
	Findings      int
	BySeverity    string
	Rules         []ruleView
	Skipped       []analyze.Skip
	Notes         []string
	WorstDevices  []deviceRow
	Timelines     []timelineView
	Replay        *replayView
	// RedactOn says the page is redacted, and Redacted lists what was
	// replaced, by field and kind.
	RedactOn bool
	Redacted []kv
}

type kv struct{ K, V string }

type chartView struct {
	SVG     template.HTML
	Caption string
	Key     []keyItem
}

type inputView struct {
	Name, Format, SHA256, Collector string
	Bytes                           int64
	dataset.Counts
}

type incidentView struct {
	N                             int
	LostAt, How, Return, Recovery string
	Peak, Broker, Clocks          string
	Why                           string       // what the devices met, in words
	Met                           []metRow     // the same, counted
	Unrecovered                   []lostDevice // the devices that never came back
	TooSoon                       int          // of them, those the log ended too soon for
	Service                       string       // time to first useful service, in words
	Presence                      string       // how long its devices were shown online while down, in words
	PresenceLong                  []kv         // the devices shown online longest: id, how long and how it ended
	PresencePast                  int          // of its devices, those shown online past the limit
	Unserved                      []kv         // the devices connected but not served: id, when
	Cost                          []costRow    // what the outage cost beyond the connection
	Chart, Stages                 chartView
}

// costRow is one kind of what an incident cost its devices.
type costRow struct {
	What, Field                  string
	Messages                     int64
	Devices, Reporting, Recorded int
}

// metRow is one kind of record an incident's devices met while down.
type metRow struct {
	Stage, Outcome, Class, Reason string
	Records, Devices              int
}

// lostDevice is a device that never came back, and its last state.
type lostDevice struct {
	ID, State, Text string
	TooSoon         bool
}

type ruleView struct {
	ID, Severity, Title, Help, Skipped string
	Count, Devices, More               int
	Fleet                              bool // some finding is about the fleet, not a device
	Shown                              []findingView
}

type findingView struct {
	Severity, Rule, Device, Anchor, Span, Message, Explanation, Records string
}

type deviceRow struct {
	ID, Anchor, TTR, Worst    string
	Records, Attempts, Failed int
	Losses, Findings          int
	Down                      bool
}

type timelineView struct {
	ID, Anchor, Summary string
	Findings            []findingView
	MoreFindings        int
	Rows                []eventRow
	Window, More        string
	Sessions, Outages   []string
	MoreSessions        int
	MoreOutages         int
}

type eventRow struct {
	Time, Outcome, Attempt, Delay, Open, Record, Extras string
}

type replayView struct {
	Plans []string
	Cols  int // the table's columns: the names, and a plan's each
	Rows  []replayRow
	Waves []chartView // with queued messages: each replay's connect and redelivery waves
}

type replayRow struct {
	Name   string
	Values []string
	// Side heads the rows from this one on when it is not the row
	// before's (replay.SideBroker, replay.SideReplay): the broker's
	// doing apart from the replay's own
	Side string
}

// build makes the page of rep.
func build(rep *Report, o Options) (*page, error) {
	res := rep.Overview.Result
	s := res.Summary
	pg := &page{Title: rep.Title, Version: rep.Version, Devices: s.Devices, Records: s.Records,
		Generated: rep.Generated.UTC().Format(time.RFC3339), Findings: len(res.Findings),
		BySeverity: fmt.Sprintf("%d error, %d warning, %d info", s.BySeverity["error"], s.BySeverity["warning"], s.BySeverity["info"]),
		Skipped:    slices.Clone(s.Skipped), Notes: slices.Clone(s.Notes), Verdict: report.Verdict(res)}
	if pg.Title == "" {
		pg.Title = "Reconnect after-action report"
	}
	pg.Source = "audit logs, ingested for this report"
	if rep.Dataset != "" {
		pg.Source = "dataset " + rep.Dataset
	}
	inputsOf(pg, rep.Manifest)
	verifyOf(pg, rep)
	policyOf(pg, s.Policy)
	anchors := map[string]string{}
	for i, id := range rep.Timelines {
		anchors[id] = fmt.Sprintf("device-%d", i+1)
	}
	rulesOf(pg, res, o.PerRule, anchors)
	devicesOf(pg, rep.Overview, o.Worst, anchors)
	if err := chartsOf(pg, rep, o); err != nil {
		return nil, err
	}
	for _, id := range rep.Timelines {
		if d := rep.Devices[id]; d != nil {
			pg.Timelines = append(pg.Timelines, timelineOf(d, res, anchors[id], o.Rows, rep.Dataset))
		}
	}
	replayed, err := replayOf(rep)
	if err != nil {
		return nil, err
	}
	pg.Replay = replayed
	escapePage(pg)
	if o.Redact != nil {
		redactPage(pg, o.Redact)
	}
	return pg, nil
}

func inputsOf(pg *page, m *dataset.Manifest) {
	if m == nil {
		return
	}
	pg.Totals = m.Totals
	for _, in := range m.Inputs {
		v := inputView{Name: in.Name, Format: in.Format, SHA256: in.SHA256, Bytes: in.Bytes, Counts: in.Counts}
		if in.Gzip {
			v.Format += " (gzip)"
		}
		if c := in.Collector; c != nil {
			v.Collector = collectorText(c)
		}
		pg.Inputs = append(pg.Inputs, v)
	}
}

// collectorText says what ingest verified of a collector log.
func collectorText(c *dataset.CollectorLog) string {
	s := fmt.Sprintf("collector log %s verified at ingest: %d records in chains", c.Log, c.Records)
	if c.Checkpoint == "" {
		return s + "; no checkpoint, so none is sealed"
	}
	switch {
	case len(c.Signers) == 0:
		s += "; checkpoint unsigned"
	case c.SignaturesChecked:
		s += "; checkpoint signature checked: " + strings.Join(c.Signers, ", ")
	default:
		s += "; checkpoint signed by " + strings.Join(c.Signers, ", ") + " (not checked: no verifier key given)"
	}
	return s + fmt.Sprintf("; %d records unsealed (after the checkpoint)", c.Unsealed)
}

// verifyOf states the verification, as stormaudit verify prints it.
func verifyOf(pg *page, rep *Report) {
	v := rep.Verify
	if v == nil {
		pg.VerifyNote = "Not run: the report read audit logs, not a dataset, and plain logs carry no chain. "
		collectors := slices.ContainsFunc(pg.Inputs, func(in inputView) bool { return in.Collector != "" })
		if collectors {
			pg.VerifyNote += "The collector logs among the inputs were verified at ingest (their chains, checkpoints and signatures: see the inputs). "
		}
		pg.VerifyNote += "Ingest the logs with stormaudit ingest --key and report on the dataset to verify a signed dataset."
		return
	}
	pg.VerifyState = "intact"
	if v.Problem != nil {
		pg.VerifyState = "tampered"
	}
	add := func(k, val string) { pg.Verify = append(pg.Verify, kv{k, val}) }
	if v.Log != "" {
		add("log", v.Log)
	}
	if cp := v.Checkpoint; cp != nil {
		add("checked", fmt.Sprintf("%d records in %d chains (%d bytes of canonical records)", v.Records, v.Origins, v.Bytes))
		add("checkpoint", fmt.Sprintf("%d records, root %s", cp.Size, cp.Root))
		switch {
		case !v.Signed:
			add("signature", "none (the checkpoint is unsigned: it shows consistency, not who vouched for it)")
		case len(v.Verified) > 0:
			add("signature", "verified: "+strings.Join(v.Verified, ", "))
		default:
			add("signature", "not checked: it names "+strings.Join(v.Signers, ", ")+" (give --verifier KEY.pub to check it)")
		}
		add("unsealed", fmt.Sprintf("%d records after the checkpoint", v.Unsealed))
	}
	if a := v.Accounted; a.Lines > 0 || v.Problem == nil {
		signed := "unsigned manifest"
		if v.ManifestSigned {
			signed = "signed manifest"
		}
		add("accounted", fmt.Sprintf("%d lines read = %d accepted + %d rejected + %d duplicates (%s)", a.Lines, a.Accepted, a.Rejected, a.Duplicates, signed))
	}
	if v.Problem != nil {
		add("result", "TAMPERED OR INCONSISTENT: "+v.Problem.String())
	} else {
		add("result", "intact")
	}
}

func policyOf(pg *page, p analyze.PolicyInfo) {
	switch p.Source {
	case "declared":
		pg.Policy = "declared: " + p.Name
	case "inferred":
		pg.Policy = "inferred from the log (" + strings.Join(p.Inferred, ", ") + ")"
	default:
		pg.Policy = "none declared, none inferred from the log"
	}
	if p.Policy != nil {
		for _, part := range strings.Split(p.Policy.Summary(), ", ") {
			k, v, _ := strings.Cut(part, " ")
			pg.PolicyKeys = append(pg.PolicyKeys, kv{k, v})
		}
	}
}

// findingOf is f as the page shows it.
func findingOf(f *analyze.Finding, sources []string, anchors map[string]string) findingView {
	refs := make([]string, len(f.Records))
	for i, r := range f.Records {
		refs[i] = report.RefText(sources, r)
	}
	span := report.Time(f.Start)
	if f.End != f.Start {
		span += " to " + report.Time(f.End)
	}
	return findingView{Severity: f.Severity.String(), Rule: f.Rule, Device: f.Device, Anchor: anchors[f.Device], Span: span,
		Message: f.Message, Explanation: f.Explained(), Records: strings.Join(refs, ", ")}
}

func rulesOf(pg *page, res *analyze.Result, perRule int, anchors map[string]string) {
	idx := map[string]int{}
	for _, ri := range res.Rules {
		idx[ri.ID] = len(pg.Rules)
		pg.Rules = append(pg.Rules, ruleView{ID: ri.ID, Severity: ri.Severity.String(), Title: ri.Title, Help: ri.Help})
	}
	for _, sk := range res.Summary.Skipped {
		if k, ok := idx[sk.Rule]; ok {
			pg.Rules[k].Skipped = sk.Reason
		}
	}
	devices := map[string]map[string]bool{}
	for i := range res.Findings {
		f := &res.Findings[i]
		k, ok := idx[f.Rule]
		if !ok { // a rule not in the catalogue (a rejected line's audit-gap is)
			k, idx[f.Rule] = len(pg.Rules), len(pg.Rules)
			pg.Rules = append(pg.Rules, ruleView{ID: f.Rule, Severity: f.Severity.String(), Title: f.Rule})
		}
		r := &pg.Rules[k]
		r.Count++
		if devices[f.Rule] == nil {
			devices[f.Rule] = map[string]bool{}
		}
		if f.Device == analyze.Fleet {
			r.Fleet = true
		} else {
			devices[f.Rule][f.Device] = true
		}
		if len(r.Shown) < perRule {
			r.Shown = append(r.Shown, findingOf(f, res.Sources, anchors))
		} else {
			r.More++
		}
	}
	for k := range pg.Rules {
		pg.Rules[k].Devices = len(devices[pg.Rules[k].ID])
	}
}

func devicesOf(pg *page, ov *analyze.Overview, n int, anchors map[string]string) {
	for _, k := range Worst(ov, n) {
		d := &ov.Devices[k]
		row := deviceRow{ID: d.ID, Anchor: anchors[d.ID], Records: d.Records, Attempts: d.Attempts, Failed: d.Failed,
			Losses: d.Losses, Findings: d.Findings, Down: d.Down, TTR: "none"}
		if d.TTR >= 0 {
			row.TTR = d.TTR.Round(time.Millisecond).String()
		}
		if d.Findings > 0 {
			row.Worst = d.Worst.String()
		}
		pg.WorstDevices = append(pg.WorstDevices, row)
	}
}

func replayOf(rep *Report) (*replayView, error) {
	if len(rep.Replay) == 0 {
		return nil, nil
	}
	v := &replayView{Cols: 1 + len(rep.Replay)}
	for _, r := range rep.Replay {
		v.Plans = append(v.Plans, r.Plan)
	}
	side := ""
	for _, row := range replay.RowsOf(rep.Replay...) {
		rr := replayRow{Name: row.Name}
		if row.Side != side {
			rr.Side, side = row.Side, row.Side
		}
		for _, r := range rep.Replay {
			rr.Values = append(rr.Values, row.Value(r))
		}
		v.Rows = append(v.Rows, rr)
	}
	for _, r := range rep.Replay {
		c, err := wavesChart(r)
		if err != nil {
			return nil, err
		}
		if c.SVG != "" {
			v.Waves = append(v.Waves, c)
		}
	}
	return v, nil
}
