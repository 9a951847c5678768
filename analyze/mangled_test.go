package analyze

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stormaudit/stormaudit/ingest"

	"github.com/stormaudit/stormaudit/policy"
)

// TestCheckSurvivesMangledLogs ingests mangled copies of the rule logs of
// testdata/rules (cut short, started midway, a byte changed, lines
// repeated) and checks each with the policy inferred and declared:
// whatever the devices wrote, check must finish without panicking or
// failing, and every finding must name a rule, a device and records
// within the dataset. (Go's fuzzer runs this pipeline too slowly under its
// coverage instrumentation to be of use, so the mangling is seeded here.)
func TestCheckSurvivesMangledLogs(t *testing.T) {
	logs, _ := filepath.Glob(filepath.Join("testdata", "rules", "*", "*.ndjson"))
	if len(logs) < 30 {
		t.Fatalf("found %d logs in testdata/rules, want the rules' positive and negative logs", len(logs))
	}
	pol, err := policy.Preset("full-jitter")
	if err != nil {
		t.Fatal(err)
	}
	n := 60
	if testing.Short() {
		n = 20
	}
	rng := rand.New(rand.NewPCG(7, 11))
	for k := range n {
		log := mangle(rng, logs[rng.IntN(len(logs))], t)
		dir := t.TempDir()
		in := filepath.Join(dir, "log.ndjson")
		if err := os.WriteFile(in, log, 0o644); err != nil {
			t.Fatal(err)
		}
		ds := filepath.Join(dir, "ds")
		man, err := ingest.Run(context.Background(), ds, []ingest.Source{{Name: in}}, ingest.Options{})
		if err != nil {
			t.Fatalf("mangled log %d: ingest: %v", k, err)
		}
		for _, p := range []*policy.Policy{nil, &pol} {
			res, err := Check(ds, Options{Policy: p})
			if err != nil {
				t.Fatalf("mangled log %d: check: %v\n%s", k, err, log)
			}
			for _, fd := range res.Findings {
				if fd.Rule == "" || fd.Device == "" || fd.Severity == 0 || fd.Message == "" {
					t.Fatalf("mangled log %d: incomplete finding %+v", k, fd)
				}
				for _, r := range fd.Records {
					inRow := r.Row >= 0 && r.Row < man.Rows
					lineOnly := r.File == -1 && r.Row == -1 && fd.Rule == "audit-gap" // a rejected line, located
					if !inRow && !lineOnly || int(r.Source) >= len(res.Sources) || r.Line < 1 {
						t.Fatalf("mangled log %d: %s: record %+v outside the dataset (%d rows)", k, fd.Rule, r, man.Rows)
					}
				}
			}
		}
	}
}

// mangle returns the log at path, damaged one of several ways.
func mangle(rng *rand.Rand, path string, t *testing.T) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	switch rng.IntN(4) {
	case 0:
		return b[:rng.IntN(len(b))]
	case 1:
		return b[rng.IntN(len(b)):]
	case 2:
		b[rng.IntN(len(b))] = byte(rng.IntN(256))
		return b
	}
	i := rng.IntN(len(b))
	return append(b[:i:i], append(b[i:], b[i:]...)...)
}
