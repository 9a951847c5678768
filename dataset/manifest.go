package dataset

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ManifestName is the name of the manifest file inside a dataset directory.
const ManifestName = "manifest.json"

// RejectsName is the name of the quarantine file inside a dataset directory.
const RejectsName = "rejects.ndjson"

// CheckpointName is the name of the checkpoint file inside a dataset
// directory: a signed note, or the bare checkpoint when ingest had no key.
const CheckpointName = "checkpoint"

// DuplicatesName is the name of the file that lists every duplicate line
// and the line it repeats.
const DuplicatesName = "duplicates.ndjson"

// Manifest describes a dataset: what it holds and where it came from.
type Manifest struct {
	Format        string   `json:"format"`         // always "stormaudit-dataset"
	SchemaVersion int      `json:"schema_version"` // auditfmt.SchemaVersion
	ChainVersion  int      `json:"chain_version"`  // hashchain.Version of its chains and tree; 0 (absent): version 1
	CreatedBy     string   `json:"created_by"`     // program and version
	DatasetID     string   `json:"dataset_id"`     // 128 random bits in hex, made at ingest: the dataset's identity
	Log           string   `json:"log"`            // the log's name: the checkpoint's origin line, the prefix of every chain's origin; by default it ends in the dataset id
	SortedBy      []string `json:"sorted_by"`      // column names
	Rows          int64    `json:"rows"`           // records stored
	Files         []File   `json:"files"`          // Parquet files, in sort order
	// Buckets is the number of buckets the dataset is partitioned into by
	// client id (Bucket), 0 when it is not: its files are then
	// BucketDir(b, Buckets)/part-NNNNN.parquet, in bucket order, each
	// bucket's sorted by SortedBy.
	Buckets int     `json:"buckets,omitempty"`
	Inputs  []Input `json:"inputs"` // inputs, in the order given
	Totals  Counts  `json:"totals"`
	// Checkpoint is the checkpoint written with the dataset (its body, as
	// in the checkpoint file); Signers names the keys that signed it.
	Checkpoint string   `json:"checkpoint"`
	Signers    []string `json:"signers,omitempty"`
	// Rejects and Duplicates are the digests of rejects.ndjson and
	// duplicates.ndjson: with the manifest's signature (manifest.sig),
	// they make the accounting of every line read part of the evidence.
	Rejects    Digest `json:"rejects"`
	Duplicates Digest `json:"duplicates"`
	// BrokerLogs are the broker's own logs stored with the dataset
	// (ingest --broker-log): the second witness, kept byte for byte.
	BrokerLogs []BrokerLog `json:"broker_logs,omitempty"`
}

// BrokerDir is the directory of a dataset that holds its broker logs.
const BrokerDir = "broker"

// BrokerLog is a broker log stored with a dataset: the file it was read
// from, where it is kept (File, under BrokerDir, byte for byte as read),
// how it was read, its accounting, and the lines it rejected (Rejects,
// one JSON object a line: line, field, reason, text).
type BrokerLog struct {
	Name    string `json:"name"`
	File    string `json:"file"`
	Format  string `json:"format"`
	TZ      string `json:"tz"` // the zone of stamps that name none
	Digest  Digest `json:"digest"`
	Lines   int    `json:"lines"`
	Events  int    `json:"events"`
	Skipped int    `json:"skipped"`
	// Rejected counts the lines not understood; RejectsFile holds them.
	Rejected    int    `json:"rejected"`
	Blank       int    `json:"blank"`
	RejectsFile string `json:"rejects_file"`
	Rejects     Digest `json:"rejects"`
}

// Digest identifies a file's content.
type Digest struct {
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// ManifestSigName is the name of the manifest's signature: a signed note
// whose text is manifest.json, byte for byte. It is written only when
// ingest signs.
const ManifestSigName = "manifest.sig"

// File is one Parquet file of a dataset.
type File struct {
	Name      string `json:"name"` // relative to the dataset directory
	Rows      int64  `json:"rows"`
	RowGroups int    `json:"row_groups"`
	SHA256    string `json:"sha256"`
}

// Input is one input of an ingest.
type Input struct {
	Name   string `json:"name"`   // as given; "-" for stdin
	Format string `json:"format"` // ndjson, csv or parquet
	Gzip   bool   `json:"gzip,omitempty"`
	Bytes  int64  `json:"bytes"`  // bytes read, before decompression
	SHA256 string `json:"sha256"` // of the bytes read, before decompression
	// Collector is set when the input was a verified collector log.
	Collector *CollectorLog `json:"collector,omitempty"`
	Counts
}

// Counts accounts for every line read: Lines = Accepted + Rejected + Duplicates.
type Counts struct {
	Lines      int64 `json:"lines"`
	Accepted   int64 `json:"accepted"`
	Rejected   int64 `json:"rejected"`
	Duplicates int64 `json:"duplicates"`
}

// Add adds o to c.
func (c *Counts) Add(o Counts) {
	c.Lines += o.Lines
	c.Accepted += o.Accepted
	c.Rejected += o.Rejected
	c.Duplicates += o.Duplicates
}

// Balanced reports whether every line is accounted for.
func (c Counts) Balanced() bool { return c.Lines == c.Accepted+c.Rejected+c.Duplicates }

// ReadManifest reads the manifest of the dataset in dir.
func ReadManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestName)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s is not a dataset: %w", dir, err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if m.Format != "stormaudit-dataset" {
		return nil, fmt.Errorf("%s: format: expected \"stormaudit-dataset\", found %q", path, m.Format)
	}
	if m.SchemaVersion != 1 {
		return nil, fmt.Errorf("%s: schema_version: expected 1, found %d", path, m.SchemaVersion)
	}
	return &m, nil
}

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

// DigestFile returns the size and SHA-256 of the file at path.
func DigestFile(path string) (Digest, error) {
	f, err := os.Open(path)
	if err != nil {
		return Digest{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	return Digest{Bytes: n, SHA256: hex.EncodeToString(h.Sum(nil))}, err
}
