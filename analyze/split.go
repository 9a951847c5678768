package analyze

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/stormaudit/stormaudit/dataset"
	"github.com/stormaudit/stormaudit/policy"
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
// rows, or takes the driver's (Options.Inference). Five steps between
// Part and Finish shrink what reaches the one place that finishes, and
// leave the result as it was: resync's fires travel apart and are kept
// only where enough share a delay (TakeFires, KeepFires); so do
// starvation's recovered devices, kept only past what the least of the
// parts' median times to recover allows to be reported (MedianTTR,
// TakeRecovered, KeepRecovered, PutRecovered); the incidents are found
// apart, each part detailing them and sharing each return, which is
// judged where its shares meet (TakeIncidents, Infer, Detail,
// JudgeStorm, PutIncidents, PutStorm; inferred.go and returns.go); the
// fleet's times to recover and starvation's waits merge in any order
// (TakeFigures, MergeFigures, PutFigures; figures.go); and the device
// ids travel apart, only those a finding can name coming back (TakeNames,
// Wanted, Name, PutNames; names.go). The finishing step may take the
// partials one at a time (Finisher), or read them again in passes, a
// window of parts a pass (FinishInPasses; finisher.go).
type Split struct {
	dir  string
	opts Options
	man  *dataset.Manifest
	k    *checker // a template: its policy and what was inferred
	// inference is what was inferred, when no policy was declared
	inference *Inference
	// fingerprint digests the options partials must share (optionsPrint)
	fingerprint string
}

// NewSplit prepares a split check of the dataset in dir.
func NewSplit(dir string, opts Options) (*Split, error) {
	man, err := dataset.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	var changed []string
	switch {
	case len(man.BrokerLogs) == 0:
	case len(opts.Broker) == 0:
		if opts.Broker, changed, err = storedBrokerLogs(dir, man); err != nil {
			return nil, err
		}
	default:
		var names []string
		for _, b := range man.BrokerLogs {
			names = append(names, b.Name+" (stored as "+b.File+")")
		}
		changed = append(changed, "the broker log given (--broker-log) replaces the one stored with the dataset, "+
			strings.Join(names, ", ")+", which is not read")
	}
	listing, err := dataset.List(dir, man)
	if err != nil {
		return nil, err
	}
	s := &Split{dir: dir, opts: opts, man: man, k: newChecker(opts)}
	s.k.changedLogs, s.k.unlisted = changed, listing.Unlisted
	if opts.Policy == nil {
		in := opts.Inference
		if in == nil {
			if in, err = infer(dir); err != nil {
				return nil, err
			}
		}
		s.k.inferred(in)
		s.inference = in
	}
	s.fingerprint = s.optionsPrint()
	return s, nil
}

// optionsPrint returns a digest of what a partial's meaning depends on
// beside the dataset: the rules, their thresholds and severities, the
// window, the policy and whether it was inferred.
func (s *Split) optionsPrint() string {
	var ids []string
	for _, r := range s.k.rules {
		ids = append(ids, r.Info().ID)
	}
	pol := "none"
	if p := s.k.c.Policy; p != nil {
		pol = string(p.AppendTOML(nil)) + fmt.Sprint(declaredKeys(p))
	}
	thresholds := map[string]map[string]float64{}
	for id, ts := range s.opts.Thresholds {
		if len(ts) > 0 {
			thresholds[id] = ts
		}
	}
	// fmt prints maps sorted by key; severities are applied when the
	// check finishes, not in partials
	win := "all"
	if w := s.k.win; w != nil {
		win = fmt.Sprintf("%d-%d", w.lo, w.hi)
	}
	text := fmt.Sprintf("%v|%v|%d|%q|%v|%v|%v|%s", ids, thresholds, s.k.fc.Window, pol, s.k.c.Inferred, s.k.info.Inferred, s.k.fc.Wit.On, win)
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:8])
}

// Inference returns the policy inferred from the dataset, nil when the
// options declare one.
func (s *Split) Inference() *Inference { return s.inference }

// declaredKeys returns the keys p declares: a key declared and the same
// value set in Go are told apart by some rules.
func declaredKeys(p *policy.Policy) []string {
	var keys []string
	t := reflect.TypeFor[policy.Policy]()
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ","); name != "" && p.Declared(name) {
			keys = append(keys, name)
		}
	}
	return keys
}

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
	part        int    // -1: every part
	fingerprint string // its Split's
	k           *checker
	sources     []string
	firesTaken  bool // TakeFires took resync's fires
	// TakeRecovered took starvation's recovered devices, and PutRecovered
	// has not put them back
	recoveredTaken bool
	// TakeIncidents took what finds the incidents (PutIncidents puts
	// their details in their place)
	incidentsTaken bool
	figuresTaken   bool  // TakeFigures took the fleet's figures
	figuresOf      []int // the parts whose figures PutFigures put in, nil if none
	figuresDevices int64 // and their devices
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
	emit := f.emit
	if ctx := s.opts.Context; ctx != nil {
		emit = func(d *Device) error {
			if err := ctx.Err(); err != nil {
				return context.Cause(ctx) // stopped: a signal, a cancelled job
			}
			return f.emit(d)
		}
	}
	_, sources, err := readDevices(s.dir, files, math.MaxInt64, k.win, f.get, emit)
	f.close()
	if err != nil {
		return nil, err
	}
	return &Partial{part: i, fingerprint: s.fingerprint, k: k, sources: sources}, nil
}

// Finish merges the partials of every part, in part order, runs every
// rule's Finish and returns the result. parts holds each part once, in
// any order; when their resync fires were taken (TakeFires), fires holds
// what KeepFires kept of every shard. Finish checks each partial, the
// incidents' returns judged and the parts whose figures were put back
// before it merges any: on an error found then they are as they were.
// What only the merged state shows (every id a finding names put back,
// every shard's busiest windows, the figures' devices) is checked after,
// and the partials are used up then. (A Finisher takes them one at a time.)
func (s *Split) Finish(parts []*Partial, fires ...[]byte) (*Result, error) {
	parts, err := s.inOrder(parts)
	if err != nil {
		return nil, err
	}
	var counts []int32 // each part's devices, which resync's fires name
	for _, p := range parts {
		if err := s.mergeable(p, parts[0]); err != nil {
			return nil, err
		}
		if r := p.resync(); r != nil {
			counts = append(counts, r.Devices)
		}
	}
	kept, err := s.keptOf(parts[0], fires, counts)
	if err != nil {
		return nil, err
	}
	if err := judgedAll(parts); err != nil {
		return nil, fmt.Errorf("%s: %w", s.dir, err)
	}
	if err := figuresPutAll(parts); err != nil {
		return nil, fmt.Errorf("%s: %w", s.dir, err)
	}
	f := s.NewFinisher()
	for _, p := range parts {
		if err := f.Add(p); err != nil {
			return nil, err
		}
	}
	return f.finish(kept)
}

// mergeable reports an error unless p can merge with first, the partial
// of part 0: from the same inputs, with what was taken from it put back,
// and taken apart as first was.
func (s *Split) mergeable(p, first *Partial) error {
	if !slices.Equal(p.sources, first.sources) {
		return fmt.Errorf("%s: part %d names other inputs than part %d (%d against %d): the manifest does not list every record's source", s.dir, p.part, first.part, len(p.sources), len(first.sources))
	}
	if p.recoveredTaken {
		return fmt.Errorf("%s: starvation's recovered devices were taken from part %d and not put back (PutRecovered)", s.dir, p.part)
	}
	for _, t := range []struct {
		what  string
		taken func(*Partial) bool
	}{
		{"incidents", func(p *Partial) bool { return p.incidentsTaken }},
		{"resync fires", func(p *Partial) bool { return p.firesTaken }},
		{"device ids", func(p *Partial) bool { return p.k.fc.NamesTaken }},
		{"figures", func(p *Partial) bool { return p.figuresTaken }},
	} {
		if err := takenOfAll([]*Partial{first, p}, t.what, t.taken); err != nil {
			return fmt.Errorf("%s: %w", s.dir, err)
		}
	}
	if inc, fi := &p.k.fc.Inc, &first.k.fc.Inc; p.incidentsTaken &&
		(!inc.Detailed || fi.Inferred == nil || len(inc.Details) != len(fi.Inferred.Incidents)) {
		return fmt.Errorf("%s: the incidents of part %d were taken and their details not put back (PutIncidents)", s.dir, p.part)
	}
	return nil
}

// takenOfAll reports an error unless what taken says was taken apart
// (the incidents, the fires) was taken from every part or from none.
func takenOfAll(parts []*Partial, what string, taken func(*Partial) bool) error {
	for _, p := range parts {
		if taken(p) != taken(parts[0]) {
			yes, no := p.part, parts[0].part
			if taken(parts[0]) {
				yes, no = no, yes
			}
			return fmt.Errorf("the %s of part %d were taken and those of part %d were not", what, yes, no)
		}
	}
	return nil
}

// inOrder returns parts sorted by part, checking that they are every part
// once (or one partial of every part, as Check makes).
func (s *Split) inOrder(parts []*Partial) ([]*Partial, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("%s: expected the partials of %d parts, found none", s.dir, s.Parts())
	}
	parts = slices.Clone(parts)
	slices.SortFunc(parts, func(a, b *Partial) int { return a.part - b.part })
	if len(parts) == 1 && parts[0].part == -1 && parts[0].fingerprint == s.fingerprint {
		return parts, nil
	}
	for i, p := range parts {
		if p.fingerprint != s.fingerprint {
			return nil, fmt.Errorf("%s: part %d: made with other options (rules, thresholds, window or policy) than this check", s.dir, p.part)
		}
		if p.part != i {
			return nil, fmt.Errorf("%s: expected the partials of parts 0 to %d, found part %d where part %d belongs", s.dir, s.Parts()-1, p.part, i)
		}
	}
	if len(parts) != s.Parts() {
		return nil, fmt.Errorf("%s: expected the partials of %d parts, found %d", s.dir, s.Parts(), len(parts))
	}
	return parts, nil
}

// partialHead is what a Partial encodes before its rules' states.
type partialHead struct {
	Part                int
	Options             string // the Split's fingerprint
	FiresTaken          bool
	RecoveredTaken      bool
	IncidentsTaken      bool
	FiguresTaken        bool
	Sources             []string
	End                 int64
	Outside             int64 // records left out by the window
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
	if p.figuresOf != nil {
		return nil, fmt.Errorf("partial of part %d: the fleet's figures were put back into it: it is the finishing step's, and does not encode", p.part)
	}
	k := p.k
	h := partialHead{Part: p.part, Options: p.fingerprint, FiresTaken: p.firesTaken, RecoveredTaken: p.recoveredTaken, IncidentsTaken: p.incidentsTaken, FiguresTaken: p.figuresTaken, Sources: p.sources, End: k.c.End, Outside: k.win.left(), Moved: k.moved, MovedDevices: k.movedDevices, MovedGap: k.movedGap, Fleet: k.fc}
	for _, c := range k.ctxs {
		explain(c.findings) // a partial carries them written: a closure does not encode
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
	if h.Options != s.fingerprint || len(h.Contexts) != len(k.ctxs) || h.Fleet == nil {
		return nil, fmt.Errorf("partial of part %d: made with other options (rules, thresholds, window or policy) than this check", h.Part)
	}
	k.c.End, k.moved, k.movedDevices, k.movedGap, k.fc = h.End, h.Moved, h.MovedDevices, h.MovedGap, h.Fleet
	if k.win != nil {
		k.win.outside = h.Outside
	}
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
	if err := k.validOrdinals(); err != nil {
		return nil, fmt.Errorf("partial of part %d: %w", h.Part, err)
	}
	if inc := &k.fc.Inc; !h.IncidentsTaken && (inc.Inferred != nil || inc.Details != nil) {
		return nil, fmt.Errorf("partial of part %d: incidents' details in a partial whose incidents were not taken", h.Part)
	}
	if rs := k.resync(); rs != nil {
		if err := rs.valid(); err != nil {
			return nil, fmt.Errorf("partial of part %d: %w", h.Part, err)
		}
	}
	return &Partial{part: h.Part, fingerprint: h.Options, k: k, sources: h.Sources, firesTaken: h.FiresTaken, recoveredTaken: h.RecoveredTaken, incidentsTaken: h.IncidentsTaken, figuresTaken: h.FiguresTaken}, nil
}

// validOrdinals checks that a decoded partial names every device by an
// ordinal below its count, and that every count of devices is the same:
// Finish indexes the fleet's list of ids by them.
func (k *checker) validOrdinals() error {
	n := int32(len(k.fc.Names))
	ic := &k.fc.Inc
	if k.fc.NamesTaken {
		if k.fc.Named == nil {
			k.fc.Named = map[int32]string{} // a partial that sent none: the puts add to it
		}
		n = int32(k.fc.St.Devices)
		for dev := range k.fc.Named {
			if dev < 0 || dev >= n {
				return fmt.Errorf("the id of device %d of %d", dev, n)
			}
		}
	}
	if int64(k.fc.St.Devices) != int64(n) || ic.Devices != n || k.fc.NamesTaken && k.fc.Names != nil {
		return fmt.Errorf("%d device ids for %d and %d devices", len(k.fc.Names), k.fc.St.Devices, ic.Devices)
	}
	bad := func(what string, dev int32) error {
		if dev < 0 || dev >= n {
			return fmt.Errorf("%s names device %d of %d", what, dev, n)
		}
		return nil
	}
	for _, l := range ic.Losses {
		if err := bad("a loss", l.Dev); err != nil {
			return err
		}
	}
	for _, l := range ic.Last {
		if err := bad("a last state", l.Dev); err != nil {
			return err
		}
	}
	for _, d := range ic.ConnDevs {
		if err := bad("a connect", d); err != nil {
			return err
		}
	}
	for _, r := range k.rules {
		var devs int32
		switch r := r.(type) {
		case *resync:
			devs = r.Devices
		case *starvation:
			devs = r.Devices
			for _, s := range r.Devs {
				if err := bad("starvation", s.Dev); err != nil {
					return err
				}
			}
		case *recoveryStorm:
			devs = r.Devices
			for _, l := range r.Losses {
				if err := bad("recovery-storm", l.Dev); err != nil {
					return err
				}
			}
		default:
			continue
		}
		if devs != n {
			return fmt.Errorf("%s counts %d devices of %d", r.Info().ID, devs, n)
		}
	}
	return nil
}
