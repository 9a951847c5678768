package hashchain

import (
	"fmt"

	"golang.org/x/mod/sumdb/tlog"
)

// emptyRoot is the root of the empty tree, per RFC 6962 the hash of the
// empty string.
var emptyRoot = tlog.Hash{
	0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14,
	0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24,
	0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c,
	0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55,
}

// A Tree computes the RFC 6962 Merkle tree hash of a sequence of leaf
// hashes as they are appended, in O(log n) memory: it keeps the root of
// each complete subtree of the binary decomposition of its size, largest
// first, and nothing else. The zero value is an empty tree, ready to use.
// A Tree holds no pointers; copying one copies its state.
type Tree struct {
	size     int64
	subtrees [63]tlog.Hash // [0:bits.OnesCount(size)] are in use
	n        int
}

// Append adds a leaf hash (see [LeafHash]) at the end of the tree.
func (t *Tree) Append(leaf tlog.Hash) {
	h := leaf
	for s := t.size; s&1 == 1; s >>= 1 {
		t.n--
		h = tlog.NodeHash(t.subtrees[t.n], h)
	}
	t.subtrees[t.n] = h
	t.n++
	t.size++
}

// Size returns the number of leaves appended.
func (t *Tree) Size() int64 { return t.size }

// Root returns the root hash of the tree of the leaves appended so far,
// the RFC 6962 Merkle tree hash. The empty tree's root is the SHA-256 of
// the empty string. Root does not change the tree.
func (t *Tree) Root() tlog.Hash {
	if t.n == 0 {
		return emptyRoot
	}
	h := t.subtrees[t.n-1]
	for i := t.n - 2; i >= 0; i-- {
		h = tlog.NodeHash(t.subtrees[i], h)
	}
	return h
}

// LeafHashes is the sequence of a tree's leaf hashes, held in memory. It
// lets the proofs of package tlog ([tlog.ProveRecord], [tlog.ProveTree],
// [tlog.TreeHash]) run over a tree that only its leaves describe.
type LeafHashes []tlog.Hash

// HashReader returns a [tlog.HashReader] that computes the stored hashes
// of the tree of l (see [tlog.StoredHashIndex]) on demand from the
// leaves. Reading the hash of a subtree of 2^k leaves costs 2^k - 1
// node hashes, so a proof over n leaves costs O(n) hashing.
func (l LeafHashes) HashReader() tlog.HashReader {
	return tlog.HashReaderFunc(func(indexes []int64) ([]tlog.Hash, error) {
		hashes := make([]tlog.Hash, len(indexes))
		for i, index := range indexes {
			h, err := l.storedHash(index)
			if err != nil {
				return nil, err
			}
			hashes[i] = h
		}
		return hashes, nil
	})
}

// storedHash returns the stored hash with the given index: the root of a
// complete subtree.
func (l LeafHashes) storedHash(index int64) (tlog.Hash, error) {
	if index < 0 {
		return tlog.Hash{}, fmt.Errorf("hashchain: stored hash index %d out of range", index)
	}
	level, n := tlog.SplitStoredHashIndex(index)
	if level >= 63 || n >= int64(len(l))>>level {
		return tlog.Hash{}, fmt.Errorf("hashchain: stored hash %d (level %d, #%d) is not in a tree of %d leaves", index, level, n, len(l))
	}
	var t Tree
	for _, leaf := range l[n<<level : (n+1)<<level] {
		t.Append(leaf)
	}
	return t.Root(), nil
}
