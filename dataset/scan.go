package dataset

import (
	"io"
	"path/filepath"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// Scan reads every record of the dataset in dir, file after file in
// manifest order, and calls fn with each batch of records (at most 1024,
// valid only during the call). Record.Source indexes the names fn is
// given. The first error, Scan's or fn's, ends the scan.
func Scan(dir string, fn func(recs []auditfmt.Record, sources []string) error) error {
	m, err := ReadManifest(dir)
	if err != nil {
		return err
	}
	recs := make([]auditfmt.Record, 1024)
	for _, f := range m.Files {
		if err := scanFile(filepath.Join(dir, f.Name), recs, fn); err != nil {
			return err
		}
	}
	return nil
}

func scanFile(path string, recs []auditfmt.Record, fn func([]auditfmt.Record, []string) error) error {
	fr, err := OpenFile(path)
	if err != nil {
		return err
	}
	defer fr.Close()
	for {
		n, err := fr.Read(recs)
		if n > 0 {
			if ferr := fn(recs[:n], fr.Sources()); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
