// Package simdata makes the simulated datasets that benchmarks share: a
// fleet simulated with a config and ingested, kept in the temporary
// directory under a name so that later runs reuse it. Only tests import
// it (testkit cannot: ingest's own tests import testkit).
package simdata

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stormaudit/stormaudit/dataset"
	"github.com/stormaudit/stormaudit/ingest"
	"github.com/stormaudit/stormaudit/simulate"
)

// Dataset returns the dataset $TMPDIR/name, made from cfg's simulated log
// unless a run before made it. A name must change with cfg: a dataset of
// that name is reused as it is.
func Dataset(tb testing.TB, name string, cfg simulate.Config) string {
	tb.Helper()
	dir := filepath.Join(os.TempDir(), name)
	if _, err := dataset.ReadManifest(dir); err == nil {
		return dir
	}
	log := filepath.Join(tb.TempDir(), "fleet.ndjson")
	f, err := os.Create(log)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := simulate.Run(context.Background(), cfg, f); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	os.RemoveAll(dir)
	if _, err := ingest.Run(context.Background(), dir, []ingest.Source{{Name: log}}, ingest.Options{}); err != nil {
		tb.Fatal(err)
	}
	return dir
}
