package ingest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stormaudit/stormaudit/dataset"
)

// TestIngestMatchesVectors3: ingest of the input lines of the version 3
// test vectors (testdata/hashchain/vectors3.json) writes the very
// checkpoint the vectors give: the spec, its vectors, the independent
// checker and ingest agree.
func TestIngestMatchesVectors3(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "hashchain", "vectors3.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Log      string
		Datasets []struct {
			Rows []struct {
				Source, Input string
				Line          int
			}
			Checkpoints []struct {
				Rows       int64
				Checkpoint string
			}
		}
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	for k, d := range v.Datasets {
		dir := t.TempDir()
		t.Chdir(dir)
		files := map[string][]string{}
		var names []string
		for _, r := range d.Rows {
			if files[r.Source] == nil {
				names = append(names, r.Source)
			}
			lines := files[r.Source]
			for len(lines) < r.Line {
				lines = append(lines, "") // a line the vectors do not hold: blank
			}
			lines[r.Line-1] = r.Input
			files[r.Source] = lines
		}
		var sources []Source
		for _, name := range names {
			if err := os.WriteFile(name, []byte(strings.Join(files[name], "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			sources = append(sources, Source{Name: name})
		}
		if _, err := Run(context.Background(), "ds", sources, Options{Log: v.Log}); err != nil {
			t.Fatalf("dataset %d: %v", k, err)
		}
		got, err := os.ReadFile(filepath.Join("ds", dataset.CheckpointName))
		if err != nil {
			t.Fatal(err)
		}
		last := d.Checkpoints[len(d.Checkpoints)-1]
		if last.Rows != int64(len(d.Rows)) || string(got) != last.Checkpoint {
			t.Errorf("dataset %d: ingest wrote the checkpoint\n%s\nthe vectors say, for %d rows,\n%s", k, got, last.Rows, last.Checkpoint)
		}
	}
}
