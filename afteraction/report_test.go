package afteraction

import (
	"bytes"
	"encoding/json"
	"github.com/stormaudit/stormaudit/internal/safe"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/policy"
	"github.com/stormaudit/stormaudit/replay"
	"github.com/stormaudit/stormaudit/report"
	"github.com/stormaudit/stormaudit/verify"
)

// hostile are client ids that would be markup if a page did not escape
// them: each replaces a device of the sample incident that has findings.
var hostile = map[string]string{
	"dev-0041": `<script>window.__pwned=1</script>`,
	"dev-0042": `"><img src=x onerror="window.__pwned=2">`,
	"dev-0043": `</svg><svg onload="window.__pwned=3"><text>`,
	"dev-0044": `x' onmouseover='window.__pwned=4`,
	// a terminal obeys ESC and BEL (cat report.html); U+202E spoofs a name
	"dev-0045": "red\x1b[31m\x07bell",
	"dev-0046": "dev-\u202e1000-ved",
}

// hostileReport writes the report of the sample incident with hostile
// client ids, a declared policy, a verification and a replay comparison,
// and returns its path and what it was made of.
func hostileReport(t testing.TB) (string, *Report) {
	t.Helper()
	// the demo's sample log (testdata/incident.ndjson links to it)
	log, err := os.ReadFile(filepath.Join("..", "testdata", "incident.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	for from, to := range hostile {
		q, _ := json.Marshal(to)
		log = bytes.ReplaceAll(log, []byte(`"`+from+`"`), q)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.ndjson")
	if err := os.WriteFile(in, log, 0o644); err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Resolve("full-jitter")
	if err != nil {
		t.Fatal(err)
	}
	rep := gatherLog(t, in, analyze.Options{Policy: &pol, PolicyName: "full-jitter"})
	ds := rep.Dataset
	if rep.Verify, err = verify.Dataset(ds, verify.Options{}); err != nil {
		t.Fatal(err)
	}
	rep.Title, rep.Generated, rep.Version = "Sample incident", time.Unix(1e9, 0), "test"
	rep.Replay = []*replay.Report{
		{Plan: `recorded <b>bold</b>`, Broker: "embedded", Protocol: "3.1.1", Devices: 48, BrokerDid: replay.BrokerDid{ConnectsAccepted: 48}, Held: true, Verdict: "held",
			Redelivery: replay.Redelivery{Queued: 5, QueuedQoS: 1, Published: 240, Redelivered: 240, RedeliveryPeakPerS: 200, RedeliveryPeakAtS: 1,
				Waves: &replay.Waves{Connects: []int{0, 48, 0}, Redelivered: []int{0, 200, 40}}}},
		{Plan: "what-if full-jitter", Broker: "embedded", Protocol: "3.1.1", Devices: 48,
			BrokerDid: replay.BrokerDid{ConnectsAccepted: 47, ConnectsRefused: 1, RefusedByCode: map[string]int{"0x9f": 1}}, Verdict: "refused 1"},
	}
	out := filepath.Join(dir, "report.html")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(f, rep, DefaultOptions); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return out, rep
}

// TestReportEscapes checks that no device-provided string became markup:
// the page has no script, no event handler, no image and no link out of
// the page, and every hostile id is there as text.
func TestReportEscapes(t *testing.T) {
	path, _ := hostileReport(t)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script", "img", "iframe", "object", "embed", "image", "foreignObject", "link":
				t.Errorf("the page has a <%s> element", n.Data)
			}
			for _, a := range n.Attr {
				if strings.HasPrefix(strings.ToLower(a.Key), "on") {
					t.Errorf("<%s> has an event handler %s=%q", n.Data, a.Key, a.Val)
				}
				if a.Key == "href" && !strings.HasPrefix(a.Val, "#") {
					t.Errorf("<%s> links out of the page: %q", n.Data, a.Val)
				}
			}
		}
		if n.Type == html.TextNode {
			text.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	for _, id := range hostile {
		if !strings.Contains(text.String(), safe.Text(id)) {
			t.Errorf("the page's text lacks the client id %q, shown as %q", id, safe.Text(id))
		}
	}
	for _, raw := range []string{"\x1b", "\x07", "\u202e"} {
		if bytes.Contains(b, []byte(raw)) {
			t.Errorf("the page holds a raw %q from a client id", raw)
		}
	}
	if !strings.Contains(text.String(), `recorded <b>bold</b>`) {
		t.Errorf("the page's text lacks the replay plan's name")
	}
	// the broker's doing and the replay's own are headed apart, the
	// broker's first
	b1, b2 := strings.Index(text.String(), replay.SideBroker), strings.Index(text.String(), replay.SideReplay)
	if b1 < 0 || b2 < b1 || strings.Count(text.String(), replay.SideBroker) != 1 {
		t.Errorf("the replay's table heads the broker's rows at %d and the replay's at %d", b1, b2)
	}
}

// TestReportContents checks the page against what it was made of: the
// incident's figures, a chart of each kind, a timeline for every device
// link, the replay's rows.
func TestReportContents(t *testing.T) {
	path, rep := hostileReport(t)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	st := rep.Overview.Result.Summary.Fleet
	if len(st.Incidents) == 0 {
		t.Fatal("the sample incident has no incident")
	}
	if len(st.Incidents) == 1 && !strings.Contains(page, "1 incident.") {
		t.Error("the header does not say \"1 incident.\" (it said \"1 incidents\")")
	}
	if strings.Contains(page, " 1 sessions") || strings.Contains(page, " 1 outages") {
		t.Error("a timeline summary says \"1 sessions\" or \"1 outages\"")
	}
	// the header opens with the verdict
	v := report.Verdict(rep.Overview.Result)
	if i, j := strings.Index(page, "<strong>Verdict:</strong> "+html.EscapeString(v[0])), strings.Index(page, "Generated "); i < 0 || i > j {
		t.Errorf("the header does not open with the verdict %q", v[0])
	}
	in := incidentOf(&st.Incidents[0], 1)
	for _, want := range []string{in.Recovery, in.Peak, in.Return} {
		if want == "" || !strings.Contains(page, html.EscapeString(want)) {
			t.Errorf("the page lacks the incident's %q", want)
		}
	}
	for _, label := range []string{"Incident 1", "Socket-opens and connects over the whole log", "time to recover, cumulative distribution",
		"the worst devices&#39; sessions and socket-opens over time", "findings per rule"} {
		if !strings.Contains(page, `aria-label="`+label+`"`) {
			t.Errorf("the page lacks the chart %q", label)
		}
	}
	for i := range rep.Timelines {
		anchor := "device-" + strconv.Itoa(i+1)
		if !strings.Contains(page, `id="`+anchor+`"`) || !strings.Contains(page, `href="#`+anchor+`"`) {
			t.Errorf("timeline %s is not both there and linked", anchor)
		}
	}
	if strings.Contains(page, "outside the chart") {
		t.Error("the whole log's chart leaves out activity of a log whose clocks agree")
	}
	if !strings.Contains(page, "1 × 0x9f") {
		t.Error("the page lacks the what-if's refusals")
	}
	if rep.Verify == nil || rep.Verify.Problem != nil || !strings.Contains(page, `<span class="ok">intact</span>`) {
		t.Error("the page does not say the dataset is intact")
	}
}

// TestReplayWaves: a replay with queued messages adds its redelivery
// rows to the replay section, for every replay compared (a replay without
// a queue shows them as zeros), and a chart of its connect and redelivery
// waves on one time axis; one without a queue adds no chart.
func TestReplayWaves(t *testing.T) {
	_, rep := hostileReport(t)
	v, err := replayOf(rep)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, r := range v.Rows {
		rows[r.Name] = r.Values
	}
	if got, want := rows["peak redelivered/s"], []string{"200 at +1s", "0 at +0s"}; !slices.Equal(got, want) {
		t.Errorf("peak redelivered/s: %q, want %q", got, want)
	}
	if len(v.Waves) != 1 || !strings.Contains(string(v.Waves[0].SVG), "connects accepted and queued messages received per second") ||
		!strings.Contains(v.Waves[0].Caption, "redelivery peak 200/s at +1 s") {
		t.Errorf("waves: %d charts, %+v", len(v.Waves), v.Waves)
	}
}
