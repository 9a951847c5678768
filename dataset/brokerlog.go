package dataset

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/stormaudit/stormaudit/brokerlog"
)

// StoredBrokerLog is a broker log stored with a dataset (ingest
// --broker-log), opened to be read once, as a stream, with the options
// it was stored under. Reading it digests it: once read to its end,
// Changed says whether it is still the file the manifest records.
type StoredBrokerLog struct {
	// Entry is the manifest's entry for it.
	Entry BrokerLog
	// Options are its format and time zone as stored.
	Options brokerlog.Options

	f *os.File
	h hash.Hash
	n int64
}

// OpenBrokerLog opens the broker log of the manifest's entry b in the
// dataset dir. The entry's file must lie under BrokerDir, and its format
// and zone be ones Read knows: else the manifest is at fault, and the
// error says so.
func OpenBrokerLog(dir string, b BrokerLog) (*StoredBrokerLog, error) {
	if !filepath.IsLocal(filepath.FromSlash(b.File)) || !strings.HasPrefix(b.File, BrokerDir+"/") {
		return nil, fmt.Errorf("%s: broker_logs: file %q: expected a file under %s/", ManifestName, b.File, BrokerDir)
	}
	format, err := brokerlog.ParseFormat(b.Format)
	if err != nil {
		return nil, fmt.Errorf("%s: broker_logs: %s: format: %v", ManifestName, b.File, err)
	}
	loc, err := time.LoadLocation(b.TZ)
	if err != nil {
		return nil, fmt.Errorf("%s: broker_logs: %s: tz: %v", ManifestName, b.File, err)
	}
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(b.File)))
	if err != nil {
		return nil, err
	}
	return &StoredBrokerLog{Entry: b, Options: brokerlog.Options{Format: format, TZ: loc}, f: f, h: sha256.New()}, nil
}

// Read reads the stored file, digesting what it reads.
func (s *StoredBrokerLog) Read(p []byte) (int, error) {
	n, err := s.f.Read(p)
	s.h.Write(p[:n])
	s.n += int64(n)
	return n, err
}

// Close closes the file.
func (s *StoredBrokerLog) Close() error { return s.f.Close() }

// Changed reads what is left of the file and says how it differs from
// the manifest's digest: "" when it is the file ingest stored, else a
// sentence naming it, for a note (verify names it as tampered).
func (s *StoredBrokerLog) Changed() (string, error) {
	if _, err := io.Copy(io.Discard, s); err != nil {
		return "", err
	}
	b := s.Entry
	if got := hex.EncodeToString(s.h.Sum(nil)); got != b.Digest.SHA256 || s.n != b.Digest.Bytes {
		return fmt.Sprintf("%s, stored as %s, was changed after ingest (%d bytes with SHA-256 %s; the manifest holds %d bytes with %s)",
			b.Name, b.File, s.n, got, b.Digest.Bytes, b.Digest.SHA256), nil
	}
	return "", nil
}
