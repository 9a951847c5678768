package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// TestInboundFieldsEndToEnd takes the inbound fields through every
// command: the redelivery rule's positive log is ingested, verified
// intact, exported to Arrow (whose inbound columns hold what the log
// says, line by line) and checked, with the rule's two findings and the
// fleet's redelivery figures.
func TestInboundFieldsEndToEnd(t *testing.T) {
	in := filepath.Join("..", "..", "analyze", "testdata", "rules", "redelivery", "positive.ndjson")
	want := inboundByLine(t, in)
	dir := t.TempDir()
	ds, arrowOut := filepath.Join(dir, "ds"), filepath.Join(dir, "ds.arrow")
	ingestVerifyExport(t, in, ds, arrowOut)
	if got := arrowInbound(t, arrowOut); len(got) != len(want) {
		t.Errorf("Arrow export: %d rows, the log %d lines", len(got), len(want))
	} else {
		for line, w := range want {
			if got[line] != w {
				t.Errorf("Arrow export, line %d: inbound_redelivered, inbound_duplicates %v, the log %v", line, got[line], w)
			}
		}
	}
	code, stdout, stderr := runArgs(t, "--no-config", "check", "--format", "json", ds)
	if code != 1 {
		t.Fatalf("check: exit %d, want 1 (findings)\n%s", code, stderr)
	}
	var res struct {
		Findings []struct{ Rule, Kind, Device string }
		Summary  struct {
			Fleet struct {
				Redelivered    int64 `json:"redelivered"`
				RedeliveryPeak int64 `json:"redelivery_peak"`
			}
		}
	}
	if err := json.Unmarshal(stdout, &res); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, f := range res.Findings {
		if f.Rule == "redelivery" {
			kinds[f.Kind] = f.Device
		}
	}
	if kinds["redelivery/wave"] != "fleet" || kinds["redelivery/duplicates-delivered"] != "dev-0003" {
		t.Errorf("redelivery findings (kind: device) %v, want a fleet wave and dev-0003's duplicates", kinds)
	}
	var total int64
	for _, w := range want {
		total += max(w[0], 0)
	}
	if f := res.Summary.Fleet; f.Redelivered != total || f.RedeliveryPeak != 720 {
		t.Errorf("fleet: redelivered %d, peak %d; want %d (the log's sum) and 720 (12 devices × 60 in one second)", f.Redelivered, f.RedeliveryPeak, total)
	}
}

// ingestVerifyExport ingests in into the dataset ds, verifies it and
// exports it as Arrow to arrowOut, failing the test if any step fails.
func ingestVerifyExport(t *testing.T, in, ds, arrowOut string) {
	t.Helper()
	for _, args := range [][]string{
		{"--no-config", "ingest", "-q", "-o", ds, in},
		{"--no-config", "verify", ds},
		{"--no-config", "export", "--format", "arrow", "-o", arrowOut, ds},
	} {
		if code, _, stderr := runArgs(t, args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, stderr)
		}
	}
}

// inboundByLine returns inbound_redelivered and inbound_duplicates of
// each line of an NDJSON log, -1 for absent, by line number.
func inboundByLine(t *testing.T, path string) map[int64][2]int64 {
	return countsByLine(t, path, "inbound_redelivered", "inbound_duplicates")
}

// countsByLine returns the integer members a and b of each line of an
// NDJSON log, -1 for absent, by line number.
func countsByLine(t *testing.T, path, a, b string) map[int64][2]int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64][2]int64{}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for line := int64(1); dec.More(); line++ {
		var r map[string]any
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		v := [2]int64{-1, -1}
		for i, name := range []string{a, b} {
			if n, ok := r[name].(json.Number); ok {
				if v[i], err = n.Int64(); err != nil {
					t.Fatal(err)
				}
			}
		}
		out[line] = v
	}
	return out
}

// arrowInbound reads the inbound columns of an Arrow export, by line.
func arrowInbound(t *testing.T, path string) map[int64][2]int64 {
	return arrowCounts(t, path, "inbound_redelivered", "inbound_duplicates")
}

// arrowCounts reads the integer columns a and b of an Arrow export, -1
// for null, by line.
func arrowCounts(t *testing.T, path, a, b string) map[int64][2]int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fr, err := ipc.NewFileReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	col := func(name string) int {
		idx := fr.Schema().FieldIndices(name)
		if len(idx) != 1 {
			t.Fatalf("Arrow export: %d columns named %s", len(idx), name)
		}
		return idx[0]
	}
	redel, dups, line := col(a), col(b), col("line")
	out := map[int64][2]int64{}
	for i := range fr.NumRecords() {
		rec, err := fr.RecordBatch(i)
		if err != nil {
			t.Fatal(err)
		}
		lines := rec.Column(line).(*array.Int64)
		for r := range int(rec.NumRows()) {
			v := [2]int64{-1, -1}
			for k, c := range []int{redel, dups} {
				if a := rec.Column(c).(*array.Int64); a.IsValid(r) {
					v[k] = a.Value(r)
				}
			}
			out[lines.Value(r)] = v
		}
	}
	return out
}
