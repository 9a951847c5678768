package dataset

import (
	"bufio"
	"bytes"
	"fmt"

	"golang.org/x/mod/sumdb/note"

	"github.com/stormaudit/stormaudit/hashchain"
)

// CollectorLog is what ingest found when an input was a collector log
// written by hashchain.Writer: the log was verified (every chain, the tree
// against its checkpoint, the signature with the ingest's verifiers)
// before any of its records was taken. Each record keeps its collector
// chain position in its envelope column ({"chain": {...}}).
type CollectorLog struct {
	Log               string   `json:"log"`
	Records           int64    `json:"records"`
	Checkpoint        string   `json:"checkpoint,omitempty"` // the checkpoint body, when the log has one
	Signers           []string `json:"signers,omitempty"`
	SignaturesChecked bool     `json:"signatures_checked"`
	Unsealed          int64    `json:"unsealed"` // records after the checkpoint
}

// isCollectorLog reports whether the content starts like a collector log
// line: {"chain": ...}.
func isCollectorLog(r *bufio.Reader) bool {
	head, _ := r.Peek(64)
	head = bytes.TrimLeft(head, " \t\r\n")
	return bytes.HasPrefix(head, []byte(`{"chain":`))
}

// verifyCollectorLog verifies the collector log at path with
// hashchain.ReadLog.
func verifyCollectorLog(path string, verifiers note.Verifiers) (*CollectorLog, error) {
	rep, err := hashchain.ReadLog(path, verifiers)
	if err != nil {
		return nil, fmt.Errorf("a collector log that does not verify: %w", err)
	}
	c := &CollectorLog{Log: rep.Log, Records: rep.Records, Signers: rep.Signers,
		SignaturesChecked: rep.SignaturesChecked, Unsealed: rep.Unsealed}
	if rep.Checkpoint != nil {
		c.Checkpoint = string(rep.Checkpoint.Format())
	}
	return c, nil
}
