package dataset

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/hashchain"
)

// CheckpointName is the name of the checkpoint file inside a dataset
// directory: a signed note, or the bare checkpoint when ingest had no key.
const CheckpointName = "checkpoint"

// VerifyOptions configures Verify.
type VerifyOptions struct {
	// Verifiers are the keys whose signatures count. With none, a
	// signature is reported but not checked.
	Verifiers note.Verifiers
	// Since, when set, is an earlier checkpoint of the same log: Verify
	// then also proves that the dataset extends it.
	Since *hashchain.Checkpoint
}

// VerifyReport says what Verify covered and what it found. Problem is nil
// when the dataset is intact.
type VerifyReport struct {
	Dataset    string                `json:"dataset"`
	Log        string                `json:"log"`
	Records    int64                 `json:"records"`
	Origins    int64                 `json:"origins"`
	Bytes      int64                 `json:"canonical_bytes"`
	Checkpoint *hashchain.Checkpoint `json:"checkpoint,omitempty"`
	Signed     bool                  `json:"signed"`
	Signers    []string              `json:"signers,omitempty"`  // names on the checkpoint's signatures
	Verified   []string              `json:"verified,omitempty"` // signers whose signature was checked
	Unsealed   int64                 `json:"unsealed"`           // rows after the checkpoint
	Root       tlog.Hash             `json:"root"`               // the root over every row checked
	Since      *hashchain.Checkpoint `json:"since,omitempty"`
	// Accounted is the manifest's account of the lines read, which
	// rejects.ndjson and duplicates.ndjson were checked against.
	Accounted      Counts   `json:"accounted"`
	ManifestSigned bool     `json:"manifest_signed"`
	Problem        *Problem `json:"problem,omitempty"`
}

// Problem names the first thing found wrong.
type Problem struct {
	File   string `json:"file,omitempty"`
	Row    int64  `json:"row,omitempty"` // 0-based row within File
	Origin string `json:"origin,omitempty"`
	Seq    int64  `json:"seq,omitempty"`
	What   string `json:"what"`
}

func (p *Problem) String() string {
	if p.File == "" {
		return p.What
	}
	return fmt.Sprintf("%s row %d (origin %s, seq %d): %s", p.File, p.Row, p.Origin, p.Seq, p.What)
}

// Verify recomputes every record's canonical bytes, chain link and tree
// leaf from the Parquet files of the dataset in dir, and checks link
// continuity, sequence contiguity, and the checkpoint's size, root and
// signatures. It streams the files once, holding one chain head per
// origin. It returns an error only when it could not check (I/O, not a
// dataset); a tampered or inconsistent dataset gives a report with a
// Problem.
func Verify(dir string, opts VerifyOptions) (*VerifyReport, error) {
	rep, _, err := verify(dir, opts, nil)
	return rep, err
}

// rowHook sees every row that verified: its record, chain position,
// source name, tree leaf and the link before it.
type rowHook func(rec *auditfmt.Record, pos *ChainPos, source string, leaf, prevLink tlog.Hash)

// verify is Verify, calling hook (if not nil) on every good row; it also
// returns the checkpoint file's text.
func verify(dir string, opts VerifyOptions, hook rowHook) (*VerifyReport, []byte, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, nil, err
	}
	rep := &VerifyReport{Dataset: dir, Log: m.Log, Since: opts.Since}
	text, err := os.ReadFile(filepath.Join(dir, CheckpointName))
	if errors.Is(err, os.ErrNotExist) {
		rep.Problem = &Problem{What: "the dataset has no checkpoint file; expected " + filepath.Join(dir, CheckpointName)}
		return rep, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	cp := readCheckpoint(text, opts.Verifiers, rep)
	if rep.Problem != nil {
		return rep, text, nil
	}
	v := &verifier{rep: rep, heads: map[string]head{}, cp: cp, since: opts.Since, hook: hook}
	if err := v.files(dir, m.Files); err != nil || rep.Problem != nil {
		return rep, text, err
	}
	v.finish()
	if rep.Problem != nil {
		return rep, text, nil
	}
	return rep, text, checkManifest(dir, m, opts.Verifiers, rep)
}

// openUnverified parses a signed note without trusting any key, to list
// its signatures.
func openUnverified(b []byte) (*note.Note, error) {
	_, err := note.Open(b, allKeys{})
	if e, ok := err.(*note.UnverifiedNoteError); ok {
		return e.Note, nil
	}
	if err == nil {
		err = errors.New("unexpected signature")
	}
	return nil, err
}

// readCheckpoint parses and, with verifiers, authenticates the dataset's
// checkpoint; what is wrong goes into rep.Problem.
func readCheckpoint(b []byte, verifiers note.Verifiers, rep *VerifyReport) *hashchain.Checkpoint {
	if cp, perr := hashchain.ParseCheckpoint(b); perr == nil {
		rep.Checkpoint = &cp // unsigned
		if verifiers != nil {
			rep.Problem = &Problem{What: "checkpoint: not signed, but verifier keys were given: anyone could have written it"}
			return nil
		}
		return &cp
	}
	n, err := openUnverified(b)
	if err != nil {
		rep.Problem = &Problem{What: fmt.Sprintf("checkpoint: %v", err)}
		return nil
	}
	rep.Signed = true
	for _, s := range n.UnverifiedSigs {
		rep.Signers = append(rep.Signers, s.Name)
	}
	cp, err := hashchain.ParseCheckpoint([]byte(n.Text))
	if err != nil {
		rep.Problem = &Problem{What: fmt.Sprintf("checkpoint: %v", err)}
		return nil
	}
	rep.Checkpoint = &cp
	if verifiers != nil {
		n, err := note.Open(b, verifiers)
		if err != nil {
			rep.Problem = &Problem{What: fmt.Sprintf("checkpoint signature: %v", err)}
			return nil
		}
		for _, s := range n.Sigs {
			rep.Verified = append(rep.Verified, s.Name)
		}
	}
	return &cp
}

// allKeys verifies nothing: it lets note.Open parse a note to list its
// signatures before any key is trusted.
type allKeys struct{}

func (allKeys) Verifier(name string, hash uint32) (note.Verifier, error) {
	return nil, &note.UnknownVerifierError{Name: name, KeyHash: hash}
}

type head struct {
	seq  int64
	link tlog.Hash
}

type verifier struct {
	rep       *VerifyReport
	heads     map[string]head
	cp, since *hashchain.Checkpoint
	tree      hashchain.Tree
	cpRoot    *tlog.Hash // the root when the tree had the checkpoint's size
	sinceRoot *tlog.Hash
	hook      rowHook
}

// files verifies the rows of the files in order. Reading and hashing run
// on every core (see verifyBatch); the chain heads and the tree, which
// need storage order, are kept by this goroutine.
func (v *verifier) files(dir string, files []File) error {
	batches := make(chan *verifyBatch, 2*runtime.GOMAXPROCS(0))
	stop := make(chan struct{})
	readErr := make(chan error, 1)
	go func() { readErr <- readBatches(dir, files, v.rep.Log, batches, stop) }()
	defer func() {
		close(stop)
		for range batches {
		}
	}()
	for b := range batches {
		<-b.done
		if !v.batch(b) {
			return nil
		}
	}
	err := <-readErr
	var re *RowError
	if errors.As(err, &re) { // a value no writer of ours would store: tampering, not an I/O error
		v.rep.Problem = &Problem{File: filepath.Base(re.File), Row: re.Row, What: re.Err.Error()}
		return nil
	}
	return err
}

// batch takes the hashed rows of b in order; false once a problem is found.
func (v *verifier) batch(b *verifyBatch) bool {
	for i := range b.recs {
		rec, pos := &b.recs[i], &b.pos[i]
		bad := func(format string, args ...any) bool {
			v.rep.Problem = &Problem{File: b.file, Row: b.row0 + int64(i), Origin: pos.Origin, Seq: pos.Seq, What: fmt.Sprintf(format, args...)}
			return false
		}
		if b.err[i] != "" {
			return bad("%s", b.err[i])
		}
		prev, ok := v.heads[pos.Origin]
		switch {
		case !ok && pos.Seq != 0:
			return bad("seq: expected 0 for the first record of the chain, found %d (records missing before it)", pos.Seq)
		case !ok:
			prev.link = hashchain.Genesis(pos.Origin)
		case pos.Seq != prev.seq+1:
			return bad("seq: expected %d after %d, found %d (records missing, repeated or out of order)", prev.seq+1, prev.seq, pos.Seq)
		}
		if b.link[i] == linkUnchecked && hashchain.NextLink(prev.link, b.h[i]) != pos.Link || b.link[i] == linkBad {
			return bad("link: the record's content does not match its chain link (a value of this row was changed, or the row does not belong here)")
		}
		if !ok {
			v.rep.Origins++
		}
		v.heads[pos.Origin] = head{pos.Seq, pos.Link}
		v.rep.Bytes += int64(b.n[i])
		v.tree.Append(b.leaf[i])
		if v.hook != nil {
			v.hook(rec, pos, b.sources[rec.Source], b.leaf[i], prev.link)
		}
		v.rep.Records++
		v.snapshot()
	}
	return true
}

// snapshot keeps the roots at the checkpoint's and the old checkpoint's sizes.
func (v *verifier) snapshot() {
	size := v.tree.Size()
	if v.cp != nil && size == v.cp.Size {
		r := v.tree.Root()
		v.cpRoot = &r
	}
	if v.since != nil && size == v.since.Size {
		r := v.tree.Root()
		v.sinceRoot = &r
	}
}

func (v *verifier) finish() {
	if v.cp != nil && v.cp.Size == 0 {
		r := (&hashchain.Tree{}).Root()
		v.cpRoot = &r
	}
	if v.since != nil && v.since.Size == 0 {
		r := (&hashchain.Tree{}).Root()
		v.sinceRoot = &r
	}
	rep := v.rep
	rep.Root = v.tree.Root()
	switch {
	case rep.Checkpoint.Origin != rep.Log:
		rep.Problem = &Problem{What: fmt.Sprintf("checkpoint: origin %q, but the dataset's log is %q", rep.Checkpoint.Origin, rep.Log)}
	case rep.Records < v.cp.Size:
		rep.Problem = &Problem{What: fmt.Sprintf("truncated: the checkpoint covers %d records but the dataset holds %d", v.cp.Size, rep.Records)}
	case *v.cpRoot != v.cp.Root:
		rep.Problem = &Problem{What: fmt.Sprintf("checkpoint: the root of the first %d records is %s, the checkpoint says %s (records were changed, added, removed or reordered)", v.cp.Size, v.cpRoot, v.cp.Root)}
	case v.since != nil && v.since.Origin != rep.Log:
		rep.Problem = &Problem{What: fmt.Sprintf("--since: the old checkpoint is of log %q, this dataset's log is %q", v.since.Origin, rep.Log)}
	case v.since != nil && v.sinceRoot == nil:
		rep.Problem = &Problem{What: fmt.Sprintf("--since: the old checkpoint covers %d records but the dataset holds only %d (the log was truncated)", v.since.Size, rep.Records)}
	case v.since != nil && *v.sinceRoot != v.since.Root:
		rep.Problem = &Problem{What: fmt.Sprintf("--since: the first %d records have root %s, the old checkpoint says %s (the log was rewritten or forked)", v.since.Size, v.sinceRoot, v.since.Root)}
	}
	rep.Unsealed = max(rep.Records-v.cp.Size, 0)
	if rep.Problem == nil && rep.Unsealed > 0 {
		// Ingest checkpoints every row it writes, so rows after the
		// checkpoint were added afterwards.
		rep.Problem = &Problem{What: fmt.Sprintf("%d rows after the checkpoint of %d: no checkpoint covers them (rows were added after it was written)", rep.Unsealed, v.cp.Size)}
	}
}
