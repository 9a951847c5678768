package analyze

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stormaudit/stormaudit/dataset"
)

// A Split is a check cut into parts, for a driver that spreads the work
// over processes or machines (cmd/stormaudit-beam runs one on Apache
// Beam). Each part is a bucket of a bucketed dataset (ingest --buckets;
// a flat dataset is one part): Part reads its devices and runs every
// rule's work on each of them, which leaves the findings about single
// devices and each rule's fleet state (a Partial); Finish merges the
// partials in part order and runs every rule's Finish on the merged
// state, which is what Check does after its last device. The result is
// the one Check gives on the same dataset: Check is the split of one
// part, run in one process.
//
// A Partial crosses processes as bytes (MarshalBinary, then Decode in a
// Split made with the same directory and options). When no policy is
// declared, every process infers the same one from the dataset's first
// rows, or takes the driver's (Options.Inference).
type Split struct {
	dir  string
	opts Options
	man  *dataset.Manifest
	k    *checker // a template: its policy and what was inferred
	// inference is what was inferred, when no policy was declared
	inference *Inference
}

// NewSplit prepares a split check of the dataset in dir.
func NewSplit(dir string, opts Options) (*Split, error) {
	man, err := dataset.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	s := &Split{dir: dir, opts: opts, man: man, k: newChecker(opts)}
	if opts.Policy == nil {
		in := opts.Inference
		if in == nil {
			p, keys, err := infer(dir)
			if err != nil {
				return nil, err
			}
			in = &Inference{Policy: p, Keys: keys}
		}
		s.k.inferred(in.Policy, in.Keys)
		s.inference = in
	}
	return s, nil
}

// Inference returns the policy inferred from the dataset, nil when the
// options declare one.
func (s *Split) Inference() *Inference { return s.inference }

// Parts returns the number of parts: the dataset's buckets, or 1.
func (s *Split) Parts() int { return max(s.man.Buckets, 1) }

// Manifest returns the dataset's manifest.
func (s *Split) Manifest() *dataset.Manifest { return s.man }

// files returns the indices in the manifest of part i's files.
func (s *Split) files(i int) []int {
	fs := []int{} // not nil: nil reads every file
	prefix := ""
	if s.man.Buckets > 0 {
		prefix = dataset.BucketDir(i, s.man.Buckets) + "/"
	}
	for j, f := range s.man.Files {
		if strings.HasPrefix(filepath.ToSlash(f.Name), prefix) {
			fs = append(fs, j)
		}
	}
	return fs
}

// checker returns a checker with the split's policy, its contexts made.
func (s *Split) checker() *checker {
	k := newChecker(s.opts)
	k.c.Policy, k.c.Inferred, k.info = s.k.c.Policy, s.k.c.Inferred, s.k.info
	k.start()
	return k
}

// A Partial is a check's state after the devices of one part: the
// findings about single devices, what rules noted, and each rule's fleet
// state. It encodes with MarshalBinary and decodes with Split.Decode.
type Partial struct {
	part       int // -1: every part
	k          *checker
	sources    []string
	firesTaken bool // TakeFires took resync's fires
}

// Index returns the part the partial holds (see Split.Part).
func (p *Partial) Index() int { return p.part }

// Part runs the rules over the devices of part i, 0 <= i < Parts().
func (s *Split) Part(i int) (*Partial, error) {
	if i < 0 || i >= s.Parts() {
		return nil, fmt.Errorf("%s: part %d: expected 0 to %d", s.dir, i, s.Parts()-1)
	}
	return s.run(i, s.files(i))
}

// run runs the rules over the devices in files (nil: every file) as part i.
func (s *Split) run(i int, files []int) (*Partial, error) {
	k := s.checker()
	f := newFan(k.consumers())
	_, sources, err := readDevices(s.dir, files, math.MaxInt64, f.get, f.emit)
	f.close()
	if err != nil {
		return nil, err
	}
	return &Partial{part: i, k: k, sources: sources}, nil
}

// Finish merges the partials of every part, in part order, runs every
// rule's Finish and returns the result. parts holds each part once, in
// any order; when their resync fires were taken (TakeFires), fires holds
// what KeepFires kept of every shard.
func (s *Split) Finish(parts []*Partial, fires ...[]byte) (*Result, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("%s: expected the partials of %d parts, found none", s.dir, s.Parts())
	}
	parts = slices.Clone(parts)
	slices.SortFunc(parts, func(a, b *Partial) int { return a.part - b.part })
	if len(parts) != 1 || parts[0].part != -1 {
		for i, p := range parts {
			if p.part != i {
				return nil, fmt.Errorf("%s: expected the partials of parts 0 to %d, found part %d where part %d belongs", s.dir, s.Parts()-1, p.part, i)
			}
		}
		if len(parts) != s.Parts() {
			return nil, fmt.Errorf("%s: expected the partials of %d parts, found %d", s.dir, s.Parts(), len(parts))
		}
	}
	k, sources := parts[0].k, parts[0].sources
	var base []int32 // the first device number of each part, for resync's fires
	var devices int32
	for i, p := range parts {
		if i > 0 && !slices.Equal(p.sources, sources) {
			return nil, fmt.Errorf("%s: part %d names other inputs than part 0 (%d against %d): the manifest does not list every record's source", s.dir, p.part, len(p.sources), len(sources))
		}
		if p.firesTaken != parts[0].firesTaken {
			return nil, fmt.Errorf("%s: part %d's resync fires were taken and part %d's were not", s.dir, parts[0].part, p.part)
		}
		if r := p.resync(); r != nil {
			base = append(base, devices)
			devices += int32(len(r.Names))
		}
		if i > 0 {
			k.merge(p.k)
		}
	}
	if parts[0].firesTaken {
		if err := restoreFires(parts[0].resync(), fires, base); err != nil {
			return nil, fmt.Errorf("%s: %w", s.dir, err)
		}
	} else if len(fires) > 0 {
		return nil, fmt.Errorf("%s: resync fires given, but no part's were taken", s.dir)
	}
	res := k.finish(s.dir, s.man, sources)
	for _, file := range s.man.Files {
		res.Files = append(res.Files, filepath.Join(s.dir, file.Name))
	}
	return res, nil
}

// partialHead is what a Partial encodes before its rules' states.
type partialHead struct {
	Part                int
	FiresTaken          bool
	Sources             []string
	End                 int64
	Moved, MovedDevices int
	MovedGap            int64
	Fleet               *fleetCounter
	Contexts            []contextState
}

// contextState is what a rule's Context holds of a part.
type contextState struct {
	Findings []Finding
	Notes    []string
	Skipped  map[string]string
}

// MarshalBinary encodes the partial (with encoding/gob): its head, then
// the state of every rule that merges, in catalogue order.
func (p *Partial) MarshalBinary() ([]byte, error) {
	k := p.k
	h := partialHead{Part: p.part, FiresTaken: p.firesTaken, Sources: p.sources, End: k.c.End, Moved: k.moved, MovedDevices: k.movedDevices, MovedGap: k.movedGap, Fleet: k.fc}
	for _, c := range k.ctxs {
		h.Contexts = append(h.Contexts, contextState{c.findings, c.notes, c.skipped})
	}
	var buf bytes.Buffer
	enc := gob.NewEncoder(&buf)
	if err := enc.Encode(&h); err != nil {
		return nil, fmt.Errorf("partial of part %d: %w", p.part, err)
	}
	for _, r := range k.rules {
		if m, ok := r.(merger); ok {
			if err := enc.Encode(m); err != nil {
				return nil, fmt.Errorf("partial of part %d: %s: %w", p.part, r.Info().ID, err)
			}
		}
	}
	return buf.Bytes(), nil
}

// Decode decodes a partial that MarshalBinary encoded, in a process whose
// Split has the same directory and options.
func (s *Split) Decode(data []byte) (*Partial, error) {
	k := s.checker()
	var h partialHead
	dec := gob.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("a partial: %w", err)
	}
	if len(h.Contexts) != len(k.ctxs) || h.Fleet == nil {
		return nil, fmt.Errorf("partial of part %d: it has %d rules, this check %d: made with other options", h.Part, len(h.Contexts), len(k.ctxs))
	}
	k.c.End, k.moved, k.movedDevices, k.movedGap, k.fc = h.End, h.Moved, h.MovedDevices, h.MovedGap, h.Fleet
	for i, cs := range h.Contexts {
		c := k.ctxs[i]
		c.findings, c.skipped = cs.Findings, cs.Skipped
		for _, n := range cs.Notes {
			c.note(n)
		}
	}
	for _, r := range k.rules {
		if m, ok := r.(merger); ok {
			if err := dec.Decode(m); err != nil {
				return nil, fmt.Errorf("partial of part %d: %s: %w", h.Part, r.Info().ID, err)
			}
		}
	}
	return &Partial{part: h.Part, k: k, sources: h.Sources, firesTaken: h.FiresTaken}, nil
}
