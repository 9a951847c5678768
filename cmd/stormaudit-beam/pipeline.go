package main

import (
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/cmd/internal/front"
	"github.com/stormaudit/stormaudit/policy"
)

// Config is what every worker needs to run its part of the check: the
// options of check, as plain values (Beam ships a DoFn's exported fields
// to the workers as JSON).
type Config struct {
	Dataset    string // absolute: the workers need not share the driver's working directory
	Name       string // the dataset as given, which the result names
	Policy     string // the declared policy as TOML, "" to infer it from the log
	PolicyName string
	// Inference is the policy the driver inferred, when none is declared:
	// the workers take it rather than each infer it again
	Inference *analyze.Inference
	Window    time.Duration
	// Disabled, Severity and Thresholds are the configuration's rules
	// (analyze.Options)
	Disabled   map[string]bool
	Severity   map[string]analyze.Severity
	Thresholds map[string]map[string]float64
	Outputs    []front.Output // absolute, "-" replaced by Stdout
	FailOn     analyze.Severity
	MaxResults int
	PerRule    int
	Version    string
	WorkingDir string // the driver's, which inputs are named relative to
	Status     string // where the finishing stage writes the exit status
	Stdout     string // the output the driver copies to its stdout
}

// options returns the analyze options of c.
func (c Config) options() (analyze.Options, error) {
	opts := analyze.Options{Window: c.Window, PolicyName: c.PolicyName, Inference: c.Inference,
		Disabled: c.Disabled, Severity: c.Severity, Thresholds: c.Thresholds}
	if c.Policy != "" {
		p, err := policy.Parse("policy.toml", []byte(c.Policy)) // the driver sends TOML
		if err != nil {
			return opts, err
		}
		opts.Policy = &p
	}
	return opts, nil
}

// split makes the split check of c.
func (c Config) split() (*analyze.Split, error) {
	opts, err := c.options()
	if err != nil {
		return nil, err
	}
	return analyze.NewSplit(c.Dataset, opts)
}

// partFn runs stage 1 on one part (a bucket): it reads the part's
// devices, runs every rule's per-device work, and emits the part's
// partial, encoded, its resync fires by shard, starvation's recovered
// devices, its median time to recover (ns), if any loss of it
// recovered, what finds the incidents and what details them (none
// with a broker's log), its figures that merge in any order, and its
// device ids (none with a broker's log).
type partFn struct {
	Config Config
	split  *analyze.Split
}

func (f *partFn) Setup() error {
	var err error
	f.split, err = f.Config.split()
	return err
}

func (f *partFn) ProcessElement(ctx context.Context, part int, emit func(int, []byte), emitFires func(int, []byte), emitRecovered func(int, []byte), emitMedian func(int64), emitIncidents func(int, []byte), emitTallies func(int, []byte), emitFigures func([]byte), emitNames func(int, []byte)) error {
	p, err := f.split.Part(part)
	if err != nil {
		return err
	}
	core, tallies, err := p.TakeIncidents()
	if err != nil {
		return err
	}
	if core != nil {
		emitIncidents(part, core)
		emitTallies(part, tallies)
	}
	if m, ok := p.MedianTTR(); ok {
		emitMedian(int64(m))
	}
	figures, err := p.TakeFigures()
	if err != nil {
		return err
	}
	emitFigures(figures)
	rec, err := p.TakeRecovered()
	if err != nil {
		return err
	}
	if rec != nil {
		emitRecovered(part, rec)
	}
	for shard, b := range p.TakeFires(FireShards) {
		emitFires(shard, b)
	}
	names, err := p.TakeNames()
	if err != nil {
		return err
	}
	if names != nil {
		emitNames(part, names)
	}
	b, err := p.MarshalBinary()
	if err != nil {
		return err
	}
	emit(part, b)
	return nil
}

// FireShards is the number of shards resync's timer fires travel in from
// stage 1 to the stage that keeps the ones whose delay enough others
// share: the parallelism of that stage.
const FireShards = 1024

// keepFn keeps the timer fires of one shard, gathered from every part,
// whose delay enough fires share (analyze.Split.KeepFires): a jittered
// fleet's fires are almost all dropped here, in parallel, rather than
// shipped to the one worker that finishes.
type keepFn struct {
	Config Config
	split  *analyze.Split
}

func (f *keepFn) Setup() error {
	var err error
	f.split, err = f.Config.split()
	return err
}

func (f *keepFn) ProcessElement(ctx context.Context, _ int, parts func(*[]byte) bool, emit func([]byte)) error {
	var shard [][]byte
	var b []byte
	for parts(&b) {
		shard = append(shard, b)
	}
	kept, err := f.split.KeepFires(shard)
	if err != nil {
		return err
	}
	if kept != nil {
		emit(kept)
	}
	return nil
}

// wantFn says which devices of each part the fires keepFn kept of one
// shard name (analyze.Split.Wanted): the finishing worker needs those
// devices' ids, not every part's.
type wantFn struct {
	Config Config
	split  *analyze.Split
}

func (f *wantFn) Setup() error {
	var err error
	f.split, err = f.Config.split()
	return err
}

func (f *wantFn) ProcessElement(ctx context.Context, kept []byte, emit func(int, []byte)) error {
	byPart, err := f.split.Wanted(kept)
	if err != nil {
		return err
	}
	for part, b := range byPart {
		emit(part, b)
	}
	return nil
}

// nameFn gives, of one part's device ids, those of the devices the kept
// fires name (analyze.Split.Name), in parallel over the parts.
type nameFn struct {
	Config Config
	split  *analyze.Split
}

func (f *nameFn) Setup() error {
	var err error
	f.split, err = f.Config.split()
	return err
}

func (f *nameFn) ProcessElement(ctx context.Context, part int, names func(*[]byte) bool, wanted func(*[]byte) bool, emit func(int, []byte)) error {
	var wants [][]byte
	var b []byte
	for wanted(&b) {
		wants = append(wants, b)
	}
	if len(wants) == 0 {
		return nil // the partial holds the ids it needs
	}
	var ids []byte
	if !names(&ids) {
		return nil // the part kept its ids (a broker's log): the finishing step checks they are there
	}
	named, err := f.split.Name(ids, wants)
	if err != nil {
		return err
	}
	emit(part, named)
	return nil
}

// keepRecoveredFn keeps, of one part's recovered devices (starvation's),
// those past 3 × the least of the parts' median times to recover, which
// the fleet's is never below (analyze.Split.KeepRecovered): the others
// cannot be reported, and are dropped here, in parallel, rather than
// shipped to the one worker that finishes.
type keepRecoveredFn struct {
	Config Config
	split  *analyze.Split
}

func (f *keepRecoveredFn) Setup() error {
	var err error
	f.split, err = f.Config.split()
	return err
}

func (f *keepRecoveredFn) ProcessElement(ctx context.Context, part int, b []byte, medians func(*int64) bool, emit func(int, []byte)) error {
	least, any := int64(math.MaxInt64), false
	var m int64
	for medians(&m) {
		least, any = min(least, m), true
	}
	if any {
		var err error
		if b, err = f.split.KeepRecovered(b, time.Duration(least)); err != nil {
			return err
		}
	}
	emit(part, b)
	return nil
}

// inferFn finds the incidents, once, from every part's losses
// (analyze.Split.Infer), and emits, by part, the losses of it that the
// incidents hold: the one worker that does holds every loss of the
// fleet, not the rest of the partials.
type inferFn struct {
	Config Config
}

func (f *inferFn) ProcessElement(ctx context.Context, _ []byte, cores func(*int, *[]byte) bool, emit func(int, []byte)) error {
	var all [][]byte
	var part int
	var b []byte
	for cores(&part, &b) {
		all = append(all, b)
	}
	if len(all) == 0 {
		return nil // a broker's log: the finishing step finds them itself
	}
	s, err := f.Config.split()
	if err != nil {
		return err
	}
	byPart, err := s.Infer(all)
	if err != nil {
		return err
	}
	for part, b := range byPart {
		emit(part, b)
	}
	return nil
}

// detailFn reduces one part's tallies of what its devices met and their
// last states against the incidents (analyze.Split.Detail), in parallel
// over the parts, and emits the part's incidents' details, by incident
// what its losses tell recovery-storm, and by shard of time its
// connects.
type detailFn struct {
	Config Config
	split  *analyze.Split
}

func (f *detailFn) Setup() error {
	var err error
	f.split, err = f.Config.split()
	return err
}

func (f *detailFn) ProcessElement(ctx context.Context, part int, tallies func(*[]byte) bool, assigned func(*[]byte) bool, emit func(int, []byte), emitStorm func(int, []byte), emitConnects func(int64, []byte)) error {
	var t, a []byte
	if !tallies(&t) || !assigned(&a) {
		return fmt.Errorf("part %d: its incidents' tallies, or what was found of them, are missing", part)
	}
	b, storms, connects, err := f.split.Detail(t, a)
	if err != nil {
		return err
	}
	emit(part, b)
	for k, s := range storms {
		emitStorm(k, s)
	}
	for k, c := range connects {
		emitConnects(k, c)
	}
	return nil
}

// peakFn finds, of the connects every part sent to one shard of time,
// each incident's busiest window starting in it (analyze.Split.Peaks),
// in parallel over the shards.
type peakFn struct {
	Config Config
	split  *analyze.Split
}

func (f *peakFn) Setup() error {
	var err error
	f.split, err = f.Config.split()
	return err
}

func (f *peakFn) ProcessElement(ctx context.Context, _ int64, connects func(*[]byte) bool, emit func([]byte)) error {
	var all [][]byte
	var b []byte
	for connects(&b) {
		all = append(all, b)
	}
	p, err := f.split.Peaks(all)
	if err != nil {
		return err
	}
	emit(p)
	return nil
}

// stormFn judges one incident's return for recovery-storm from what
// every part's losses of it tell (analyze.Split.JudgeStorm), in
// parallel over the incidents.
type stormFn struct {
	Config Config
	split  *analyze.Split
}

func (f *stormFn) Setup() error {
	var err error
	f.split, err = f.Config.split()
	return err
}

func (f *stormFn) ProcessElement(ctx context.Context, _ int, shares func(*[]byte) bool, emit func([]byte)) error {
	var all [][]byte
	var b []byte
	for shares(&b) {
		all = append(all, b)
	}
	j, err := f.split.JudgeStorm(all)
	if err != nil {
		return err
	}
	emit(j)
	return nil
}

// figuresFn merges the parts' figures (analyze.MergeFigures): a
// combine, in any order and grouping, which the runner may start on
// each worker before the shuffle; the finishing worker receives one.
type figuresFn struct{}

func (figuresFn) MergeAccumulators(a, b []byte) ([]byte, error) { return analyze.MergeFigures(a, b) }

// finishFn runs stage 2, once: with every part's partial, the fires
// kept, the recovered devices kept, the incidents' details,
// recovery-storm's verdicts, the figures merged and the device ids the
// kept fires name and the shards' busiest windows of connects as side
// inputs it merges the partials in part order,
// reading them again for each window of parts (analyze.FinishInPasses)
// so that it holds no more than a window's decoded at once, runs the
// rules' Finish and writes the result in each format, and the exit
// status.
type finishFn struct {
	Config Config
}

func (f *finishFn) ProcessElement(ctx context.Context, _ []byte, partials func() func(*int, *[]byte) bool, fires func(*[]byte) bool, recovered func(*int, *[]byte) bool, details func(*int, *[]byte) bool, storms func(*[]byte) bool, figures func(*[]byte) bool, named func(*int, *[]byte) bool, peaks func(*[]byte) bool) error {
	s, err := f.Config.split()
	if err != nil {
		return err
	}
	pb := putBacks{details: byPart(details), recovered: byPart(recovered), named: byPart(named),
		judged: all(storms), figures: all(figures), peaks: all(peaks)}
	var b []byte
	each := func(yield func(int, []byte) error) error { // the side input, read again in each pass
		var i int
		for iter := partials(); iter(&i, &b); {
			if err := yield(i, b); err != nil {
				return err
			}
		}
		return nil
	}
	res, err := s.FinishInPasses(analyze.FinishWindow, each, pb.put, all(fires)...)
	if err != nil {
		return err
	}
	if err := pb.left(); err != nil {
		return err
	}
	res.Dataset = f.Config.Name // as check names it
	for i, file := range s.Manifest().Files {
		res.Files[i] = filepath.Join(f.Config.Name, file.Name)
	}
	front.RelativeSources(res, f.Config.WorkingDir)
	return f.Config.write(res)
}

// putBacks is what the finishing stage puts back into the partials: by
// part, its incidents' details, its recovered devices kept and the ids
// its kept fires name; into part 0, the returns judged, the figures
// merged and the shards' busiest windows of connects.
type putBacks struct {
	details, recovered, named map[int][]byte
	judged, figures, peaks    [][]byte
}

// put puts into p what is its own, and forgets it.
func (pb *putBacks) put(p *analyze.Partial) error {
	k := p.Index()
	for _, back := range []struct {
		of  map[int][]byte
		put func([]byte) error
	}{{pb.details, p.PutIncidents}, {pb.recovered, p.PutRecovered}, {pb.named, p.PutNames}} {
		if b, ok := back.of[k]; ok {
			if err := back.put(b); err != nil {
				return err
			}
			delete(back.of, k)
		}
	}
	if k != 0 {
		return nil
	}
	for _, back := range []struct {
		all [][]byte
		put func([]byte) error
	}{{pb.judged, p.PutStorm}, {pb.figures, p.PutFigures}, {pb.peaks, p.PutPeaks}} {
		for _, b := range back.all {
			if err := back.put(b); err != nil {
				return err
			}
		}
	}
	return nil
}

// left reports an error if anything was for a part no partial holds.
func (pb *putBacks) left() error {
	for _, back := range []struct {
		what string
		of   map[int][]byte
	}{{"incidents' details", pb.details}, {"recovered devices", pb.recovered}, {"device ids", pb.named}} {
		if len(back.of) > 0 {
			return fmt.Errorf("%s of parts %v, which no partial holds", back.what, slices.Sorted(maps.Keys(back.of)))
		}
	}
	return nil
}

// byPart returns what iter yields, by part.
func byPart(iter func(*int, *[]byte) bool) map[int][]byte {
	out := map[int][]byte{}
	var i int
	var b []byte
	for iter(&i, &b) {
		out[i] = b
	}
	return out
}

// all returns what iter yields.
func all(iter func(*[]byte) bool) [][]byte {
	var out [][]byte
	var b []byte
	for iter(&b) {
		out = append(out, b)
	}
	return out
}

// write renders res in each output's format and writes the exit status.
func (c Config) write(res *analyze.Result) error {
	code, failing := front.ExitStatus(res, c.FailOn)
	opts := front.RenderOptions{PerRule: c.PerRule, MaxResults: c.MaxResults, ExitCode: code, FailOn: c.FailOn, Version: c.Version}
	for _, o := range c.Outputs {
		if err := writeFile(o.Path, func(w *os.File) error { return front.Render(w, o.Format, res, opts) }); err != nil {
			return err
		}
	}
	return writeFile(c.Status, func(w *os.File) error {
		_, err := fmt.Fprintf(w, "%d %d\n", code, failing)
		return err
	})
}

// writeFile creates path and calls fn with it.
func writeFile(path string, fn func(*os.File) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = fn(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func init() {
	register.DoFn10x1[context.Context, int, func(int, []byte), func(int, []byte), func(int, []byte), func(int64), func(int, []byte), func(int, []byte), func([]byte), func(int, []byte), error](&partFn{})
	register.DoFn3x1[context.Context, []byte, func(int, []byte), error](&wantFn{})
	register.DoFn5x1[context.Context, int, func(*[]byte) bool, func(*[]byte) bool, func(int, []byte), error](&nameFn{})
	register.Combiner1[[]byte](&figuresFn{})
	register.DoFn4x1[context.Context, []byte, func(*int, *[]byte) bool, func(int, []byte), error](&inferFn{})
	register.DoFn7x1[context.Context, int, func(*[]byte) bool, func(*[]byte) bool, func(int, []byte), func(int, []byte), func(int64, []byte), error](&detailFn{})
	register.DoFn4x1[context.Context, int64, func(*[]byte) bool, func([]byte), error](&peakFn{})
	register.DoFn4x1[context.Context, int, func(*[]byte) bool, func([]byte), error](&stormFn{})
	register.DoFn5x1[context.Context, int, []byte, func(*int64) bool, func(int, []byte), error](&keepRecoveredFn{})
	register.DoFn4x1[context.Context, int, func(*[]byte) bool, func([]byte), error](&keepFn{})
	register.DoFn10x1[context.Context, []byte, func() func(*int, *[]byte) bool, func(*[]byte) bool, func(*int, *[]byte) bool, func(*int, *[]byte) bool, func(*[]byte) bool, func(*[]byte) bool, func(*int, *[]byte) bool, func(*[]byte) bool, error](&finishFn{})
	register.Emitter1[[]byte]()
	register.Emitter1[int64]()
	register.Iter1[int64]()
	register.Emitter2[int, []byte]()
	register.Emitter2[int64, []byte]()
	register.Iter1[[]byte]()
	register.Iter2[int, []byte]()
}

// Build adds the check of c, over parts parts, to the pipeline of s.
// Stage 1 runs every part on its own and emits its partial, its resync
// fires by shard, starvation's recovered devices, its median time to
// recover and what finds the incidents; the fires are grouped by shard
// and filtered (keepFn), the recovered devices filtered by the least
// median (keepRecoveredFn), the incidents found once (inferFn), each
// part's tallies reduced to their details (detailFn) and each incident's
// return judged for recovery-storm (stormFn), each incident's busiest
// window of connects found by shard of time (peakFn), the figures merged
// (figuresFn), and the ids of the devices the kept fires name given
// from their parts' (wantFn, nameFn); stage 2 merges the partials, what
// was kept, the details, the verdicts, the figures and those ids, and
// writes the result.
func Build(s beam.Scope, c Config, parts int) {
	ids := make([]int, parts)
	for i := range ids {
		ids[i] = i
	}
	// Reshuffle: the parts spread over the workers, not fused into the
	// bundle that created them
	outs := beam.ParDoN(s, &partFn{Config: c}, beam.Reshuffle(s, beam.CreateList(s, ids)))
	partials, fires, recovered, medians, incidents, tallies, figures, names := outs[0], outs[1], outs[2], outs[3], outs[4], outs[5], outs[6], outs[7]
	kept := beam.ParDo(s, &keepFn{Config: c}, beam.GroupByKey(s, fires))
	named := beam.ParDo(s, &nameFn{Config: c}, beam.CoGroupByKey(s, names, beam.ParDo(s, &wantFn{Config: c}, kept)))
	keptRecovered := beam.ParDo(s, &keepRecoveredFn{Config: c}, recovered, beam.SideInput{Input: medians})
	assigned := beam.ParDo(s, &inferFn{Config: c}, beam.Impulse(s), beam.SideInput{Input: incidents})
	details, storms, connects := beam.ParDo3(s, &detailFn{Config: c}, beam.CoGroupByKey(s, tallies, assigned))
	peaks := beam.ParDo(s, &peakFn{Config: c}, beam.GroupByKey(s, connects))
	judged := beam.ParDo(s, &stormFn{Config: c}, beam.GroupByKey(s, storms))
	beam.ParDo0(s, &finishFn{Config: c}, beam.Impulse(s), beam.SideInput{Input: partials}, beam.SideInput{Input: kept}, beam.SideInput{Input: keptRecovered},
		beam.SideInput{Input: details}, beam.SideInput{Input: judged}, beam.SideInput{Input: beam.Combine(s, &figuresFn{}, figures)},
		beam.SideInput{Input: named}, beam.SideInput{Input: peaks})
}
