package dataset

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Listing is how a dataset's directory compares with its manifest.
type Listing struct {
	// Unlisted is the first file or directory (a slash-separated path
	// inside the dataset) that the manifest does not list and no dataset
	// has; "" if none. Any reader that globs *.parquet reads an unlisted
	// part file as part of the dataset.
	Unlisted string
	// Missing are the files the manifest lists, or every dataset has,
	// that are not there, sorted.
	Missing []string
}

// List compares the directory dir with the manifest m: every file m lists
// (its parts and broker logs) and every file each dataset has (the
// manifest, the checkpoint and the quarantine files; the manifest's
// signature when there is one) is there, and nothing else is. It fails
// only when dir cannot be listed, or m names a path outside it.
func List(dir string, m *Manifest) (Listing, error) {
	want := map[string]bool{ManifestName: true, CheckpointName: true, RejectsName: true, DuplicatesName: true}
	dirs := map[string]bool{}
	listed := make([]File, 0, len(m.Files)+2*len(m.BrokerLogs))
	listed = append(listed, m.Files...)
	for _, b := range m.BrokerLogs {
		listed = append(listed, File{Name: b.File}, File{Name: b.RejectsFile})
	}
	for _, f := range listed {
		name := filepath.FromSlash(f.Name)
		if !filepath.IsLocal(name) {
			return Listing{}, fmt.Errorf("%s: files: %q is not a path inside the dataset", ManifestName, f.Name)
		}
		want[name] = true
		for d := filepath.Dir(name); d != "."; d = filepath.Dir(d) {
			dirs[d] = true
		}
	}
	var l Listing
	// a dataset reached through a symlink (link, not link/) is walked as
	// the directory it names: WalkDir does not follow its root
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	err := filepath.WalkDir(dir, func(path string, e os.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		switch {
		case e.IsDir() && dirs[rel]:
			return nil
		case e.Type().IsRegular() && (want[rel] || rel == ManifestSigName):
			delete(want, rel)
			return nil
		}
		l.Unlisted = filepath.ToSlash(rel)
		return filepath.SkipAll
	})
	if err != nil {
		return Listing{}, fmt.Errorf("the dataset's directory cannot be listed: %v", err)
	}
	for name := range want {
		l.Missing = append(l.Missing, filepath.ToSlash(name))
	}
	slices.Sort(l.Missing)
	return l, nil
}

// UnlistedWhat says what an unlisted file is, for a message naming it.
func UnlistedWhat(name string) string {
	what := "not part of the dataset: the manifest does not list it"
	if strings.HasSuffix(name, ".parquet") {
		what += ", yet any reader of *.parquet in the directory (DuckDB, Spark, polars) reads it as part of the dataset"
	}
	return what
}
