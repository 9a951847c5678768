package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// decodedDoc is the JSON document as a consumer reads it.
type decodedDoc struct {
	Version  int
	Findings []struct {
		Rule, Kind, Severity, Device, Start, End, Message, Explanation string
		Records                                                        []struct {
			Source int // index in summary.sources
			Line   int64
			File   *int // index in summary.files
			Row    *int64
		}
	}
	Summary struct {
		Dataset    string
		Sources    []string
		Files      []string
		Devices    int
		Records    int64
		Rejected   int64
		Outside    int64    `json:"outside_window"`
		Verdict    []string `json:"verdict"`
		Findings   int
		ByRule     map[string]int `json:"by_rule"`
		BySeverity map[string]int `json:"by_severity"`
		Policy     struct {
			Source, Name string
			Inferred     []string
			Policy       map[string]any
		}
		Fleet *struct {
			Devices, Lost, Recovered int
			Records, Attempts, Peak  int64
			WindowS                  float64 `json:"window_s"`
			PeakAt                   string  `json:"peak_at"`
			TTR50S                   float64 `json:"ttr_p50_s"`
			TTR90S                   float64 `json:"ttr_p90_s"`
			TTR99S                   float64 `json:"ttr_p99_s"`
			TTRMaxS                  float64 `json:"ttr_max_s"`
			Fairness                 *float64
			Flushed                  int64
			FlushPeak                int64  `json:"flush_peak"`
			FlushPeakAt              string `json:"flush_peak_at"`
			Incidents                []struct {
				LostAt           string `json:"lost_at"`
				LostAtEarliest   string `json:"lost_at_earliest"`
				LostAtLatest     string `json:"lost_at_latest"`
				LostAtBasis      string `json:"lost_at_basis"`
				Silent           bool
				TTRFrom          string  `json:"ttr_from"`
				FirstLossAt      string  `json:"first_loss_at"`
				LastLossAt       string  `json:"last_loss_at"`
				DevicesLost      int     `json:"devices_lost"`
				LossInferred     bool    `json:"loss_inferred"`
				FirstConnectAt   *string `json:"first_connect_at"`
				Recovered        int
				RecoveredBefore  int     `json:"recovered_before_next"`
				ClockCorrected   int     `json:"clock_corrected"`
				TTR50S           float64 `json:"ttr_p50_s"`
				TTR90S           float64 `json:"ttr_p90_s"`
				TTR99S           float64 `json:"ttr_p99_s"`
				TTRMaxS          float64 `json:"ttr_max_s"`
				ConnectsPeakPerS int     `json:"connects_peak_per_s"`
				ConnectsPeakAt   *string `json:"connects_peak_at"`
				FlushPeakPerS    int64   `json:"flush_peak_per_s"`
				FlushPeakAt      *string `json:"flush_peak_at"`
				Diagnosis        string
				DiagnosisText    string `json:"diagnosis_text"`
				Met              []struct {
					Stage, Outcome   string
					FailureClass     string `json:"failure_class"`
					ReasonCode       *int32 `json:"reason_code"`
					Records, Devices int
				}
				Unrecovered []struct {
					Device, State, Text, Stage string
					LastRecordAt               string   `json:"last_record_at"`
					DueAt                      *string  `json:"due_at"`
					DelayS                     *float64 `json:"delay_s"`
					FailureClass               string   `json:"failure_class"`
					ReasonCode                 *int32   `json:"reason_code"`
					Attempts                   int
					LogEndedTooSoon            bool `json:"log_ended_too_soon"`
				}
				Service *struct {
					Devices, Served int
					TTS50S          float64 `json:"tts_p50_s"`
					TTS90S          float64 `json:"tts_p90_s"`
					TTS99S          float64 `json:"tts_p99_s"`
					TTSMaxS         float64 `json:"tts_max_s"`
					LagS            float64 `json:"lag_s"`
					Unserved        []struct {
						Device        string
						ReconnectedAt string  `json:"reconnected_at"`
						ServedAt      *string `json:"served_at"`
					}
				}
			}
			ClockOffsets []struct {
				Device      string
				OffsetS     float64 `json:"offset_s"`
				ResolutionS float64 `json:"resolution_s"`
				LostAt      *string `json:"lost_at"`
				Basis       string
				From, Until *string
			} `json:"clock_offsets"`
		}
		Notes   []string
		Skipped []struct{ Rule, Reason string }
		Rules   []struct{ ID, Severity, Title, Help string }
	}
}

func decodeJSON(t *testing.T, b []byte) decodedDoc {
	t.Helper()
	var doc decodedDoc
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("decode: %v\n%s", err, b)
	}
	return doc
}

func TestJSON(t *testing.T) {
	var b bytes.Buffer
	if err := JSON(&b, fixture()); err != nil {
		t.Fatal(err)
	}
	doc := decodeJSON(t, b.Bytes())
	if len(doc.Findings) != 5 {
		t.Fatalf("got %d findings, want 5", len(doc.Findings))
	}
	f := doc.Findings[0]
	if f.Rule != "delay-bounds" || f.Severity != "error" || f.Device != "dev-0002" ||
		f.Start != "2026-11-30T14:17:35Z" || f.End != f.Start || f.Message == "" || f.Explanation == "" {
		t.Errorf("finding 0 = %+v", f)
	}
	if doc.Version != JSONVersion {
		t.Errorf("version %d, want %d", doc.Version, JSONVersion)
	}
	s := doc.Summary
	if len(f.Records) != 2 || s.Sources[f.Records[0].Source] != "logs/gw-a.ndjson" || f.Records[0].Line != 12 ||
		f.Records[0].File == nil || s.Files[*f.Records[0].File] != "ds/part-00000.parquet" || *f.Records[0].Row != 7 {
		t.Errorf("finding 0 records = %+v", f.Records)
	}
	if got := doc.Findings[1].End; got != "2026-11-30T14:17:31.5Z" {
		t.Errorf("end = %q, want 2026-11-30T14:17:31.5Z", got)
	}
	if r := doc.Findings[2].Records; r == nil || len(r) != 0 {
		t.Errorf("records of a finding without records = %#v, want []", r)
	}
	if got := s.Sources[doc.Findings[3].Records[0].Source]; got != "-" {
		t.Errorf("source of stdin = %q, want -", got)
	}
	if s.Devices != 5 || s.Records != 40 || s.Rejected != 1 || s.Findings != 5 || s.Dataset != "ds" || len(s.Sources) != 3 {
		t.Errorf("summary = %+v", s)
	}
	wantRule := map[string]int{"resync": 1, "delay-bounds": 2, "hot-loop": 2}
	for k, v := range wantRule {
		if s.ByRule[k] != v {
			t.Errorf("by_rule[%s] = %d, want %d", k, s.ByRule[k], v)
		}
	}
	if s.BySeverity["error"] != 3 || s.BySeverity["warning"] != 1 || s.BySeverity["info"] != 1 {
		t.Errorf("by_severity = %v", s.BySeverity)
	}
	if s.Policy.Source != "declared" || s.Policy.Name != "full-jitter" || s.Policy.Policy["delay"] != "full_jitter" {
		t.Errorf("policy = %+v", s.Policy)
	}
	if s.Fleet == nil || s.Fleet.Peak != 5 || s.Fleet.PeakAt != "2026-11-30T14:17:35Z" || s.Fleet.TTR50S != 2 || *s.Fleet.Fairness != 0.83 {
		t.Errorf("fleet = %+v", s.Fleet)
	}
	if in := s.Fleet.Incidents; len(in) != 1 || in[0].LostAt != "2026-11-30T14:17:30Z" || in[0].DevicesLost != 5 || !in[0].LossInferred ||
		*in[0].FirstConnectAt != "2026-11-30T14:17:31Z" || in[0].Recovered != 4 || in[0].TTR50S != 2 || in[0].TTRMaxS != 4 ||
		in[0].ConnectsPeakPerS != 3 || *in[0].ConnectsPeakAt != "2026-11-30T14:17:32Z" || in[0].FlushPeakAt != nil ||
		in[0].LostAtEarliest != in[0].LostAt || in[0].LostAtLatest != in[0].LostAt || in[0].LostAtBasis != "first loss" || in[0].Silent ||
		in[0].TTRFrom != "each device's loss" || in[0].FirstLossAt != in[0].LostAt || in[0].RecoveredBefore != 4 {
		t.Errorf("incidents = %+v", in)
	}
	if in := s.Fleet.Incidents[0]; in.Diagnosis != "no-answer" || !strings.HasPrefix(in.DiagnosisText, "nothing answered: 7 connects failed") ||
		len(in.Met) != 3 || in.Met[2].Outcome != "attempt_failed" || in.Met[2].FailureClass != "transient" || in.Met[2].ReasonCode != nil ||
		in.Met[2].Records != 7 || in.Met[2].Devices != 5 {
		t.Errorf("what the devices met: %+v", in)
	}
	if us := s.Fleet.Incidents[0].Unrecovered; len(us) != 1 || us[0].Device != "dev-0004" || us[0].State != "waiting" ||
		*us[0].DueAt != "2026-11-30T14:18:33Z" || *us[0].DelayS != 60 || !us[0].LogEndedTooSoon || us[0].Attempts != 3 ||
		us[0].Stage != "session" || !strings.HasPrefix(us[0].Text, "waiting a backoff of 1m0s") {
		t.Errorf("unrecovered: %+v", us)
	}
	if sv := s.Fleet.Incidents[0].Service; sv == nil || sv.Devices != 4 || sv.Served != 4 || sv.TTS50S != 9 || sv.LagS != 5 ||
		len(sv.Unserved) != 1 || sv.Unserved[0].Device != "dev-0001" || *sv.Unserved[0].ServedAt != "2026-11-30T14:17:42Z" {
		t.Errorf("service: %+v", sv)
	}
	if len(s.Fleet.ClockOffsets) != 1 || s.Fleet.ClockOffsets[0].Device != "dev-0005" || s.Fleet.ClockOffsets[0].OffsetS != 4 || s.Fleet.ClockOffsets[0].Basis != "audit" {
		t.Errorf("clock offsets = %+v", s.Fleet.ClockOffsets)
	}
	if len(s.Rules) != 3 || s.Rules[1].ID != "delay-bounds" || s.Rules[1].Severity != "error" || s.Rules[1].Help == "" {
		t.Errorf("rules = %+v", s.Rules)
	}
	if len(s.Notes) != 1 {
		t.Errorf("notes = %v", s.Notes)
	}
}

// TestJSONEmpty: no findings is an empty list, every rule and severity
// still counted, and records of a dataset that is gone have no file.
func TestJSONEmpty(t *testing.T) {
	r := empty()
	var b bytes.Buffer
	if err := JSON(&b, r); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b.Bytes(), []byte(`"findings": []`)) || !bytes.Contains(b.Bytes(), []byte(`"notes": []`)) {
		t.Errorf("want empty lists, not null:\n%s", b.Bytes())
	}
	doc := decodeJSON(t, b.Bytes())
	if len(doc.Summary.ByRule) != 3 || doc.Summary.ByRule["resync"] != 0 || len(doc.Summary.BySeverity) != 3 {
		t.Errorf("counts = %v %v", doc.Summary.ByRule, doc.Summary.BySeverity)
	}
	if doc.Summary.Policy.Source != "none" || doc.Summary.Policy.Policy != nil {
		t.Errorf("policy = %+v", doc.Summary.Policy)
	}

	r = fixture()
	r.Files, r.Dataset = nil, ""
	b.Reset()
	if err := JSON(&b, r); err != nil {
		t.Fatal(err)
	}
	doc = decodeJSON(t, b.Bytes())
	if rec := doc.Findings[0].Records[0]; rec.File != nil || rec.Row != nil || rec.Line != 12 {
		t.Errorf("record without a dataset = %+v, want source and line only", rec)
	}
	if doc.Summary.Dataset != "" {
		t.Errorf("dataset = %q", doc.Summary.Dataset)
	}
}
