package ingest

import (
	"bufio"
	"bytes"
	"fmt"

	"github.com/stormaudit/stormaudit/dataset"

	"golang.org/x/mod/sumdb/note"

	"github.com/stormaudit/stormaudit/hashchain"
)

// isCollectorLog reports whether the content starts like a collector log
// line: {"chain": ...}.
func isCollectorLog(r *bufio.Reader) bool {
	head, _ := r.Peek(64)
	head = bytes.TrimLeft(head, " \t\r\n")
	return bytes.HasPrefix(head, []byte(`{"chain":`))
}

// verifyCollectorLog verifies the collector log at path with
// hashchain.ReadLog.
func verifyCollectorLog(path string, verifiers note.Verifiers) (*dataset.CollectorLog, error) {
	rep, err := hashchain.ReadLog(path, verifiers)
	if err != nil {
		return nil, fmt.Errorf("a collector log that does not verify: %w", err)
	}
	c := &dataset.CollectorLog{Log: rep.Log, Records: rep.Records, Signers: rep.Signers,
		SignaturesChecked: rep.SignaturesChecked, Unsealed: rep.Unsealed}
	if rep.Checkpoint != nil {
		c.Checkpoint = string(rep.Checkpoint.Format())
	}
	return c, nil
}
