// Package ingest turns audit logs into a dataset (package dataset): the
// pipeline from input lines to sorted, chained, checkpointed Parquet files.
//
// # Pipeline
//
// Run reads its sources (NDJSON, logging envelopes, CSV, Parquet, gzip,
// stdin, FIFOs, and collector logs of hashchain.Writer, which it verifies
// first) a block of lines at a time and decodes and validates each line in
// parallel (auditfmt).
//
// While the records arrive in dataset order (each device's records
// together, the devices in client id order, as when per-device files are
// concatenated), they stream: de-duplicated, linked and written to
// Parquet as they are read, with no sort (stream.go). The first record
// out of order ends the stream; what it wrote is read back as one more
// sorted source of the merge below, so the dataset is the same either way.
// Otherwise, and from there on, Run sorts the records by client_id,
// recorded_at and content in chunks (left as they are when already in
// order, grouped by client id when they hold few devices, else sorted by
// comparison) that spill to run files in the output's stage, so memory
// stays bounded whatever the input size; then splits the sorted records into ranges of client ids (partitions,
// one per core at most, from marks the runs carry) and, for each range in
// parallel, merges the runs, keeping the first of identical records and
// logging the others, chains the records of each device (hashchain
// version 3, whose canonical bytes B depend on the record's seq) and
// collects the tree's leaves, and writes the rows to Parquet files of its
// own (dataset.FileWriter). The ranges' files, in order, are the dataset
// in order; one tree grows over their leaves, in order. Last come the
// duplicates.ndjson of every range in order, the signed checkpoint, and
// the manifest, which accounts for every line read as accepted, rejected
// (quarantined in rejects.ndjson, with the error naming the input, line
// and field) or duplicate. Run and Scan hold a bounded amount of memory
// whatever the input size; they set no memory limit of the process:
// MemoryLimit is the soft limit a program should run them under
// (stormaudit's commands do, unless one is set).
//
// # Atomicity
//
// The dataset is built in a stage directory beside the output, under a
// lock, and renamed into place when complete: the output is either absent
// (or empty) or a whole dataset. A stage left by a crashed ingest is
// removed by the next one into the same output, which says so.
package ingest
