package hashchain

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/stormaudit/stormaudit/auditfmt"
	"golang.org/x/mod/sumdb/tlog"
)

// Version is version 2 of docs/hashchain.md: the record hash over JCS
// bytes R, the link over it, a tree leaf per row. Collector logs use it,
// and datasets written before version 3 ([Version3], what ingest writes
// now). A dataset's manifest records the version it was written under
// (chain_version); verify checks versions 2 and 3, and refuses others.
const Version = 2

// Origin returns the origin of a device's chain in the log named log:
// LOG/CLIENT_ID.
func Origin(log, clientID string) string { return log + "/" + clientID }

// IsOrigin reports whether origin is Origin(log, clientID), without
// building it.
func IsOrigin(origin, log, clientID string) bool {
	return len(origin) == len(log)+1+len(clientID) && origin[:len(log)] == log &&
		origin[len(log)] == '/' && origin[len(log)+1:] == clientID
}

// Pos is a record's place in its device's chain.
type Pos struct {
	Origin string    // the chain, LOG/CLIENT_ID
	Seq    int64     // the record's place in it, from 0
	Link   tlog.Hash // its chain link, link[Seq]
}

// Leaf returns the tree leaf of the record at pos: SHA-256(0x00 || L)
// with L = link || seq as 8 bytes big-endian || origin in UTF-8. The link
// commits to the record's bytes R (which say where it was read) and to
// every earlier record of its chain; seq and origin name its place.
func Leaf(pos Pos) tlog.Hash {
	var buf [256]byte
	b := buf[:0]
	if n := 1 + tlog.HashSize + 8 + len(pos.Origin); n > len(buf) {
		b = make([]byte, 0, n)
	}
	b = append(b, 0)
	b = append(b, pos.Link[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(pos.Seq))
	b = append(b, pos.Origin...)
	return sha256.Sum256(b)
}

// A Head is the state of one chain: its origin, the seq of its next
// record, and the link of its last one (Genesis(Origin) before the
// first).
type Head struct {
	Origin string
	Next   int64
	Link   tlog.Hash
	quoted []byte // Origin as a JSON string, for the collector log's lines
}

// Chains holds the heads of the chains of one log. Records come in one of
// two orders: any order (a collector log, its writer), where every head is
// kept; or grouped by client_id in ascending order (a dataset), where only
// the current chain is kept and a client_id that does not sort after the
// one before it is an error: its chain would be split. It is not safe for
// concurrent use.
type Chains struct {
	log    string
	sorted bool
	v3     bool                  // version 3 chains (NewChains3)
	order  func(a, b string) int // the order of client ids in sorted chains
	heads  map[string]*Head      // by client_id, unless sorted
	cur    *Head                 // the last record's head
	curID  string
}

// NewChains returns the chains of the log named log, at their genesis;
// sorted says that records come grouped by ascending client_id.
func NewChains(log string, sorted bool) *Chains {
	c := &Chains{log: log, sorted: sorted}
	if !sorted {
		c.heads = map[string]*Head{}
	}
	return c
}

// NewChains3 is NewChains for chains of version 3 (docs/hashchain.md):
// their genesis is Genesis3, Append3 links records, and Follow holds a
// record whose link was not checked (linked false) to be wrong.
func NewChains3(log string, sorted bool) *Chains {
	c := NewChains(log, sorted)
	c.v3 = true
	return c
}

// Log returns the log's name.
func (c *Chains) Log() string { return c.log }

// Heads calls fn with the head of every chain kept (one at most when
// sorted).
func (c *Chains) Heads(fn func(clientID string, h *Head)) {
	if c.sorted {
		if c.cur != nil {
			fn(c.curID, c.cur)
		}
		return
	}
	for id, h := range c.heads {
		fn(id, h)
	}
}

// SetOrder gives sorted chains the order their client ids come in (by
// default, byte order): a dataset partitioned into buckets is sorted by
// bucket, then client id.
func (c *Chains) SetOrder(order func(a, b string) int) { c.order = order }

func (c *Chains) compare(a, b string) int {
	if c.order != nil {
		return c.order(a, b)
	}
	return strings.Compare(a, b)
}

// head returns the head of clientID's chain and whether it is new (then
// not yet kept: keep keeps it).
func (c *Chains) head(clientID string) (*Head, bool) {
	if c.cur != nil && c.curID == clientID {
		return c.cur, false
	}
	if !c.sorted {
		if h := c.heads[clientID]; h != nil {
			return h, false
		}
	}
	origin := Origin(c.log, clientID)
	// quoted is made here, not on first use: the collector writer's
	// encoders read it on goroutines of their own
	genesis := Genesis(origin)
	if c.v3 {
		genesis = Genesis3(origin)
	}
	return &Head{Origin: origin, Link: genesis, quoted: auditfmt.AppendJSONString(nil, origin)}, true
}

// keep makes h the current head, and keeps it if new.
func (c *Chains) keep(clientID string, h *Head, isNew bool) {
	if isNew && !c.sorted {
		c.heads[clientID] = h
	}
	c.cur, c.curID = h, clientID
}

// Append adds the next record of clientID's chain, whose record hash is
// h, and returns its position. In sorted chains a client_id that does not
// sort after the one before it starts a new chain at seq 0: the caller
// sorts.
func (c *Chains) Append(clientID string, h tlog.Hash) Pos {
	head, isNew := c.head(clientID)
	link := NextLink(head.Link, h)
	pos := Pos{Origin: head.Origin, Seq: head.Next, Link: link}
	head.Next, head.Link = head.Next+1, link
	c.keep(clientID, head, isNew)
	return pos
}

// Append3 adds the next record of clientID's version 3 chain, whose
// canonical bytes at a seq are bytes(seq) (AppendRecordBytes3), and
// returns its position.
func (c *Chains) Append3(clientID string, bytes func(seq int64) []byte) Pos {
	head, isNew := c.head(clientID)
	link := Link3(head.Link, bytes(head.Next))
	pos := Pos{Origin: head.Origin, Seq: head.Next, Link: link}
	head.Next, head.Link = head.Next+1, link
	c.keep(clientID, head, isNew)
	return pos
}

// Follow checks that pos is the next position of clientID's chain for a
// record whose record hash is h, then adds it: its origin is
// Origin(log, clientID), its seq the chain's next, and its link
// NextLink(the chain's last link, h). A caller that checked the link
// itself against the stored link of the chain's previous record (a
// parallel verifier) says linked, and the link is not computed again. The
// error, a *ChainError, leaves the chains as they were.
func (c *Chains) Follow(clientID string, pos Pos, h tlog.Hash, linked bool) error {
	if !IsOrigin(pos.Origin, c.log, clientID) {
		return &ChainError{Field: "origin", Origin: pos.Origin, Seq: pos.Seq,
			What: fmt.Sprintf("expected %s (LOG/client_id), found %s", strconv.Quote(Origin(c.log, clientID)), strconv.Quote(pos.Origin))}
	}
	if c.sorted && c.cur != nil && c.compare(clientID, c.curID) < 0 {
		return &ChainError{Field: "client_id", Origin: pos.Origin, Seq: pos.Seq,
			What: fmt.Sprintf("%s after %s: the rows are not in client_id order (within a bucket, when the dataset has buckets), so the chain is split", strconv.Quote(clientID), strconv.Quote(c.curID))}
	}
	head, isNew := c.head(clientID)
	switch {
	case pos.Seq != head.Next && head.Next == 0:
		return &ChainError{Field: "seq", Origin: pos.Origin, Seq: pos.Seq,
			What: fmt.Sprintf("expected 0 for the first record of the chain, found %d (records missing before it)", pos.Seq)}
	case pos.Seq != head.Next:
		return &ChainError{Field: "seq", Origin: pos.Origin, Seq: pos.Seq,
			What: fmt.Sprintf("expected %d after %d, found %d (records missing, repeated or out of order)", head.Next, head.Next-1, pos.Seq)}
	case !linked && (c.v3 || NextLink(head.Link, h) != pos.Link):
		return &ChainError{Field: "link", Origin: pos.Origin, Seq: pos.Seq,
			What: "the record does not match its chain link (it, or an earlier record of its chain, was changed, or it does not belong here)"}
	}
	head.Next, head.Link = pos.Seq+1, pos.Link
	c.keep(clientID, head, isNew)
	return nil
}

// ChainError says how a record does not follow its chain.
type ChainError struct {
	Field  string // "origin", "seq", "link", or "client_id" (a split chain)
	Origin string // the chain the record names
	Seq    int64  // the seq it holds
	What   string // what was expected and found
}

func (e *ChainError) Error() string { return e.Field + ": " + e.What }

// encodeLink returns a link in standard base64, as collector-log lines
// write it.
func encodeLink(link tlog.Hash) (b [44]byte) {
	base64.StdEncoding.Encode(b[:], link[:])
	return b
}
