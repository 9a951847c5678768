package ingest

import (
	"bufio"
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
		bl, err := storeBrokerLog(ing.dir, k, src, ing.opts.Strict, ing.opts.MaxRejects)
		if err != nil {
			return nil, err
		}
		out = append(out, bl)
	}
	return out, nil
}

// storeBrokerLog stores the k-th broker log under dir and returns its
// manifest entry. Its events are counted, not kept,
// and its rejects written as they are read: what it costs does not grow
// with its lines.
func storeBrokerLog(dir string, k int, src BrokerSource, strict bool, maxRejects int64) (dataset.BrokerLog, error) {
	rjName := dataset.BrokerDir + "/" + fmt.Sprintf("%02d.rejects.ndjson", k)
	rjFile, err := os.Create(filepath.Join(dir, filepath.FromSlash(rjName)))
	if err != nil {
		return dataset.BrokerLog{}, err
	}
	defer rjFile.Close()
	rj := bufio.NewWriter(rjFile)
	o := src.Options
	o.MaxRejects = 1
	var first *brokerlog.Reject
	o.Reject = func(r brokerlog.Reject) {
		if first == nil {
			first = &r
		}
		b, _ := json.Marshal(brokerReject{Line: r.Line, Field: r.Field, Reason: r.Reason, Text: r.Text})
		rj.Write(append(b, '\n'))
	}
	l, err := brokerlog.Scan(bytes.NewReader(src.Data), src.Name, o, func(*brokerlog.Event) {})
	if err != nil {
		return dataset.BrokerLog{}, err
	}
	if l.Rejected > 0 && (strict || maxRejects > 0 && int64(l.Rejected) > maxRejects) {
		return dataset.BrokerLog{}, fmt.Errorf("%s:%d: %s: %d broker log lines rejected (--strict, or more than --max-rejects)", src.Name, first.Line, first.Reason, l.Rejected)
	}
	if err := rj.Flush(); err != nil {
		return dataset.BrokerLog{}, err
	}
	if err := rjFile.Close(); err != nil {
		return dataset.BrokerLog{}, err
	}
	name := fmt.Sprintf("%02d.log", k)
	if l.Gzip {
		name += ".gz"
	}
	bl := dataset.BrokerLog{Name: src.Name, File: dataset.BrokerDir + "/" + name, Format: l.Format.String(), TZ: "UTC",
		Lines: l.Lines, Events: l.Found, Skipped: l.Skipped, Rejected: l.Rejected, Blank: l.Blank, RejectsFile: rjName}
	if o.TZ != nil {
		bl.TZ = o.TZ.String()
	}
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(bl.File)), src.Data, 0o644); err != nil {
		return dataset.BrokerLog{}, err
	}
	if bl.Digest, err = dataset.DigestFile(filepath.Join(dir, filepath.FromSlash(bl.File))); err != nil {
		return dataset.BrokerLog{}, err
	}
	if bl.Rejects, err = dataset.DigestFile(filepath.Join(dir, filepath.FromSlash(rjName))); err != nil {
		return dataset.BrokerLog{}, err
	}
	return bl, nil
}
