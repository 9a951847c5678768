package dataset

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/mod/sumdb/note"
)

// checkManifest checks that the manifest accounts for the rows verified
// and for the quarantine files, and, when verifiers are given, that it is
// signed by one of them: the evidence that every line read was accepted,
// rejected or a duplicate, and where each went.
func checkManifest(dir string, m *Manifest, verifiers note.Verifiers, rep *VerifyReport) error {
	fail := func(format string, args ...any) error {
		rep.Problem = &Problem{What: "manifest: " + fmt.Sprintf(format, args...)}
		return nil
	}
	text, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return err
	}
	sig, err := os.ReadFile(filepath.Join(dir, ManifestSigName))
	switch {
	case errors.Is(err, os.ErrNotExist) && verifiers != nil:
		return fail("not signed (no %s), but verifier keys were given", ManifestSigName)
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	default:
		n, err := openUnverified(sig)
		if verifiers != nil {
			n, err = note.Open(sig, verifiers)
		}
		if err != nil {
			return fail("%s: %v", ManifestSigName, err)
		}
		if n.Text != string(text) {
			return fail("%s signs another manifest than %s", ManifestSigName, ManifestName)
		}
		rep.ManifestSigned = true
	}
	rep.Accounted = m.Totals
	switch {
	case !m.Totals.Balanced():
		return fail("%d lines read, but %d accepted + %d rejected + %d duplicates", m.Totals.Lines, m.Totals.Accepted, m.Totals.Rejected, m.Totals.Duplicates)
	case m.Rows != rep.Records || m.Totals.Accepted != rep.Records:
		return fail("it says %d rows (%d accepted), the files hold %d", m.Rows, m.Totals.Accepted, rep.Records)
	case rep.Checkpoint != nil && m.Checkpoint != string(rep.Checkpoint.Format()):
		return fail("its checkpoint is not the dataset's checkpoint")
	}
	for _, f := range []struct {
		name string
		want Digest
	}{{RejectsName, m.Rejects}, {DuplicatesName, m.Duplicates}} {
		got, err := digestFile(filepath.Join(dir, f.name))
		if err != nil {
			return err
		}
		if got != f.want {
			return fail("%s has %d bytes with SHA-256 %s; ingest wrote %d bytes with SHA-256 %s", f.name, got.Bytes, got.SHA256, f.want.Bytes, f.want.SHA256)
		}
	}
	if !bytes.HasSuffix(text, []byte("\n")) {
		return fail("expected a JSON document ending in a newline")
	}
	return nil
}
