package verify

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/stormaudit/stormaudit/dataset"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/hashchain"
)

// Options configures Dataset.
type Options struct {
	// Verifiers are the keys whose signatures count. With none, a
	// signature is reported but not checked.
	Verifiers note.Verifiers
	// Since, when set, is an earlier checkpoint of the same log: Dataset
	// then also proves that the dataset extends it.
	Since *hashchain.Checkpoint
	// Log, when set, is the log the dataset must be: a signed dataset
	// proves it is the log it names, and only pinning the name proves it
	// is the one the reviewer expects (another dataset signed by the same
	// key is intact too).
	Log string
}

// Report says what Dataset covered and what it found. Problem is nil
// when the dataset is intact.
type Report struct {
	Dataset   string `json:"dataset"`
	DatasetID string `json:"dataset_id"`
	Log       string `json:"log"`
	// ChainVersion is the version of docs/hashchain.md the dataset was
	// written under (2 or 3).
	ChainVersion int                   `json:"chain_version"`
	Records      int64                 `json:"records"`
	Origins      int64                 `json:"origins"`
	Bytes        int64                 `json:"canonical_bytes"`
	Checkpoint   *hashchain.Checkpoint `json:"checkpoint,omitempty"`
	Signed       bool                  `json:"signed"`
	Signers      []string              `json:"signers,omitempty"`  // names on the checkpoint's signatures
	Verified     []string              `json:"verified,omitempty"` // signers whose signature was checked
	Unsealed     int64                 `json:"unsealed"`           // rows after the checkpoint
	Root         tlog.Hash             `json:"root"`               // the root over every row checked
	Since        *hashchain.Checkpoint `json:"since,omitempty"`
	// Accounted is the manifest's account of the lines read, which
	// rejects.ndjson and duplicates.ndjson were checked against.
	Accounted      dataset.Counts `json:"accounted"`
	ManifestSigned bool           `json:"manifest_signed"`
	// BrokerLogs are the broker logs stored with the dataset, each
	// checked against the manifest's digest with its rejects file.
	BrokerLogs []string `json:"broker_logs,omitempty"`
	Problem    *Problem `json:"problem,omitempty"`
}

// Problem names the first thing found wrong.
type Problem struct {
	File   string `json:"file,omitempty"` // relative to the dataset directory
	Row    int64  `json:"row,omitempty"`  // 0-based row within File
	Origin string `json:"origin,omitempty"`
	Seq    int64  `json:"seq,omitempty"`
	What   string `json:"what"`
}

func (p *Problem) String() string {
	switch {
	case p.File == "":
		return p.What
	case p.Origin == "": // a file of the dataset, not a row
		return p.File + ": " + p.What
	}
	return fmt.Sprintf("%s row %d (origin %s, seq %d): %s", p.File, p.Row, strconv.Quote(p.Origin), p.Seq, p.What)
}

// Dataset recomputes every record's canonical bytes, chain link and tree
// leaf from the Parquet files of the dataset in dir, and checks link
// continuity, sequence contiguity, and the checkpoint's size, root and
// signatures. It streams the files once, holding one chain head (the
// current one: a dataset is sorted by client_id). It returns an error
// only when it could not check (I/O, not a dataset); a tampered or
// inconsistent dataset gives a report with a Problem.
func Dataset(dir string, opts Options) (*Report, error) {
	rep, _, err := verify(dir, opts, nil)
	return rep, err
}

// rowHook sees every row that verified: its record, chain position,
// source name, tree leaf and the link before it.
type rowHook func(rec *auditfmt.Record, pos *hashchain.Pos, source string, leaf, prevLink tlog.Hash)

// verify is Dataset, calling hook (if not nil) on every good row; it also
// returns the checkpoint file's text. The checks run in this order, and
// the first that fails is the report's Problem: the manifest, the files
// of the directory against it, the checkpoint and its signature, the
// manifest's signature, every row, every file's digest, the accounting.
func verify(dir string, opts Options, hook rowHook) (*Report, []byte, error) {
	rep := &Report{Dataset: dir, Since: opts.Since}
	m, err := readManifestToVerify(dir, rep)
	if err != nil || rep.Problem != nil {
		return rep, nil, err
	}
	rep.Log, rep.DatasetID = m.Log, m.DatasetID
	if m.ChainVersion != hashchain.Version && m.ChainVersion != hashchain.Version3 {
		found := fmt.Sprint(m.ChainVersion)
		if m.ChainVersion == 0 {
			found = "1 (chain_version absent)"
		}
		rep.Problem = &Problem{File: dataset.ManifestName, What: fmt.Sprintf("chain_version: this stormaudit checks versions %d and %d of docs/hashchain.md, "+
			"the dataset was written under version %s: verify it with the stormaudit that wrote it, or ingest its inputs again", hashchain.Version, hashchain.Version3, found)}
		return rep, nil, nil
	}
	rep.ChainVersion = m.ChainVersion
	if opts.Log != "" && m.Log != opts.Log {
		rep.Problem = &Problem{What: fmt.Sprintf("log: the dataset is of log %q, not of %q: another dataset than the one expected", m.Log, opts.Log)}
		return rep, nil, nil
	}
	if rep.Problem = checkListing(dir, m); rep.Problem != nil {
		return rep, nil, nil
	}
	text, err := os.ReadFile(filepath.Join(dir, dataset.CheckpointName))
	if err != nil {
		return rep, nil, err // checkListing saw it
	}
	cp := readCheckpoint(text, opts.Verifiers, rep)
	if rep.Problem != nil {
		return rep, text, nil
	}
	if err := checkManifestSig(dir, opts.Verifiers, rep); err != nil || rep.Problem != nil {
		return rep, text, err
	}
	v := &verifier{rep: rep, chains: hashchain.NewChains(m.Log, true), cp: cp, since: opts.Since, hook: hook, buckets: m.Buckets,
		version: m.ChainVersion, tree: newRowTree(m.ChainVersion)}
	if v.version == hashchain.Version3 {
		v.chains = hashchain.NewChains3(m.Log, true)
	}
	if m.Buckets > 1 {
		n := m.Buckets
		v.chains.SetOrder(func(a, b string) int {
			return cmp.Or(cmp.Compare(dataset.Bucket(a, n), dataset.Bucket(b, n)), strings.Compare(a, b))
		})
	}
	if err := v.files(dir, m.Files); err != nil || rep.Problem != nil {
		if unread := rep.Problem != nil && rep.Problem.File == "" && rep.Problem.Row == 0; err != nil || unread {
			// a file changed since ingest is tampering before it is a
			// parse or read error (a flipped bit in its footer)
			saved := rep.Problem
			rep.Problem = nil
			if derr := checkDigests(dir, m, rep); derr == nil && rep.Problem != nil {
				return rep, text, nil
			}
			rep.Problem = saved
		}
		return rep, text, err
	}
	v.finish()
	if rep.Problem != nil {
		return rep, text, nil
	}
	if err := checkDigests(dir, m, rep); err != nil || rep.Problem != nil {
		return rep, text, err
	}
	return rep, text, checkAccounting(dir, m, rep)
}

// readManifestToVerify reads the manifest of the dataset in dir. A
// directory without one is no dataset (an error), unless it holds a
// checkpoint or Parquet files: then the manifest was removed, and that,
// like a manifest that does not parse, is rep's Problem.
func readManifestToVerify(dir string, rep *Report) (*dataset.Manifest, error) {
	m, err := dataset.ReadManifest(dir)
	if err == nil {
		return m, nil
	}
	if st, serr := os.Stat(dir); serr != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s: not a dataset directory", dir)
	}
	if !errors.Is(err, os.ErrNotExist) {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, err // it could not be read
		}
		rep.Problem = &Problem{File: dataset.ManifestName, What: fmt.Sprintf("not a dataset manifest: %v", err)}
		return nil, nil
	}
	parts, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
	if _, cerr := os.Stat(filepath.Join(dir, dataset.CheckpointName)); cerr == nil || len(parts) > 0 {
		rep.Problem = &Problem{File: dataset.ManifestName, What: "missing: the directory holds a dataset's files but not its manifest"}
		return nil, nil
	}
	return nil, err
}

// checkListing compares the directory with the manifest: every file the
// manifest lists (and the checkpoint and quarantine files) is there, and
// nothing else is, since any reader that globs *.parquet would read an
// unlisted file as part of the dataset.
func checkListing(dir string, m *dataset.Manifest) *Problem {
	l, err := dataset.List(dir, m)
	switch {
	case err != nil && strings.HasPrefix(err.Error(), dataset.ManifestName+": "):
		return &Problem{File: dataset.ManifestName, What: strings.TrimPrefix(err.Error(), dataset.ManifestName+": ")}
	case err != nil:
		return &Problem{What: err.Error()}
	case l.Unlisted != "":
		return &Problem{File: l.Unlisted, What: dataset.UnlistedWhat(l.Unlisted)}
	case len(l.Missing) > 0:
		return &Problem{File: l.Missing[0], What: "missing: the manifest lists it, or every dataset has it"}
	}
	return nil
}

// readCheckpoint parses and, with verifiers, authenticates the dataset's
// checkpoint; what is wrong goes into rep.Problem.
func readCheckpoint(b []byte, verifiers note.Verifiers, rep *Report) *hashchain.Checkpoint {
	f, err := hashchain.ReadCheckpointFile(b, verifiers)
	if err != nil {
		rep.Problem = &Problem{File: dataset.CheckpointName, What: strings.TrimPrefix(err.Error(), "hashchain: ")}
		return nil
	}
	rep.Checkpoint, rep.Signed, rep.Signers = &f.Checkpoint, f.Signed, f.Signers
	if f.Verified {
		rep.Verified = f.Signers
	}
	return &f.Checkpoint
}

type verifier struct {
	rep       *Report
	chains    *hashchain.Chains
	cp, since *hashchain.Checkpoint
	tree      rowTree    // of the manifest's chain version
	cpRoot    *tlog.Hash // the root when the tree had the checkpoint's size
	sinceRoot *tlog.Hash
	hook      rowHook
	last      tlog.Hash // the link of the last row verified
	buckets   int       // the manifest's Buckets
	bucketOK  string    // the last client id found in its bucket's directory
	version   int       // the manifest's chain_version
}

// files verifies the rows of the files in order. Reading and hashing run
// on every core (see verifyBatch); the chain heads and the tree, which
// need storage order, are kept by this goroutine.
func (v *verifier) files(dir string, files []dataset.File) error {
	batches := make(chan *verifyBatch, 2*runtime.GOMAXPROCS(0))
	free := make(chan *verifyBatch, cap(batches)+runtime.GOMAXPROCS(0)+2)
	stop := make(chan struct{})
	readErr := make(chan error, 1)
	go func() { readErr <- readBatches(dir, files, v.rep.Log, v.version, batches, free, stop) }()
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
		select {
		case free <- b: // its rows are done with: read the next into it
		default:
		}
	}
	err := <-readErr
	var re *dataset.RowError
	var pe *os.PathError
	switch {
	case err == nil:
	case errors.As(err, &re): // a value no writer of ours would store: tampering, not an I/O error
		v.rep.Problem = &Problem{File: filepath.Base(re.File), Row: re.Row, What: re.Err.Error()}
	case errors.As(err, &pe) && !errors.Is(err, os.ErrNotExist):
		return err // the system could not read it
	default: // a listed file that is no Parquet file of ours
		v.rep.Problem = &Problem{What: fmt.Sprintf("not a readable dataset file: %v", err)}
	}
	return nil
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
		if v.buckets > 1 && rec.ClientID != v.bucketOK {
			k := dataset.Bucket(rec.ClientID, v.buckets)
			if want := dataset.BucketDir(k, v.buckets); path.Dir(b.file) != want {
				return bad("client_id: %s hashes to bucket %d of %d, whose files are in %s/, but is in %s/", strconv.Quote(rec.ClientID), k, v.buckets, want, path.Dir(b.file))
			}
			v.bucketOK = rec.ClientID
		}
		if err := v.chains.Follow(rec.ClientID, *pos, b.h[i], b.link[i] == linkOK); err != nil {
			return bad("%s", err)
		}
		if pos.Seq == 0 {
			v.rep.Origins++
		}
		prevLink := v.last // the chain's previous record is the row before
		v.last = pos.Link
		v.rep.Bytes += int64(b.n[i])
		v.tree.add(*pos, b.leaf[i])
		if v.hook != nil {
			if pos.Seq == 0 {
				prevLink = v.tree.genesis(pos.Origin)
			}
			v.hook(rec, pos, b.sources[rec.Source], b.leaf[i], prevLink)
		}
		v.rep.Records++
		v.snapshot()
	}
	return true
}

// snapshot keeps the roots at the checkpoint's and the old checkpoint's
// sizes (in rows).
func (v *verifier) snapshot() {
	size := v.tree.rows()
	if v.cp != nil && size == v.cp.Size {
		r := v.tree.root()
		v.cpRoot = &r
	}
	if v.since != nil && size == v.since.Size {
		r := v.tree.root()
		v.sinceRoot = &r
	}
}

func (v *verifier) finish() {
	empty := newRowTree(v.version).root() // version 3's binds the sizes too
	if v.cp != nil && v.cp.Size == 0 {
		v.cpRoot = &empty
	}
	if v.since != nil && v.since.Size == 0 {
		v.sinceRoot = &empty
	}
	rep := v.rep
	rep.Root = v.tree.root()
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
