package tui

import (
	"time"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/dataset"
)

// shared is what every pane sees: the data, its indexes and the looks.
type shared struct {
	opts    Options
	man     *dataset.Manifest
	ov      *analyze.Overview // nil until loaded
	glimpse *analyze.Glimpse  // the fleet as read so far, until loaded; nil before the first
	st      styles
	keys    keyMap
	byDev   map[string][]int // finding indices by device
	byRef   map[recRef][]int // finding indices by the records they rest on
	byStart []int            // finding indices by start time
	policy  policyCeiling    // the ceiling of each attempt, if a policy is known
	loaded  time.Duration    // how long the survey took
	err     error            // the survey's error
	w, h    int              // the terminal's size
	notice  string           // a one-off line for the status bar
	now     func() time.Time // the clock (tests stop it)
	started time.Time
}

// windowed reports whether the check leaves records out (--since,
// --until): then the records it keeps say nothing of how far it has read.
func (sh *shared) windowed() bool {
	return !sh.opts.Check.Since.IsZero() || !sh.opts.Check.Until.IsZero()
}

// recRef names a record of the dataset: its file and row.
type recRef struct {
	file int32
	row  int64
}

// index builds the lookups the panes share.
func (sh *shared) index() {
	res := sh.ov.Result
	sh.byDev, sh.byRef = map[string][]int{}, map[recRef][]int{}
	for i, f := range res.Findings {
		sh.byDev[f.Device] = append(sh.byDev[f.Device], i)
		for _, r := range f.Records {
			k := recRef{r.File, r.Row}
			if refs := sh.byRef[k]; len(refs) == 0 || refs[len(refs)-1] != i {
				sh.byRef[k] = append(refs, i)
			}
		}
	}
	sh.byStart = make([]int, len(res.Findings))
	for i := range sh.byStart {
		sh.byStart[i] = i
	}
	sortByStart(sh.byStart, res.Findings)
	sh.policy = newPolicyCeiling(res.Summary.Policy.Policy)
}
