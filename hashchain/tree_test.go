package hashchain

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"testing"

	"golang.org/x/mod/sumdb/tlog"
)

// storedHashes builds the stored hashes of package tlog for leaves, the
// reference a Tree is checked against.
type storedHashes []tlog.Hash

func (s storedHashes) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		if x >= int64(len(s)) {
			return nil, fmt.Errorf("no stored hash %d", x)
		}
		out[i] = s[x]
	}
	return out, nil
}

func (s *storedHashes) add(t *testing.T, n int64, leaf tlog.Hash) {
	hashes, err := tlog.StoredHashesForRecordHash(n, leaf, *s)
	if err != nil {
		t.Fatal(err)
	}
	*s = append(*s, hashes...)
}

func testLeaf(i int) tlog.Hash { return RecordHash(fmt.Appendf(nil, "leaf %d", i)) }

func TestTreeRootEverySize(t *testing.T) {
	var tree Tree
	if tree.Root() != sha256.Sum256(nil) || tree.Size() != 0 {
		t.Fatalf("empty tree: root %v, size %d", tree.Root(), tree.Size())
	}
	var stored storedHashes
	for i := range 1100 {
		leaf := testLeaf(i)
		stored.add(t, int64(i), leaf)
		tree.Append(leaf)
		want, err := tlog.TreeHash(int64(i+1), stored)
		if err != nil {
			t.Fatal(err)
		}
		if got := tree.Root(); got != want {
			t.Fatalf("size %d: root %v, want %v", i+1, got, want)
		}
		if tree.Size() != int64(i+1) {
			t.Fatalf("size %d: Size() = %d", i+1, tree.Size())
		}
	}
}

func TestTreeRootLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	sizes := []int64{1<<16 + 1}
	for range 2 {
		sizes = append(sizes, 1+rng.Int64N(100000))
	}
	if testing.Short() {
		sizes = sizes[:1]
	}
	for _, size := range sizes {
		var tree Tree
		var stored storedHashes
		for i := range size {
			leaf := testLeaf(int(i))
			stored.add(t, i, leaf)
			tree.Append(leaf)
		}
		want, err := tlog.TreeHash(size, stored)
		if err != nil {
			t.Fatal(err)
		}
		if got := tree.Root(); got != want {
			t.Errorf("size %d: root %v, want %v", size, got, want)
		}
	}
}

func leafHashes(n int) LeafHashes {
	l := make(LeafHashes, n)
	for i := range l {
		l[i] = testLeaf(i)
	}
	return l
}

func rootOf(l LeafHashes) tlog.Hash {
	var t Tree
	for _, h := range l {
		t.Append(h)
	}
	return t.Root()
}

func TestLeafHashesProofs(t *testing.T) {
	all := leafHashes(70)
	r := all.HashReader()
	for size := int64(1); size <= int64(len(all)); size++ {
		root := rootOf(all[:size])
		if got, err := tlog.TreeHash(size, r); err != nil || got != root {
			t.Fatalf("TreeHash(%d) = %v, %v; want %v", size, got, err, root)
		}
		for n := range size {
			p, err := tlog.ProveRecord(size, n, r)
			if err != nil {
				t.Fatal(err)
			}
			if err := tlog.CheckRecord(p, size, root, n, all[n]); err != nil {
				t.Fatalf("inclusion of %d in %d: %v", n, size, err)
			}
			if err := tlog.CheckRecord(p, size, root, n, all[(n+1)%int64(len(all))]); err == nil {
				t.Fatalf("inclusion of %d in %d holds for another leaf", n, size)
			}
		}
		for old := int64(1); old <= size; old++ {
			p, err := tlog.ProveTree(size, old, r)
			if err != nil {
				t.Fatal(err)
			}
			if err := tlog.CheckTree(p, size, root, old, rootOf(all[:old])); err != nil {
				t.Fatalf("consistency of %d with %d: %v", old, size, err)
			}
			if old < size {
				if err := tlog.CheckTree(p, size, root, old, rootOf(all[1:old+1])); err == nil {
					t.Fatalf("consistency of %d with %d holds for another old tree", old, size)
				}
			}
		}
	}
}

func TestLeafHashesOutOfRange(t *testing.T) {
	r := leafHashes(5).HashReader()
	for _, index := range []int64{-1, tlog.StoredHashIndex(0, 5), tlog.StoredHashIndex(1, 2), tlog.StoredHashIndex(3, 0), 1 << 62} {
		if _, err := r.ReadHashes([]int64{index}); err == nil {
			t.Errorf("ReadHashes(%d) in a tree of 5 leaves: no error", index)
		}
	}
	if _, err := tlog.ProveRecord(6, 0, r); err == nil {
		t.Error("ProveRecord beyond the leaves: no error")
	}
}

// TestTree3AddChains builds the tree of chains of many lengths row by
// row, and from ranges of whole chains: the first range added row by row
// (its last chain left open) or collected apart like the second, whose
// leaves are collected apart (Leaves3). The rows, leaves and root are
// the same wherever the ranges split.
func TestTree3AddChains(t *testing.T) {
	type row struct {
		seq  int64
		link tlog.Hash
	}
	var chains [][]row
	var whole Tree3
	for c, n := range []int64{1, 63, 64, 65, 130, 2, 200, 1} {
		var rows []row
		for seq := range n {
			link := sha256.Sum256([]byte{byte(c), byte(seq), byte(seq >> 8)})
			whole.Add(seq, link)
			rows = append(rows, row{seq, link})
		}
		chains = append(chains, rows)
	}
	collect := func(chains [][]row) *Leaves3 {
		var l Leaves3
		for _, c := range chains {
			for _, r := range c {
				l.Add(r.seq, r.link)
			}
		}
		l.End()
		return &l
	}
	for split := range len(chains) + 1 {
		for _, rowByRow := range []bool{false, true} {
			var parts Tree3
			if rowByRow {
				for _, c := range chains[:split] {
					for _, r := range c {
						parts.Add(r.seq, r.link)
					}
				}
			} else {
				parts.AddChains(collect(chains[:split]))
			}
			parts.AddChains(collect(chains[split:]))
			if parts.Rows() != whole.Rows() || parts.Leaves() != whole.Leaves() || parts.Root() != whole.Root() {
				t.Errorf("split %d (row by row %v): %d rows, %d leaves, root %x; row by row %d, %d, %x",
					split, rowByRow, parts.Rows(), parts.Leaves(), parts.Root(), whole.Rows(), whole.Leaves(), whole.Root())
			}
		}
	}
}
