package report

import (
	"encoding/json"
	"io"

	"github.com/stormaudit/stormaudit/analyze"
)

type jsonFinding struct {
	Rule        string       `json:"rule"`
	Severity    string       `json:"severity"`
	Device      string       `json:"device"`
	Start       string       `json:"start"`
	End         string       `json:"end"`
	Message     string       `json:"message"`
	Explanation string       `json:"explanation"`
	Records     []jsonRecord `json:"records"`
}

type jsonRecord struct {
	Source string `json:"source"`
	Line   int64  `json:"line"`
	File   string `json:"file,omitempty"`
	Row    *int64 `json:"row,omitempty"`
}

type jsonSummary struct {
	Dataset    string          `json:"dataset,omitempty"`
	Sources    []string        `json:"sources"`
	Devices    int             `json:"devices"`
	Records    int64           `json:"records"`
	Rejected   int64           `json:"rejected"`
	Findings   int             `json:"findings"`
	ByRule     map[string]int  `json:"by_rule"`
	BySeverity map[string]int  `json:"by_severity"`
	Policy     jsonPolicy      `json:"policy"`
	Fleet      *jsonFleet      `json:"fleet,omitempty"`
	Notes      []string        `json:"notes"`
	Rules      []jsonRuleEntry `json:"rules"`
}

type jsonPolicy struct {
	Source   string          `json:"source"`
	Name     string          `json:"name,omitempty"`
	Inferred []string        `json:"inferred,omitempty"`
	Policy   json.RawMessage `json:"policy,omitempty"`
}

type jsonFleet struct {
	Devices   int      `json:"devices"`
	Records   int64    `json:"records"`
	Attempts  int64    `json:"attempts"`
	WindowS   float64  `json:"window_s"`
	Peak      int64    `json:"peak"`
	PeakAt    string   `json:"peak_at,omitempty"`
	Lost      int      `json:"lost"`
	Recovered int      `json:"recovered"`
	TTR50S    float64  `json:"ttr_p50_s"`
	TTR90S    float64  `json:"ttr_p90_s"`
	TTR99S    float64  `json:"ttr_p99_s"`
	TTRMaxS   float64  `json:"ttr_max_s"`
	Fairness  *float64 `json:"fairness"`

	Incidents []jsonIncident `json:"incidents"`
}

// jsonIncident is one incident of summary.fleet.incidents.
type jsonIncident struct {
	LostAt           string  `json:"lost_at"`
	LastLossAt       string  `json:"last_loss_at"`
	DevicesLost      int     `json:"devices_lost"`
	LossInferred     bool    `json:"loss_inferred"`
	FirstConnectAt   *string `json:"first_connect_at"`
	Recovered        int     `json:"recovered"`
	TTR50S           float64 `json:"ttr_p50_s"`
	TTR90S           float64 `json:"ttr_p90_s"`
	TTR99S           float64 `json:"ttr_p99_s"`
	TTRMaxS          float64 `json:"ttr_max_s"`
	ConnectsPeakPerS int     `json:"connects_peak_per_s"`
	ConnectsPeakAt   *string `json:"connects_peak_at"`
}

type jsonRuleEntry struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	Title    string `json:"title"`
	Help     string `json:"help"`
}

// JSON writes the result as one JSON document (see the package
// documentation), indented, ending in a newline. It encodes the findings
// one at a time: its memory does not grow with their number.
func JSON(w io.Writer, r *analyze.Result) error {
	s := newJSONStream(w)
	s.raw("{\n  \"findings\": ")
	s.list(len(r.Findings), 1, func(i int) { s.value(jsonFindingOf(r, r.Findings[i]), 2) })
	s.raw(",\n  \"summary\": ")
	s.value(jsonSummaryOf(r), 1)
	s.raw("\n}\n")
	return s.close()
}

func jsonFindingOf(r *analyze.Result, f analyze.Finding) jsonFinding {
	jf := jsonFinding{Rule: f.Rule, Severity: f.Severity.String(), Device: f.Device,
		Start: Time(f.Start), End: Time(f.End), Message: f.Message, Explanation: f.Explanation,
		Records: make([]jsonRecord, 0, len(f.Records))}
	for _, ref := range f.Records {
		jf.Records = append(jf.Records, jsonRecordOf(r, ref))
	}
	return jf
}

func jsonRecordOf(r *analyze.Result, ref analyze.Ref) jsonRecord {
	rec := jsonRecord{Source: source(r.Sources, ref.Source), Line: ref.Line}
	if ref.File >= 0 && int(ref.File) < len(r.Files) {
		row := ref.Row
		rec.File, rec.Row = r.Files[ref.File], &row
	}
	return rec
}

func jsonSummaryOf(r *analyze.Result) jsonSummary {
	s := r.Summary
	js := jsonSummary{Dataset: r.Dataset, Sources: append([]string{}, r.Sources...), Devices: s.Devices,
		Records: s.Records, Rejected: s.Rejected, Findings: len(r.Findings),
		ByRule: map[string]int{}, BySeverity: map[string]int{}, Notes: append([]string{}, s.Notes...),
		Policy: jsonPolicy{Source: s.Policy.Source, Name: s.Policy.Name, Inferred: s.Policy.Inferred}}
	if p := s.Policy.Policy; p != nil {
		js.Policy.Policy = p.AppendJSON(nil)
	}
	for _, ri := range rulesOf(r) {
		js.ByRule[ri.ID] = 0
		js.Rules = append(js.Rules, jsonRuleEntry{ID: ri.ID, Severity: ri.Severity.String(), Title: ri.Title, Help: ri.Help})
	}
	if js.Rules == nil {
		js.Rules = []jsonRuleEntry{}
	}
	for _, sev := range []analyze.Severity{analyze.Error, analyze.Warning, analyze.Info} {
		js.BySeverity[sev.String()] = 0
	}
	for _, f := range r.Findings {
		js.ByRule[f.Rule]++
		js.BySeverity[f.Severity.String()]++
	}
	if st := s.Fleet; st != nil {
		js.Fleet = jsonFleetOf(st)
	}
	return js
}

func jsonFleetOf(st *analyze.FleetStats) *jsonFleet {
	jf := &jsonFleet{Devices: st.Devices, Records: st.Records, Attempts: st.Attempts, WindowS: st.Window.Seconds(),
		Peak: st.Peak, Lost: st.Lost, Recovered: st.Recovered,
		TTR50S: st.TTR50.Seconds(), TTR90S: st.TTR90.Seconds(), TTR99S: st.TTR99.Seconds(), TTRMaxS: st.TTRMax.Seconds()}
	if st.Peak > 0 {
		jf.PeakAt = Time(st.PeakAt)
	}
	if len(st.TTR) > 0 {
		jf.Fairness = number(st.Fairness)
	}
	jf.Incidents = make([]jsonIncident, 0, len(st.Incidents))
	for i := range st.Incidents {
		jf.Incidents = append(jf.Incidents, jsonIncidentOf(&st.Incidents[i]))
	}
	return jf
}

func jsonIncidentOf(in *analyze.Incident) jsonIncident {
	return jsonIncident{LostAt: Time(in.LostAt), LastLossAt: Time(in.LastLoss), DevicesLost: in.DevicesLost,
		LossInferred: in.LossInferred, FirstConnectAt: optTime(in.FirstConnectAt), Recovered: in.Recovered,
		TTR50S: in.TTR50.Seconds(), TTR90S: in.TTR90.Seconds(), TTR99S: in.TTR99.Seconds(), TTRMaxS: in.TTRMax.Seconds(),
		ConnectsPeakPerS: in.ConnectsPeak, ConnectsPeakAt: optTime(in.ConnectsPeakAt)}
}
