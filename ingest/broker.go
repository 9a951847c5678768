package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/stormaudit/stormaudit/brokerlog"
	"github.com/stormaudit/stormaudit/dataset"
)

// BrokerSource is a broker's own log to store with the dataset
// (Options.BrokerLogs): its name, its bytes as read (gzip or not), and how
// to read it.
type BrokerSource struct {
	Name string
	Data []byte
	// Format forces the format (brokerlog.Detect: told by content); TZ
	// is the zone of stamps that name none (nil: UTC).
	Options brokerlog.Options
}

// brokerReject is one line of a stored broker log's rejects file.
type brokerReject struct {
	Line   int    `json:"line"`
	Field  string `json:"field,omitempty"`
	Reason string `json:"reason"`
	Text   string `json:"text"`
}

// storeBrokerLogs writes the broker logs under dataset.BrokerDir, byte for
// byte, each with the lines it rejected, and returns their manifest
// entries. A log that cannot be read (its format not told) is an error;
// under Strict so is a rejected line, and beyond MaxRejects.
func (ing *ingest) storeBrokerLogs() ([]dataset.BrokerLog, error) {
	if len(ing.opts.BrokerLogs) == 0 {
		return nil, nil
	}
	dir := filepath.Join(ing.dir, dataset.BrokerDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var out []dataset.BrokerLog
	for k, src := range ing.opts.BrokerLogs {
		o := src.Options
		o.MaxRejects = -1
		l, err := brokerlog.Read(bytes.NewReader(src.Data), src.Name, o)
		if err != nil {
			return nil, err
		}
		if l.Rejected > 0 && (ing.opts.Strict || ing.opts.MaxRejects > 0 && int64(l.Rejected) > ing.opts.MaxRejects) {
			r := l.Rejects[0]
			return nil, fmt.Errorf("%s:%d: %s: %d broker log lines rejected (--strict, or more than --max-rejects)", src.Name, r.Line, r.Reason, l.Rejected)
		}
		name := fmt.Sprintf("%02d.log", k)
		if l.Gzip {
			name += ".gz"
		}
		bl := dataset.BrokerLog{Name: src.Name, File: dataset.BrokerDir + "/" + name, Format: l.Format.String(), TZ: "UTC",
			Lines: l.Lines, Events: len(l.Events), Skipped: l.Skipped, Rejected: l.Rejected, Blank: l.Blank,
			RejectsFile: dataset.BrokerDir + "/" + fmt.Sprintf("%02d.rejects.ndjson", k)}
		if o.TZ != nil {
			bl.TZ = o.TZ.String()
		}
		if err := os.WriteFile(filepath.Join(ing.dir, filepath.FromSlash(bl.File)), src.Data, 0o644); err != nil {
			return nil, err
		}
		var rj bytes.Buffer
		for _, r := range l.Rejects {
			b, _ := json.Marshal(brokerReject{Line: r.Line, Field: r.Field, Reason: r.Reason, Text: r.Text})
			rj.Write(append(b, '\n'))
		}
		if err := os.WriteFile(filepath.Join(ing.dir, filepath.FromSlash(bl.RejectsFile)), rj.Bytes(), 0o644); err != nil {
			return nil, err
		}
		if bl.Digest, err = dataset.DigestFile(filepath.Join(ing.dir, filepath.FromSlash(bl.File))); err != nil {
			return nil, err
		}
		if bl.Rejects, err = dataset.DigestFile(filepath.Join(ing.dir, filepath.FromSlash(bl.RejectsFile))); err != nil {
			return nil, err
		}
		out = append(out, bl)
	}
	return out, nil
}
