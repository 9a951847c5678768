package analyze

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/ingest"
	"github.com/stormaudit/stormaudit/policy"
	"github.com/stormaudit/stormaudit/simulate"
)

// splitCheck checks dir as a split check whose parts cross processes:
// each part runs in a Split of its own, its partial goes through bytes,
// and a third Split decodes them, in reverse order, and finishes. With
// shards > 0 resync's fires travel apart, in that many shards, each
// filtered by KeepFires.
func splitCheck(t *testing.T, dir string, opts Options, shards int) *Result {
	t.Helper()
	gathered := map[int][][]byte{}
	s, err := NewSplit(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	var parts []*Partial
	var cores [][]byte                                // what finds the incidents, of every part
	tallies := map[int][]byte{}                       // what details them, by part
	recovered := map[int][]byte{}                     // starvation's recovered devices, by part
	var figures [][]byte                              // the fleet's figures, of every part
	names := map[int][]byte{}                         // every device's id, by part
	least, any := time.Duration(math.MaxInt64), false // the least of the parts' median times to recover
	for i := s.Parts() - 1; i >= 0; i-- {
		w, err := NewSplit(dir, opts) // a worker
		if err != nil {
			t.Fatal(err)
		}
		p, err := w.Part(i)
		if err != nil {
			t.Fatal(err)
		}
		if shards > 0 {
			for k, b := range p.TakeFires(shards) {
				gathered[k] = append(gathered[k], b)
			}
			if m, ok := p.MedianTTR(); ok {
				least, any = min(least, m), true
			}
			if recovered[i], err = p.TakeRecovered(); err != nil {
				t.Fatal(err)
			}
			f, err := p.TakeFigures()
			if err != nil {
				t.Fatal(err)
			}
			figures = append(figures, f)
			core, tally, err := p.TakeIncidents()
			if err != nil {
				t.Fatal(err)
			}
			if core != nil {
				cores, tallies[i] = append(cores, core), tally
			}
			if names[i], err = p.TakeNames(); err != nil {
				t.Fatal(err)
			}
		}
		b, err := p.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if p, err = s.Decode(b); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	if len(cores) > 0 { // as stormaudit-beam does: the incidents found apart, detailed in each part's worker
		worker := func() *Split { // a worker of its own for each step
			w, err := NewSplit(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			return w
		}
		judgedStorms += putIncidents(t, worker, parts, cores, func(part int) []byte { return tallies[part] })
		inferredSplits++
	}
	if shards > 0 { // as stormaudit-beam does: starvation's recovered devices kept past the least median
		for _, p := range parts {
			b := recovered[p.Index()]
			if b == nil {
				continue // starvation does not run
			}
			before, _ := decodeRecovered(b)
			if any {
				var err error
				if b, err = s.KeepRecovered(b, least); err != nil {
					t.Fatal(err)
				}
			}
			after, _ := decodeRecovered(b)
			prunedDevices += len(before.Devs) - len(after.Devs)
			if err := p.PutRecovered(b); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(figures) > 0 { // as stormaudit-beam does: merged as a tree, into a partial in the middle
		for len(figures) > 1 {
			var next [][]byte
			for i := 0; i+1 < len(figures); i += 2 {
				m, err := MergeFigures(figures[i], figures[i+1])
				if err != nil {
					t.Fatal(err)
				}
				next = append(next, m)
			}
			if len(figures)%2 == 1 {
				next = append(next, figures[len(figures)-1])
			}
			figures = next
		}
		if err := parts[len(parts)/2].PutFigures(figures[0]); err != nil {
			t.Fatal(err)
		}
	}
	var kept [][]byte
	for _, shard := range gathered {
		b, err := s.KeepFires(shard)
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, b) // nil too: Finish skips what KeepFires kept nothing of
	}
	wants := map[int][][]byte{} // the devices the kept fires name, by part
	for _, b := range kept {
		byPart, err := s.Wanted(b)
		if err != nil {
			t.Fatal(err)
		}
		for part, w := range byPart {
			wants[part] = append(wants[part], w)
		}
	}
	for _, p := range parts {
		if names[p.Index()] == nil {
			continue // the partial kept its ids
		}
		namedSplits++
		b, err := s.Name(names[p.Index()], wants[p.Index()])
		if err != nil {
			t.Fatal(err)
		}
		if err := p.PutNames(b); err != nil {
			t.Fatal(err)
		}
	}
	if shards == 0 {
		res, err := s.Finish(parts, kept...)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	f := s.NewFinisher() // as stormaudit-beam does: given in the order they come (here, last part first)
	for _, p := range parts {
		if err := f.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	res, err := f.Finish(kept...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// namedSplits counts the partials whose device ids splitCheck took
// apart: the tests require some.
var namedSplits int

// prunedDevices counts the devices KeepRecovered dropped in splitCheck:
// the tests require some.
var prunedDevices int

// inferredSplits counts the split checks whose incidents were found
// apart (Infer), judgedStorms the incidents whose return recovery-storm
// judged apart (JudgeStorm): the tests require some.
var inferredSplits, judgedStorms int

// sameResult fails t unless a split check of dir gives what Check gives.
func sameResult(t *testing.T, dir string, opts Options) *Result {
	t.Helper()
	want, err := Check(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, shards := range []int{0, 7} {
		got := splitCheck(t, dir, opts, shards)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s, resync's fires in %d shards: the split check differs from Check:\n%s", dir, shards, resultDiff(got, want))
		}
	}
	return want
}

// resultDiff names the first difference between two results.
func resultDiff(got, want *Result) string {
	for i := range min(len(got.Findings), len(want.Findings)) {
		if !reflect.DeepEqual(got.Findings[i], want.Findings[i]) {
			return fmt.Sprintf("finding %d:\nsplit %+v\ncheck %+v", i, got.Findings[i], want.Findings[i])
		}
	}
	if len(got.Findings) != len(want.Findings) {
		return fmt.Sprintf("%d findings, Check %d", len(got.Findings), len(want.Findings))
	}
	if g, w := got.Summary.Fleet, want.Summary.Fleet; !reflect.DeepEqual(g, w) {
		if len(g.Incidents) == len(w.Incidents) {
			for k := range g.Incidents {
				gv, wv := reflect.ValueOf(g.Incidents[k]), reflect.ValueOf(w.Incidents[k])
				for f := range gv.NumField() {
					if !reflect.DeepEqual(gv.Field(f).Interface(), wv.Field(f).Interface()) {
						return fmt.Sprintf("incident %d, %s:\nsplit %+v\ncheck %+v", k, gv.Type().Field(f).Name, gv.Field(f), wv.Field(f))
					}
				}
			}
		}
		gv, wv := reflect.ValueOf(*g), reflect.ValueOf(*w)
		for f := range gv.NumField() {
			if gv.Type().Field(f).IsExported() && !reflect.DeepEqual(gv.Field(f).Interface(), wv.Field(f).Interface()) {
				return fmt.Sprintf("fleet's %s:\nsplit %+v\ncheck %+v", gv.Type().Field(f).Name, gv.Field(f), wv.Field(f))
			}
		}
		return fmt.Sprintf("fleet:\nsplit %+v\ncheck %+v", g, w)
	}
	return fmt.Sprintf("summary:\nsplit %+v\ncheck %+v", got.Summary, want.Summary)
}

// bucketed ingests logs into a dataset of n buckets (0: flat).
func bucketed(t *testing.T, n int, logs ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), fmt.Sprintf("b%d", n))
	var srcs []ingest.Source
	for _, l := range logs {
		srcs = append(srcs, ingest.Source{Name: l})
	}
	if _, err := ingest.Run(context.Background(), dir, srcs, ingest.Options{Buckets: n, FileRows: 500}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A split check, its parts run apart and merged from bytes, finds what
// Check finds, byte for byte, on every rule's logs (flat, one part, and
// in buckets) and on simulated fleets: and every rule that keeps fleet
// state finds something in them, so that none of that state is lost on
// the way.
func TestSplitSameAsCheck(t *testing.T) {
	found := map[string]int{}
	dirs, err := os.ReadDir("testdata/rules")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		base := filepath.Join("testdata/rules", d.Name())
		var opts Options
		if p, err := policy.Load(filepath.Join(base, "policy.toml")); err == nil {
			opts.Policy = &p
		}
		logs, _ := filepath.Glob(filepath.Join(base, "positive*.ndjson"))
		for _, n := range []int{0, 3} {
			res := sameResult(t, bucketed(t, n, logs...), opts)
			for rule, k := range res.Summary.ByRule {
				found[rule] += k
			}
		}
	}
	// real clients whose clocks were off, with their storms weighed: the
	// losses a split sends apart are moved onto the fleet's clock as
	// Finish moves them
	for _, rec := range []string{"paho-py-clockskew", "paho-py-clockstep"} {
		base := filepath.Join("..", "testdata", "realclients", rec)
		p, err := policy.Load(filepath.Join(base, "policy.toml"))
		if err != nil {
			t.Fatal(err)
		}
		res := sameResult(t, bucketed(t, 3, filepath.Join(base, "clients.ndjson")), Options{Policy: &p})
		if st := res.Summary.Fleet; len(st.ClockOffsets) == 0 || len(st.Incidents) == 0 || st.Incidents[0].Storm == nil {
			t.Errorf("%s: %d clock offsets, %d incidents: the clocks' moves are not tested", rec, len(st.ClockOffsets), len(st.Incidents))
		}
	}
	sims := []struct {
		cfg  simulate.Config
		opts Options
	}{
		{simulate.Config{Devices: 400, Outage: time.Minute, Seed: 9, Policy: *declaredPreset(t, "fixed", "outbox_limit = 20\n"), BadAuth: 0.05, Capacity: 40,
			Flaps: 1, FlapUp: 3 * time.Second, FlapDown: 10 * time.Second, DevicesPerHost: 3, OutboxPerS: 1, AttemptIDs: true},
			Options{Policy: declaredPreset(t, "full-jitter", "startup_spread_s = 30\nconnect_budget_per_s = 20\n")}},
		{simulate.Config{Devices: 300, Outage: 2 * time.Minute, Seed: 4, Policy: *declaredPreset(t, "full-jitter", ""), ColdBoot: true}, Options{}},
	}
	for _, sim := range sims {
		flat, _ := simDataset(t, sim.cfg)
		src := filepath.Join(filepath.Dir(flat), "sim.ndjson")
		for _, n := range []int{0, 5} {
			res := sameResult(t, bucketed(t, n, src), sim.opts)
			for rule, k := range res.Summary.ByRule {
				found[rule] += k
			}
			for _, f := range res.Findings {
				found[f.Kind]++
			}
			for _, in := range res.Summary.Fleet.Incidents {
				if in.Cost[CostDropped].Messages > 0 {
					found["cost"]++
				}
			}
		}
	}
	// a fleet with outboxes a quarter of whose clocks run 4 s ahead: the
	// flushes a split sends apart are moved onto the fleet's clock too
	flat, _ := simDataset(t, sims[0].cfg)
	skewed := skewClocks(t, filepath.Join(filepath.Dir(flat), "sim.ndjson"), 4*time.Second)
	res := sameResult(t, bucketed(t, 5, skewed), sims[0].opts)
	if st := res.Summary.Fleet; len(st.ClockOffsets) < 50 || res.Summary.ByRule["backlog"] == 0 || st.FlushPeak == 0 {
		t.Errorf("a skewed fleet with outboxes: %d clock offsets, %d backlog findings, flush peak %d: the flushes' moves are not tested",
			len(st.ClockOffsets), res.Summary.ByRule["backlog"], st.FlushPeak)
	}
	var missing []string
	for _, r := range Rules() {
		if _, ok := r.(merger); ok && found[r.Info().ID] == 0 {
			missing = append(missing, r.Info().ID)
		}
	}
	if len(missing) > 0 {
		t.Errorf("rules with fleet state that found nothing here, so untested by a split: %s", strings.Join(missing, ", "))
	}
	if prunedDevices == 0 {
		t.Error("KeepRecovered dropped no device: the split checks do not test it")
	}
	for _, kind := range []string{"backlog/flush-storm", "recovery-storm/bunched-connects", "cost"} {
		if found[kind] == 0 {
			t.Errorf("no %s in the simulated fleets: its return judged apart is not tested", kind)
		}
	}
	if peakShards == 0 {
		t.Error("no split check found the busiest windows of connects apart (Peaks): the split checks do not test them")
	}
	if namedSplits == 0 {
		t.Error("no split check took its device ids apart (TakeNames): the split checks do not test them")
	}
	if inferredSplits == 0 || judgedStorms == 0 {
		t.Errorf("%d split checks found their incidents apart (Infer), %d incidents were judged apart (JudgeStorm): the split checks do not test them", inferredSplits, judgedStorms)
	}
	t.Logf("findings by rule: %v", found)
}

// Finish wants every part once.
func TestSplitFinishNeedsEveryPart(t *testing.T) {
	dir := bucketed(t, 3, "testdata/rules/starvation/positive.ndjson")
	s, err := NewSplit(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p0, err := s.Part(0)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := s.Part(2)
	if err != nil {
		t.Fatal(err)
	}
	for _, parts := range [][]*Partial{nil, {p0}, {p0, p2}, {p0, p0, p2}} {
		if _, err := s.Finish(parts); err == nil || !strings.Contains(err.Error(), "part") {
			t.Errorf("%d parts: err = %v, want one naming the missing part", len(parts), err)
		}
	}
	if _, err := s.Part(3); err == nil {
		t.Error("part 3 of 3: no error")
	}
	if _, err := s.Decode([]byte("not a partial")); err == nil {
		t.Error("decoding garbage: no error")
	}
	if _, err := s.KeepFires([][]byte{{0, 1, 2}}); err == nil {
		t.Error("keeping garbage fires: no error")
	}
	p1, err := s.Part(1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Finish([]*Partial{p0, p1, p2}, []byte{0}); err == nil || !strings.Contains(err.Error(), "no part's were taken") {
		t.Errorf("fires given, none taken: err = %v", err)
	}
	p1.TakeFires(3)
	if _, err := s.Finish([]*Partial{p0, p1, p2}); err == nil || !strings.Contains(err.Error(), "fires of part 1 were taken and those of part 0 were not") {
		t.Errorf("one part's fires taken: err = %v", err)
	}
	p0.TakeFires(3)
	p2.TakeFires(3)
	// a fire that names a device its part did not read
	bad := appendFire(binary.AppendUvarint(nil, 3), shardFire{part: 1, f: fire{Dev: 1 << 20}})
	if _, err := s.Finish([]*Partial{p0, p1, p2}, bad); err == nil || !strings.Contains(err.Error(), "device 1048576 of part 1") {
		t.Errorf("a fire of no device: err = %v", err)
	}
	if _, err := s.KeepFires([][]byte{binary.AppendUvarint(nil, 3), binary.AppendUvarint(nil, 4)}); err == nil || !strings.Contains(err.Error(), "as many shards") {
		t.Errorf("shards of two counts: err = %v", err)
	}
	// the errors left the partials as they were: they still finish
	want, err := Check(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Finish([]*Partial{p2, p0, p1})
	if err != nil || !reflect.DeepEqual(got.Summary, want.Summary) {
		t.Errorf("after the errors: %v, summary %+v, want %+v", err, got.Summary, want.Summary)
	}
	// a partial made with other options is refused
	b, err := p0.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewSplit(dir, Options{Window: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Decode(b); err == nil || !strings.Contains(err.Error(), "other options") {
		t.Errorf("a partial of another window: err = %v", err)
	}
	// nor may partials of another Split be finished without going through bytes
	q0, err := other.Part(0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Finish([]*Partial{q0, p1, p2}); err == nil || !strings.Contains(err.Error(), "other options") {
		t.Errorf("a partial of another Split: err = %v", err)
	}
}

// A jittered fleet's timer fires almost all have delays of their own:
// KeepFires drops them, so that the place that finishes gets next to none.
func TestKeepFiresDropsDistinctDelays(t *testing.T) {
	flat, _ := simDataset(t, simulate.Config{Devices: 500, Outage: time.Minute, Seed: 2, Policy: *declaredPreset(t, "full-jitter", "")})
	src := filepath.Join(filepath.Dir(flat), "sim.ndjson")
	s, err := NewSplit(bucketed(t, 4, src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	shards := map[int][][]byte{}
	taken := 0
	for i := range s.Parts() {
		p, err := s.Part(i)
		if err != nil {
			t.Fatal(err)
		}
		for k, b := range p.TakeFires(16) {
			shards[k] = append(shards[k], b)
			_, fs, _ := readFires(b)
			taken += len(fs)
		}
	}
	kept := 0
	for _, shard := range shards {
		b, err := s.KeepFires(shard)
		if err != nil {
			t.Fatal(err)
		}
		_, fs, _ := readFires(b)
		kept += len(fs)
	}
	if taken < 1000 || kept*100 > taken {
		t.Errorf("%d fires taken, %d kept: want over 1000 taken and under 1%% kept", taken, kept)
	}
}

// readFires never panics, and reads back what appendFire wrote.
func FuzzReadFires(f *testing.F) {
	f.Add(appendFire([]byte{7}, shardFire{part: 3, attempt: 2, seq: 7, f: fire{Delay: 1.5, At: -9, Dev: 4, Ref: Ref{File: 1, Source: 2, Row: 3, Line: 4}}}))
	f.Add([]byte{0, 1, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		shards, fs, err := readFires(b)
		if err != nil {
			return
		}
		again := binary.AppendUvarint(nil, uint64(shards))
		for _, x := range fs {
			again = appendFire(again, x)
		}
		k, back, err := readFires(again)
		again2 := binary.AppendUvarint(nil, uint64(k))
		for _, x := range back {
			again2 = appendFire(again2, x)
		}
		if err != nil || k != shards || !bytes.Equal(again, again2) { // bytes: a NaN delay is not equal to itself
			t.Fatalf("%d fires in %d shards read back as %d in %d: %v", len(fs), shards, len(back), k, err)
		}
	})
}

// A partial that names a device by an ordinal beyond its devices, or
// counts them otherwise than its list of ids, is refused when decoded:
// Finish indexes the list by them.
func TestDecodeRefusesStrangeOrdinals(t *testing.T) {
	dir := bucketed(t, 2, "testdata/rules/starvation/positive.ndjson")
	s, err := NewSplit(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		harm func(k *checker) bool // false: nothing to harm in the partial
		want string
	}{
		{"a loss beyond the devices", func(k *checker) bool {
			if len(k.fc.Inc.Losses) == 0 {
				return false
			}
			k.fc.Inc.Losses[0].Dev = 1 << 20
			return true
		}, "a loss names device 1048576"},
		{"a starving device beyond the devices", func(k *checker) bool {
			for _, r := range k.rules {
				if r, ok := r.(*starvation); ok && len(r.Devs) > 0 {
					r.Devs[0].Dev = -1
					return true
				}
			}
			return false
		}, "starvation names device -1"},
		{"a rule counting other devices", func(k *checker) bool {
			k.resync().Devices += 7
			return true
		}, "resync counts"},
		{"ids missing", func(k *checker) bool {
			k.fc.Names = k.fc.Names[:len(k.fc.Names)-1]
			return true
		}, "device ids for"},
	} {
		p, err := s.Part(0)
		if err != nil {
			t.Fatal(err)
		}
		if !tc.harm(p.k) {
			t.Fatalf("%s: the partial has nothing to harm", tc.name)
		}
		b, err := p.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Decode(b); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

// Starvation's recovered devices taken from a partial must come back, to
// the partial they came from, once.
func TestRecoveredMustComeBack(t *testing.T) {
	dir := bucketed(t, 2, "testdata/rules/starvation/positive.ndjson")
	s, err := NewSplit(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var parts []*Partial
	var recs [][]byte
	for i := range s.Parts() {
		p, err := s.Part(i)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := p.TakeRecovered()
		if err != nil || rec == nil {
			t.Fatalf("part %d: recovered %v, %v", i, rec, err)
		}
		p = throughBytes(t, s, p) // the taking travels with the partial
		parts, recs = append(parts, p), append(recs, rec)
	}
	if _, err := s.Finish(parts); err == nil || !strings.Contains(err.Error(), "not put back") {
		t.Errorf("recovered devices not put back: err = %v", err)
	}
	if err := parts[0].PutRecovered(recs[1]); err == nil || !strings.Contains(err.Error(), "of part 1") {
		t.Errorf("another part's recovered devices: err = %v", err)
	}
	if err := parts[0].PutRecovered([]byte("garbage")); err == nil {
		t.Error("garbage put back: no error")
	}
	for i, p := range parts {
		if err := p.PutRecovered(recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := parts[0].PutRecovered(recs[0]); err == nil {
		t.Error("recovered devices put back twice: no error")
	}
	want, err := Check(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Finish(parts)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("put back: %v; the result differs from Check's: %v", err, err == nil)
	}
}

// The incidents taken from partials must come back as details of the
// same incidents, from the part's own share: Finish refuses partials
// whose incidents were taken and not put back, PutIncidents refuses
// another part's share, garbage and a second putting back, and Infer
// wants every part's once.
func TestIncidentsMustComeBack(t *testing.T) {
	dir := bucketed(t, 2, "testdata/rules/recovery-storm/positive.ndjson")
	s, err := NewSplit(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var parts []*Partial
	var cores, tallies [][]byte
	for i := range s.Parts() {
		p, err := s.Part(i)
		if err != nil {
			t.Fatal(err)
		}
		core, tally, err := p.TakeIncidents()
		if err != nil || core == nil || tally == nil {
			t.Fatalf("part %d: incidents %v, %v, %v", i, core, tally, err)
		}
		tallies = append(tallies, tally)
		p = throughBytes(t, s, p) // the taking travels with the partial
		parts, cores = append(parts, p), append(cores, core)
	}
	if _, err := s.Finish(parts); err == nil || !strings.Contains(err.Error(), "not put back") {
		t.Errorf("incidents not put back: err = %v", err)
	}
	if _, err := s.Infer(slices.Clone(cores[:1])); err == nil { // Infer drops what it decodes
		t.Error("Infer of one part of two: no error")
	}
	if _, err := s.Infer([][]byte{cores[0], cores[0]}); err == nil {
		t.Error("Infer of part 0 twice: no error")
	}
	byPart, err := s.Infer(cores)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := s.Detail(tallies[0], byPart[1]); err == nil || !strings.Contains(err.Error(), "of part 1") {
		t.Errorf("another part's incidents: err = %v", err)
	}
	if _, _, _, err := s.Detail(tallies[0], []byte("garbage")); err == nil {
		t.Error("garbage detailed: no error")
	}
	for _, bad := range []assignedLoss{{Inc: 0, Loss: lossEvent{Dev: 1 << 20}}, {Inc: 99, Loss: lossEvent{}}, {Inc: 0, Loss: lossEvent{MetAt: 1 << 30, MetN: 3}}} {
		a, err := encode(&incidentAssign{Part: 0, Spans: make([]incidentSpan, 1), Summary: &inferredSummary{Incidents: make([]Incident, 1)}, Losses: []assignedLoss{bad}})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := s.Detail(tallies[0], a); err == nil {
			t.Errorf("a loss %+v detailed: no error", bad)
		}
	}
	var details [][]byte
	storms := map[int][][]byte{}
	connects := map[int64][][]byte{}
	for i := range parts {
		d, shares, conns, err := s.Detail(tallies[i], byPart[i])
		if err != nil {
			t.Fatal(err)
		}
		details = append(details, d)
		for k, sh := range shares {
			storms[k] = append(storms[k], sh)
		}
		for k, c := range conns {
			connects[k] = append(connects[k], c)
		}
	}
	if len(storms) == 0 {
		t.Fatal("no incident's return to judge: recovery-storm's split is not tested")
	}
	if err := parts[0].PutIncidents(details[1]); err == nil || !strings.Contains(err.Error(), "of part 1") {
		t.Errorf("another part's details: err = %v", err)
	}
	if err := parts[0].PutIncidents([]byte("garbage")); err == nil {
		t.Error("garbage put back: no error")
	}
	for i, p := range parts {
		if err := p.PutIncidents(details[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := parts[0].PutIncidents(details[0]); err == nil {
		t.Error("incidents put back twice: no error")
	}
	if _, err := s.Finish(parts); err == nil || !strings.Contains(err.Error(), "not judged") {
		t.Errorf("recovery-storm's incidents not judged: err = %v", err)
	}
	putPeaks(t, s, parts[0], connects)
	for k, shares := range storms {
		if _, err := s.JudgeStorm(append(slices.Clone(shares), shares[0])); err == nil { // JudgeStorm drops what it decodes
			t.Errorf("incident %d: a part's losses judged twice: no error", k)
		}
		var early returnShare // draws that end before the return: no density to slide a window over
		if err := decode(shares[0], &early); err != nil || early.Storm == nil {
			t.Fatalf("incident %d: %v, a share without recovery-storm's part", k, err)
		}
		early.Storm.MaxHi = early.Back - 1
		if b, err := encode(&early); err != nil {
			t.Fatal(err)
		} else if _, err := s.JudgeStorm([][]byte{b}); err == nil {
			t.Errorf("incident %d: draws ending before the return judged: no error", k)
		}
		j, err := s.JudgeStorm(shares)
		if err != nil {
			t.Fatal(err)
		}
		if err := parts[1].PutStorm(j); err != nil {
			t.Fatal(err)
		}
	}
	want, err := Check(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Summary.Fleet.Incidents) == 0 {
		t.Fatal("no incident: the test tests nothing")
	}
	got, err := s.Finish(parts)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("put back: %v; the result differs from Check's: %v", err, err == nil)
	}
}

// throughBytes returns p encoded and decoded by s, as a partial crosses
// processes.
func throughBytes(t *testing.T, s *Split, p *Partial) *Partial {
	t.Helper()
	b, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if p, err = s.Decode(b); err != nil {
		t.Fatal(err)
	}
	return p
}

// putPeaks finds the busiest windows of each shard of connects (Peaks)
// and puts them into p, as stormaudit-beam does; it requires a shard.
func putPeaks(t *testing.T, s *Split, p *Partial, connects map[int64][][]byte) {
	t.Helper()
	for _, shard := range connects {
		b, err := s.Peaks(shard)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.PutPeaks(b); err != nil {
			t.Fatal(err)
		}
		peakShards++
	}
}

// peakShards counts the shards of connects the split checks found the
// busiest windows of apart: the tests require some.
var peakShards int

// skewClocks writes a copy of the simulated log src in which every fourth
// device's clock runs by ahead, and returns its path.
func skewClocks(t *testing.T, src string, by time.Duration) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	at := regexp.MustCompile(`"recorded_at":"([^"]+)"`)
	dev := regexp.MustCompile(`"client_id":"dev-(\d+)"`)
	var out []byte
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if m := dev.FindSubmatch(line); m != nil {
			if n, _ := strconv.Atoi(string(m[1])); n%4 == 0 {
				line = at.ReplaceAllFunc(line, func(f []byte) []byte {
					ts, err := time.Parse(time.RFC3339Nano, string(at.FindSubmatch(f)[1]))
					if err != nil {
						t.Fatal(err)
					}
					return []byte(`"recorded_at":"` + ts.Add(by).Format(time.RFC3339Nano) + `"`)
				})
			}
		}
		out = append(out, line...)
	}
	dst := filepath.Join(t.TempDir(), "skewed.ndjson")
	if err := os.WriteFile(dst, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}
