package verify

import (
	"fmt"
	"strings"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/dataset"
	"github.com/stormaudit/stormaudit/hashchain"
)

// Prove returns the proof of the record at seq in the chain origin of the
// dataset in dir. It verifies the dataset on the way, and holds one
// 32-byte leaf hash per row in memory.
func Prove(dir, origin string, seq int64) (*hashchain.Proof, error) {
	m, err := dataset.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	if m.ChainVersion == hashchain.Version3 {
		return prove3(dir, origin, seq)
	}
	var leaves hashchain.LeafHashes
	var found *hashchain.Proof
	var rerr error
	var example string   // an origin of the dataset, for the error
	lastSeq := int64(-1) // of origin's chain
	hook := func(rec *auditfmt.Record, pos *hashchain.Pos, source string, leaf, prevLink tlog.Hash) {
		if example == "" {
			example = pos.Origin
		}
		if pos.Origin == origin {
			lastSeq = pos.Seq
		}
		if pos.Origin == origin && pos.Seq == seq {
			var r []byte
			r, rerr = hashchain.AppendSourcedRecordBytes(nil, rec, source)
			found = &hashchain.Proof{Format: hashchain.ProofFormat, Record: string(r), Origin: origin, Seq: seq,
				PrevLink: prevLink, Link: pos.Link, Source: source, Line: rec.Line, Index: int64(len(leaves))}
		}
		leaves = append(leaves, leaf)
	}
	rep, cpText, err := verify(dir, Options{}, hook)
	if err != nil {
		return nil, err
	}
	if rep.Problem != nil {
		return nil, fmt.Errorf("%s does not verify: %s", dir, rep.Problem)
	}
	if rerr != nil {
		return nil, rerr
	}
	if found == nil {
		return nil, notFound(dir, rep.Log, origin, seq, lastSeq, example)
	}
	size := rep.Checkpoint.Size
	if found.Index >= size {
		return nil, fmt.Errorf("%s: origin %q seq %d is in the unsealed tail (row %d, checkpoint size %d): it has no signed proof yet", dir, origin, seq, found.Index, size)
	}
	found.TreeSize = size
	found.Inclusion, err = tlog.ProveRecord(size, found.Index, leaves[:size].HashReader())
	if err != nil {
		return nil, err
	}
	found.Checkpoint = string(cpText)
	return found, nil
}

// notFound says why no record has origin and seq: the origin is not of
// the dataset's log, or no device of it, or the chain is shorter.
func notFound(dir, log, origin string, seq, lastSeq int64, example string) error {
	switch {
	case lastSeq >= 0:
		return fmt.Errorf("%s: origin %q has records of seq 0 to %d, not %d", dir, origin, lastSeq, seq)
	case !strings.HasPrefix(origin, log+"/"):
		return fmt.Errorf("%s: no chain %q: the dataset's log is %q, so its origins are %q and a client_id (for example %q); or give --device CLIENT_ID", dir, origin, log, log+"/", example)
	}
	return fmt.Errorf("%s: no chain %q: the dataset holds no device %q", dir, origin, strings.TrimPrefix(origin, log+"/"))
}
