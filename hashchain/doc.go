// Package hashchain owns the integrity of stormaudit's logs: the
// canonical bytes of records, the per-device hash chains and their state,
// the RFC 6962 Merkle tree over all rows, signed checkpoints of that tree,
// single-record inclusion proofs, and the strict parsing of all of them.
// Every reader and writer of a dataset or a collector log goes through it,
// so a file cannot pass one reader and fail another. It implements
// versions 2 and 3 of docs/hashchain.md, which is the normative text; this
// summary follows it.
//
// # Version 3
//
// Datasets are written under version 3 ([Version3]): each row's binary
// canonical bytes B ([AppendRecordBytes3], read back by
// [DecodeRecordBytes3]), built from the dataset's columns, are hashed
// once, link[n] = SHA-256(0x02 || link[n-1] || B) ([Link3], from
// [Genesis3]); the link of every 64th record of a chain ([SegmentLen]) and
// of its last is a leaf of the RFC 6962 tree ([Tree3]), and a checkpoint's
// root binds the rows, the leaves and the tree's root ([Root3]). The
// sections below describe version 2, which collector logs and datasets
// written before version 3 use.
//
// # Canonical record bytes
//
// R, the canonical bytes of a record ([AppendRecordBytes]), is the RFC 8785
// (JSON Canonicalization Scheme, [AppendCanonicalJSON]) serialisation of
//
//	{"envelope": {...}, "record": {...}}
//
// where "record" holds every field the record carries under its wire name,
// plus the unknown members the device wrote (auditfmt.Record.Extra), and
// "envelope", present only for a record that came in a structured-logging
// envelope, holds the envelope's other members. recorded_at is written as
// YYYY-MM-DDTHH:MM:SS[.fraction]±hh:mm in the offset the device wrote,
// without trailing zeros in the fraction. Every number in R must be exact
// in RFC 8785, which writes numbers as IEEE 754 doubles: integers within
// ±2^53, and no decimal with more precision than a double holds. A record
// that breaks that has no R, and AppendRecordBytes says which field.
//
// # Chains
//
// Each device's records form a chain named by its origin, LOG/CLIENT_ID:
//
//	h[n]     = SHA-256(0x00 || R[n])                                  RecordHash
//	link[-1] = SHA-256("stormaudit/chain/v1\n" || origin || "\n")     Genesis
//	link[n]  = SHA-256(link[n-1] || h[n])                             NextLink
//
// for the records with seq = 0, 1, 2, ... of that origin ([Origin]).
// [Chains] keeps the chains' heads, for the writers ([Chains.Append]) and
// the readers ([Chains.Follow], which says in a [ChainError] how a record
// does not follow its chain).
//
// # Rows and the tree
//
// Every row has a leaf SHA-256(0x00 || link || seq || origin) ([Leaf]):
// the link, seq as 8 bytes big-endian, the origin. One RFC 6962 Merkle
// tree covers the leaves of all rows in storage order; [Tree] computes its
// root while the rows stream past, in O(log n) memory. Proofs of
// inclusion and consistency come from package tlog ([tlog.ProveRecord],
// [tlog.ProveTree]) over a [LeafHashes]; a [Proof] carries one record with
// its inclusion proof and checkpoint, and [CheckProof] checks it.
//
// # Checkpoints
//
// A [Checkpoint] commits to the tree: the C2SP tlog-checkpoint body
//
//	LOG
//	SIZE
//	BASE64(ROOT)
//
// signed as a C2SP signed note with Ed25519 keys of package note
// ([GenerateKey], [SignCheckpoint], [OpenCheckpoint]). [ParseCheckpoint]
// is strict: exactly those three lines, the size in decimal without
// leading zeros, the root in canonical base64.
package hashchain
