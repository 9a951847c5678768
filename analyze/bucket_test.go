package analyze

import (
	"context"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/dataset"
	"github.com/stormaudit/stormaudit/ingest"
	"github.com/stormaudit/stormaudit/simulate"
)

// A dataset partitioned into buckets holds each device in the bucket its
// client id hashes to, and gives the findings and fleet figures of the
// same records unpartitioned.
func TestBucketedDatasetSameFindings(t *testing.T) {
	pol := declaredPreset(t, "full-jitter", "startup_spread_s = 30\n")
	flat, _ := simDataset(t, simulate.Config{Devices: 600, Outage: time.Minute, Seed: 9, Policy: *declaredPreset(t, "fixed", ""),
		BadAuth: 0.05, Capacity: 40, Flaps: 1, FlapUp: 3 * time.Second, FlapDown: 10 * time.Second, DevicesPerHost: 3, OutboxPerS: 1})
	man, err := dataset.ReadManifest(flat)
	if err != nil {
		t.Fatal(err)
	}
	bucketed := filepath.Join(t.TempDir(), "bk")
	src := filepath.Join(filepath.Dir(flat), "sim.ndjson")
	if _, err := ingest.Run(context.Background(), bucketed, []ingest.Source{{Name: src}}, ingest.Options{Buckets: 7, FileRows: 2000}); err != nil {
		t.Fatal(err)
	}
	bm, err := dataset.ReadManifest(bucketed)
	if err != nil {
		t.Fatal(err)
	}
	if bm.Buckets != 7 || bm.Rows != man.Rows || bm.Checkpoint == man.Checkpoint {
		t.Errorf("manifest: %d buckets, %d rows (flat %d); the checkpoint must differ, the storage order does", bm.Buckets, bm.Rows, man.Rows)
	}
	// every file in a bucket directory, in bucket order, and every device
	// in the directory of its bucket, one bucket each
	var wrong []string
	seen := map[string]string{}
	lastDir := ""
	for _, f := range bm.Files {
		dir := path.Dir(f.Name)
		if dir < lastDir {
			wrong = append(wrong, f.Name+" after "+lastDir)
		}
		lastDir = dir
		for _, id := range clientIDs(t, filepath.Join(bucketed, filepath.FromSlash(f.Name))) {
			if want := dataset.BucketDir(dataset.Bucket(id, 7), 7); dir != want {
				wrong = append(wrong, fmt.Sprintf("%s in %s, want %s", id, f.Name, want))
			}
			if d, ok := seen[id]; ok && d != dir {
				wrong = append(wrong, id+" in two buckets")
			}
			seen[id] = dir
		}
	}
	if len(wrong) > 0 || len(seen) != 600 {
		t.Errorf("%d devices seen, want 600; misplaced: %v", len(seen), wrong[:min(5, len(wrong))])
	}
	a, err := Check(flat, Options{Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Check(bucketed, Options{Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Findings) < 10 {
		t.Fatalf("only %d findings: the fleet should break several rules", len(a.Findings))
	}
	key := func(r *Result) []string {
		var out []string
		for _, f := range r.Findings {
			lines := ""
			for _, ref := range f.Records {
				lines += fmt.Sprintf(" %d:%d", ref.Source, ref.Line)
			}
			if f.Device == Fleet {
				lines = fmt.Sprint(len(f.Records)) // which devices' records exemplify it follows the storage order
			}
			out = append(out, fmt.Sprintf("%s %s %d %d %s |%s", f.Rule, f.Device, f.Start, f.End, f.Message, lines))
		}
		slices.Sort(out)
		return out
	}
	if ka, kb := key(a), key(b); !slices.Equal(ka, kb) {
		for i := range min(len(ka), len(kb)) {
			if ka[i] != kb[i] {
				t.Errorf("findings differ, first at %d:\nflat     %s\nbucketed %s", i, ka[i], kb[i])
				break
			}
		}
	}
	fa, fb := *a.Summary.Fleet, *b.Summary.Fleet
	if fa.Attempts != fb.Attempts || fa.Peak != fb.Peak || fa.TTR99 != fb.TTR99 || len(fa.Incidents) != len(fb.Incidents) || fa.Flushed != fb.Flushed {
		t.Errorf("fleet figures differ:\nflat     %+v\nbucketed %+v", fa, fb)
	}
}

// clientIDs returns the client ids of the rows of a dataset file.
func clientIDs(t *testing.T, file string) []string {
	t.Helper()
	r, err := dataset.OpenFile(file)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var ids []string
	recs := make([]auditfmt.Record, 256)
	for {
		n, err := r.Read(recs)
		for _, rec := range recs[:n] {
			ids = append(ids, rec.ClientID)
		}
		if err == io.EOF {
			return ids
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
