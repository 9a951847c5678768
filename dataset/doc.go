// Package dataset is the storage format of audit records: a directory of
// sorted Parquet files that any Parquet reader can query, with a manifest
// that accounts for every input line. Package ingest writes datasets,
// package verify checks their integrity, package analyze reads them.
//
// # Layout
//
// A dataset is a directory holding:
//
//	manifest.json       what the dataset holds and where it came from (Manifest)
//	part-00000.parquet  the records, in files numbered from 00000 in
//	part-00001.parquet  manifest order ...
//	checkpoint          the signed checkpoint of the tree over every row (docs/hashchain.md)
//	manifest.sig        the manifest's signature, when ingest signs
//	rejects.ndjson      every rejected input line, verbatim, with the error
//	duplicates.ndjson   every duplicate line and the line it repeats
//
// The records are sorted by client_id, then recorded_at: within each file,
// and from one file to the next in manifest order. The manifest lists each
// file with its number of rows, its number of row groups and the SHA-256 of
// its bytes.
//
// # Parquet files
//
// A dataset file has the columns below, in this order. Null means exactly
// that the record does not have the field (a reason_code of 0 and a
// session_present of false are values); an absent string is null, never "".
// Columns marked "required" have no nulls.
//
//	column               Parquet type                        Record field
//	client_id            BYTE_ARRAY STRING, required, dict   ClientID
//	recorded_at          INT64 TIMESTAMP(MICROS, UTC), req.  RecordedAt (Unix ns), to the microsecond below
//	recorded_at_ns       INT32, optional                     RecordedAt: the nanoseconds past that microsecond, 1 to 999; null for 0
//	recorded_offset_min  INT32, required                     OffsetMin: the UTC offset recorded_at was written with
//	attempt              INT64, required                     Attempt
//	backoff_delay_s      DOUBLE, required                    BackoffDelayS
//	outcome              BYTE_ARRAY STRING, required, dict   Outcome, by name ("connected", ...)
//	clean_session        BOOLEAN, required                   CleanSession
//	schema               INT32, optional                     Schema (HasSchema)
//	host_id              BYTE_ARRAY STRING, optional, dict   HostID
//	stage                BYTE_ARRAY STRING, optional, dict   Stage, by name
//	attempt_id           BYTE_ARRAY STRING, optional         AttemptID
//	record_id            BYTE_ARRAY STRING, optional         RecordID
//	device_seq           INT64, optional                     DeviceSeq (HasDeviceSeq)
//	failure_class        BYTE_ARRAY STRING, optional, dict   FailureClass, by name
//	reason_code          INT32, optional                     ReasonCode (HasReasonCode)
//	ceiling_s            DOUBLE, optional                    CeilingS (HasCeiling)
//	session_present      BOOLEAN, optional                   SessionPresent (HasSessionPresent)
//	outbox_depth         INT64, optional                     OutboxDepth (HasOutboxDepth)
//	outbox_flushed       INT64, optional                     OutboxFlushed (HasOutboxFlushed)
//	inbound_redelivered  INT64, optional                     InboundRedelivered (HasInboundRedelivered)
//	inbound_duplicates   INT64, optional                     InboundDuplicates (HasInboundDuplicates)
//	outbox_dropped       INT64, optional                     OutboxDropped (HasOutboxDropped)
//	inbound_expired      INT64, optional                     InboundExpired (HasInboundExpired)
//	extra                BYTE_ARRAY STRING, optional         Extra: unknown members, a JSON object
//	envelope             BYTE_ARRAY STRING, optional         Envelope: the logging envelope, a JSON object
//	source               BYTE_ARRAY STRING, required, dict   Source: the input's name as given, "-" for stdin
//	line                 INT64, required                     Line: the 1-based line (or row) in the input
//	origin               BYTE_ARRAY STRING, optional, dict   hashchain.Pos.Origin: the device's chain, LOG/CLIENT_ID
//	seq                  INT64, optional                     hashchain.Pos.Seq: the row's place in that chain, from 0
//	link                 FIXED_LEN_BYTE_ARRAY(32), optional  hashchain.Pos.Link: the chain link (docs/hashchain.md)
//
// recorded_at is in microseconds because the inputs carry microseconds and
// Spark 3 (among others) refuses TIMESTAMP(NANOS): every Parquet reader
// reads the instant to the microsecond. A timestamp with more digits keeps
// them in recorded_at_ns, so that nothing is rounded (the canonical bytes
// of docs/hashchain.md hold the exact instant); a reader that wants the
// nanosecond adds it. The readers here accept recorded_at in NANOS too
// (files of other writers, or of stormaudit before), then without
// recorded_at_ns. A file without recorded_at_ns is a file of
// whole-microsecond timestamps.
//
// The last three, the chain columns, are written by FileWriter.WriteChained
// and read by FileReader.ReadChain; they are null in rows written by Write.
//
// extra and envelope hold JSON text but are annotated STRING, not JSON:
// the Parquet writer this package used first (parquet-go v0.32.0) cannot
// write an optional JSON column, and the files keep the schema they had.
//
// The files are written with version 1 data pages, zstd compression,
// dictionary encoding for the columns marked dict and for origin (one
// chain a device: a few distinct values a row group), DELTA_BINARY_PACKED
// for the other INT32 and INT64 columns (recorded_at, line and seq climb
// in small steps in sorted rows), PLAIN for the rest, and row groups of at
// most DefaultRowGroupRows rows. link is stored uncompressed (hashes: zstd
// cannot shrink them), and so is any other column not dictionary-encoded
// whose first page zstd shrinks by less than a tenth
// (random doubles, such as most backoff_delay_s): the first page decides
// for the whole file, so a column has one codec in every row group. Every
// row group declares the sorting columns client_id, recorded_at
// (ascending); the writer relies on its caller for that order and does
// not check it. Column chunk statistics carry the null count of every
// column; they and the page index carry min/max for client_id,
// recorded_at, origin and the numeric columns. The key-value metadata
// holds stormaudit.schema_version ("1") and stormaudit.sources, a JSON
// array of the input names that Record.Source indexes, so that all files
// of a dataset number the inputs alike. FileWriter encodes the column
// chunks itself; the schema in the footer is the one parquet-go derives
// for the columns above, as when parquet-go wrote the files whole.
//
// # Reading
//
// FileReader reads one file as records, a batch of rows at a time.
// ReadClient reads the rows of one client only, from the row groups and
// pages whose client_id bounds admit it.
// ArrowReader reads a whole dataset as Arrow record batches through
// arrow-go's pqarrow, with recorded_at in nanoseconds (recorded_at_ns
// added in), and ExportArrowIPC writes it as one Arrow IPC file, with
// recorded_at in the files' unit, timestamp[us, tz=UTC], and
// recorded_at_ns beside it, as the files store them; both keep memory
// bounded by the batch size.
//
// The readers accept Parquet files written by other programs when they have
// these columns (found by name, in any order, other columns ignored; the
// chain columns may be missing altogether, and so may recorded_at_ns,
// outbox_depth, outbox_flushed, inbound_redelivered, inbound_duplicates,
// outbox_dropped and inbound_expired, which then read as null: files
// written before
// those columns were, by stormaudit or others) with
// compatible types: a required column may be optional in the file (a null
// in it is an error for that row), a string column may be STRING, JSON,
// ENUM or unannotated BYTE_ARRAY, and an integer column may carry a signed
// INT annotation. A file without them is rejected with a *ColumnError
// naming the column. FileReader also rejects, with a *RowError naming the
// row and the field, a row that does not decode to a valid record
// (auditfmt.Record.Validate); ArrowReader passes values through as stored,
// checking only that required columns have no nulls and strings are UTF-8.
// ArrowReader does not read an optional column whose column chunks, in the
// row groups it reads, hold only nulls by their statistics (null_count):
// it gives the nulls. (A file whose statistics lie fails verify, by its
// SHA-256 in the manifest.)
package dataset
