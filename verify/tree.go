package verify

import (
	"golang.org/x/mod/sumdb/tlog"

	"github.com/stormaudit/stormaudit/hashchain"
)

// rowTree is the tree a chain version grows over a dataset's rows, in
// storage order, and its chains' genesis.
type rowTree interface {
	add(pos hashchain.Pos, leaf tlog.Hash) // the row at pos, whose version 2 leaf is leaf
	rows() int64
	root() tlog.Hash // the checkpoint root of the rows added so far
	genesis(origin string) tlog.Hash
}

// newRowTree returns the empty tree of chain version version (2 or 3).
func newRowTree(version int) rowTree {
	if version == hashchain.Version3 {
		return &tree3{}
	}
	return &tree2{}
}

// tree2 is version 2's: a leaf per row.
type tree2 struct{ t hashchain.Tree }

func (t *tree2) add(_ hashchain.Pos, leaf tlog.Hash) { t.t.Append(leaf) }
func (t *tree2) rows() int64                         { return t.t.Size() }
func (t *tree2) root() tlog.Hash                     { return t.t.Root() }
func (t *tree2) genesis(origin string) tlog.Hash     { return hashchain.Genesis(origin) }

// tree3 is version 3's: the links that end a segment or a chain.
type tree3 struct{ t hashchain.Tree3 }

func (t *tree3) add(pos hashchain.Pos, _ tlog.Hash) { t.t.Add(pos.Seq, pos.Link) }
func (t *tree3) rows() int64                        { return t.t.Rows() }
func (t *tree3) root() tlog.Hash                    { return t.t.Root() }
func (t *tree3) genesis(origin string) tlog.Hash    { return hashchain.Genesis3(origin) }
