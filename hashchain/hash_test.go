package hashchain

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/tlog"
)

func TestRecordHash(t *testing.T) {
	for _, n := range []int{0, 1, 55, 56, 63, 64, 200, 510, 511, 512, 4000} {
		b := []byte(strings.Repeat("x", n))
		if got, want := RecordHash(b), tlog.RecordHash(b); got != want {
			t.Errorf("RecordHash of %d bytes = %v, want %v", n, got, want)
		}
	}
}

func TestGenesisAndNextLink(t *testing.T) {
	origin := "stormaudit.example/incident/dev-0001"
	g := Genesis(origin)
	if want := sha256.Sum256([]byte("stormaudit/chain/v1\n" + origin + "\n")); g != want {
		t.Errorf("Genesis = %v, want %v", g, tlog.Hash(want))
	}
	h := RecordHash([]byte(`{"record":{}}`))
	if want := sha256.Sum256(append(g[:], h[:]...)); NextLink(g, h) != want {
		t.Errorf("NextLink = %v, want %v", NextLink(g, h), tlog.Hash(want))
	}
	if Genesis("a") == Genesis("b") || Genesis("") == Genesis("\n") {
		t.Error("different origins share a genesis link")
	}
}

// TestLeaf checks the tree leaf against its definition: SHA-256 of 0x00,
// the link, seq as 8 bytes big-endian and the origin; and that each part
// changes it.
func TestLeaf(t *testing.T) {
	var link tlog.Hash
	for i := range link {
		link[i] = byte(i * 7)
	}
	for _, pos := range []Pos{
		{Origin: "stormaudit.example/incident/dev-0001", Seq: 0, Link: link},
		{Origin: "log/dév \"quoted\"\t\U0001F600", Seq: 12345, Link: link},
		{Origin: strings.Repeat("o", 300), Seq: math.MaxInt64, Link: link},
	} {
		var seq [8]byte
		binary.BigEndian.PutUint64(seq[:], uint64(pos.Seq))
		want := sha256.Sum256(append(append(append([]byte{0}, link[:]...), seq[:]...), pos.Origin...))
		if got := Leaf(pos); got != tlog.Hash(want) {
			t.Errorf("Leaf(%q, %d) = %v, want %v", pos.Origin, pos.Seq, got, tlog.Hash(want))
		}
		other := pos
		other.Seq++
		if Leaf(other) == Leaf(pos) {
			t.Error("the seq does not change the leaf")
		}
		other = pos
		other.Origin += "x"
		if Leaf(other) == Leaf(pos) {
			t.Error("the origin does not change the leaf")
		}
		other = pos
		other.Link[31] ^= 1
		if Leaf(other) == Leaf(pos) {
			t.Error("the link does not change the leaf")
		}
	}
}
