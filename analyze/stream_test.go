package analyze

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/dataset"
	"github.com/stormaudit/stormaudit/ingest"
	"github.com/stormaudit/stormaudit/policy"
	"github.com/stormaudit/stormaudit/simulate"
)

// TestCheckRecordsMatchesCheck checks raw logs (real clients' and a
// simulated fleet's, with rejected and duplicate lines added) both ways:
// through a dataset (Check) and straight from the records (CheckRecords),
// with the policy declared and inferred. Everything but the dataset files
// must agree.
func TestCheckRecordsMatchesCheck(t *testing.T) {
	var sim []byte
	if _, err := simulate.Run(context.Background(), simulate.Config{Devices: 400, Outage: 30 * time.Second,
		Policy: simPreset(t, "fixed"), Seed: 4, Capacity: 60, BadAuth: 0.05}, (*bytesWriter)(&sim)); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(sim), "\n")
	// a rejected line and a duplicate, so that the accounting shows
	sim = []byte(strings.Join(lines[:50], "") + "{not json\n" + lines[10] + strings.Join(lines[50:], ""))
	simPath := filepath.Join(t.TempDir(), "sim.ndjson")
	if err := os.WriteFile(simPath, sim, 0o644); err != nil {
		t.Fatal(err)
	}
	fixed := simPreset(t, "fixed")
	inputs := map[string]string{"simulated": simPath}
	for _, name := range []string{"paho-go", "paho-py-library"} {
		inputs[name] = filepath.Join("..", "testdata", "realclients", name, "clients.ndjson")
	}
	for name, path := range inputs {
		for _, pol := range []*policy.Policy{nil, &fixed} {
			opts := Options{Policy: pol}
			ds := ingestFiles(t, 0, path)
			want, err := Check(ds, opts)
			if err != nil {
				t.Fatal(err)
			}
			work := filepath.Join(t.TempDir(), "scan")
			got, err := CheckRecords(func(fn func([]auditfmt.Record) error) (*dataset.Manifest, error) {
				return ingest.Scan(context.Background(), work, []ingest.Source{{Name: path}}, ingest.Options{}, fn)
			}, work, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Findings) != len(want.Findings) {
				t.Fatalf("%s (policy %v): %d findings from the records, %d from the dataset", name, pol != nil, len(got.Findings), len(want.Findings))
			}
			for i := range got.Findings {
				g, w := got.Findings[i], want.Findings[i]
				for k := range g.Records {
					g.Records[k].File, g.Records[k].Row = 0, 0
				}
				for k := range w.Records {
					w.Records[k].File, w.Records[k].Row = 0, 0
				}
				if !reflect.DeepEqual(g, w) {
					t.Fatalf("%s: finding %d differs:\nrecords %+v\ndataset %+v", name, i, g, w)
				}
			}
			gs, ws := got.Summary, want.Summary
			gs.Fleet, ws.Fleet = nil, nil
			if !reflect.DeepEqual(gs, ws) || !reflect.DeepEqual(*got.Summary.Fleet, *want.Summary.Fleet) {
				t.Fatalf("%s: summaries differ:\nrecords %+v\ndataset %+v", name, got.Summary, want.Summary)
			}
			if name == "simulated" && (gs.Rejected != 1 || len(got.Findings) == 0) {
				t.Fatalf("simulated: %d rejected, %d findings; the test tests too little", gs.Rejected, len(got.Findings))
			}
		}
	}
}
