package verify

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/stormaudit/stormaudit/dataset"

	"golang.org/x/mod/sumdb/note"

	"github.com/stormaudit/stormaudit/hashchain"
)

// checkManifestSig checks the manifest's signature (manifest.sig, a
// signed note whose text is manifest.json byte for byte): required, and
// verified, when verifiers are given.
func checkManifestSig(dir string, verifiers note.Verifiers, rep *Report) error {
	text, err := os.ReadFile(filepath.Join(dir, dataset.ManifestName))
	if err != nil {
		return err
	}
	sig, err := os.ReadFile(filepath.Join(dir, dataset.ManifestSigName))
	switch {
	case errors.Is(err, os.ErrNotExist) && verifiers != nil:
		rep.Problem = &Problem{File: dataset.ManifestSigName, What: "missing: the manifest is not signed, but verifier keys were given"}
		return nil
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	}
	n, err := hashchain.OpenNote(sig, verifiers)
	switch {
	case err != nil:
		rep.Problem = &Problem{File: dataset.ManifestSigName, What: strings.TrimPrefix(err.Error(), "hashchain: ")}
	case n.Text != string(text):
		rep.Problem = &Problem{File: dataset.ManifestSigName, What: "it signs another manifest than " + dataset.ManifestName}
	default:
		rep.ManifestSigned = true
	}
	return nil
}

// checkDigests checks every Parquet file against the SHA-256 the manifest
// records: a file whose rows verify may still have been changed where
// rows are not (its footer: statistics, metadata), and an engine that
// skips row groups by forged statistics hides rows from a query.
func checkDigests(dir string, m *dataset.Manifest, rep *Report) error {
	for _, f := range m.Files {
		got, err := dataset.DigestFile(filepath.Join(dir, filepath.FromSlash(f.Name)))
		if err != nil {
			return err
		}
		if got.SHA256 != f.SHA256 {
			rep.Problem = &Problem{File: f.Name, What: fmt.Sprintf("its SHA-256 is %s, the manifest records %s: the file was changed "+
				"(its rows may still verify, but its footer, statistics or metadata do not)", got.SHA256, f.SHA256)}
			return nil
		}
	}
	return nil
}

// checkAccounting checks that the manifest accounts for the rows verified
// and for the quarantine files: the evidence that every line read was
// accepted, rejected or a duplicate, and where each went.
func checkAccounting(dir string, m *dataset.Manifest, rep *Report) error {
	fail := func(format string, args ...any) error {
		rep.Problem = &Problem{File: dataset.ManifestName, What: fmt.Sprintf(format, args...)}
		return nil
	}
	text, err := os.ReadFile(filepath.Join(dir, dataset.ManifestName))
	if err != nil {
		return err
	}
	rep.Accounted = m.Totals
	var sum dataset.Counts
	for _, in := range m.Inputs {
		if !in.Counts.Balanced() {
			return fail("inputs: %s: %d lines read, but %d accepted + %d rejected + %d duplicates", in.Name, in.Lines, in.Accepted, in.Rejected, in.Duplicates)
		}
		sum.Add(in.Counts)
	}
	switch {
	case sum != m.Totals:
		return fail("inputs: their lines (%d = %d accepted + %d rejected + %d duplicates) are not the totals (%d = %d + %d + %d)",
			sum.Lines, sum.Accepted, sum.Rejected, sum.Duplicates, m.Totals.Lines, m.Totals.Accepted, m.Totals.Rejected, m.Totals.Duplicates)
	case !m.Totals.Balanced():
		return fail("%d lines read, but %d accepted + %d rejected + %d duplicates", m.Totals.Lines, m.Totals.Accepted, m.Totals.Rejected, m.Totals.Duplicates)
	case m.Rows != rep.Records || m.Totals.Accepted != rep.Records:
		return fail("it says %d rows (%d accepted), the files hold %d", m.Rows, m.Totals.Accepted, rep.Records)
	case rep.Checkpoint != nil && m.Checkpoint != string(rep.Checkpoint.Format()):
		return fail("its checkpoint is not the dataset's checkpoint")
	}
	// a file that does not match its digest is what was tampered: the
	// problem names it, not the manifest
	check := func(name string, want dataset.Digest) (bool, error) {
		got, err := dataset.DigestFile(filepath.Join(dir, filepath.FromSlash(name)))
		if errors.Is(err, os.ErrNotExist) {
			rep.Problem = &Problem{File: name, What: fmt.Sprintf("missing: ingest wrote %d bytes with SHA-256 %s", want.Bytes, want.SHA256)}
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if got != want {
			rep.Problem = &Problem{File: name, What: fmt.Sprintf("%d bytes with SHA-256 %s; ingest wrote %d bytes with SHA-256 %s (manifest.json)",
				got.Bytes, got.SHA256, want.Bytes, want.SHA256)}
			return false, nil
		}
		return true, nil
	}
	for _, f := range []struct {
		name string
		want dataset.Digest
	}{{dataset.RejectsName, m.Rejects}, {dataset.DuplicatesName, m.Duplicates}} {
		if ok, err := check(f.name, f.want); !ok {
			return err
		}
	}
	for _, b := range m.BrokerLogs {
		for _, name := range []string{b.File, b.RejectsFile} {
			if !filepath.IsLocal(filepath.FromSlash(name)) || !strings.HasPrefix(name, dataset.BrokerDir+"/") {
				return fail("broker_logs: file %q: expected a file under %s/", name, dataset.BrokerDir)
			}
		}
		if b.Lines != b.Events+b.Skipped+b.Rejected+b.Blank {
			return fail("broker_logs: %s: %d lines, but %d events + %d skipped + %d rejected + %d blank", b.Name, b.Lines, b.Events, b.Skipped, b.Rejected, b.Blank)
		}
		if ok, err := check(b.File, b.Digest); !ok {
			return err
		}
		if ok, err := check(b.RejectsFile, b.Rejects); !ok {
			return err
		}
		// said to match only once its files did
		rep.BrokerLogs = append(rep.BrokerLogs, fmt.Sprintf("%s (%s, %d events, %d lines rejected) as %s", b.Name, b.Format, b.Events, b.Rejected, b.File))
	}
	if !bytes.HasSuffix(text, []byte("\n")) {
		return fail("expected a JSON document ending in a newline")
	}
	return nil
}
