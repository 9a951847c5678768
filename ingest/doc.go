// Package ingest turns audit logs into a dataset (package dataset): the
// pipeline from input lines to sorted, chained, checkpointed Parquet files.
//
// # Pipeline
//
// Run reads its sources (NDJSON, logging envelopes, CSV, Parquet, gzip,
// stdin, FIFOs, and collector logs of hashchain.Writer, which it verifies
// first) a block of lines at a time; decodes and validates each line in
// parallel (auditfmt), computing its record hash there, since R depends on
// the record and where it was read only (docs/hashchain.md); sorts the
// records by client_id, recorded_at and content in chunks that spill to
// run files in the output's stage, so memory stays bounded whatever the
// input size; merges the runs, keeping the first of identical records and
// logging the others to duplicates.ndjson; chains the records of each
// device (hashchain.Chains) and grows the tree over their leaves; and
// writes the rows to Parquet files (dataset.FileWriter), the signed
// checkpoint, and the manifest, which accounts for every line read as
// accepted, rejected (quarantined in rejects.ndjson, with the error
// naming the input, line and field) or duplicate.
//
// # Atomicity
//
// The dataset is built in a stage directory beside the output, under a
// lock, and renamed into place when complete: the output is either absent
// (or empty) or a whole dataset. A stage left by a crashed ingest is
// removed by the next one into the same output, which says so.
package ingest
