// Package verify checks the integrity of a dataset (package dataset)
// against docs/hashchain.md, through package hashchain, and builds the
// single-record proofs that hashchain.CheckProof checks without the
// dataset.
//
// Dataset checks, in this order, and reports the first problem: the
// manifest (and its chain_version), the directory's listing against it
// (no file missing, none added), the checkpoint and its signatures, the
// manifest's signature, every row (its canonical bytes, its chain
// position with hashchain.Chains.Follow, its leaf in the tree), the
// checkpoint's size and root (and, with Options.Since, that the dataset
// extends an earlier checkpoint), every file's SHA-256 against the
// manifest, and the accounting of lines read against rejects.ndjson and
// duplicates.ndjson. Reading and hashing run on every core; the chain
// state and the tree, which need storage order, are kept by one
// goroutine, in memory that does not grow with the number of devices.
//
// Prove verifies the dataset on the way to one record's proof: its
// canonical bytes, its chain position and the link before it, and an
// inclusion proof against the signed checkpoint.
package verify
