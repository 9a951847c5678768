package analyze

import (
	"math"
	"strings"
	"testing"
	"time"
)

// namedApart is a split check of dir whose device ids were taken apart,
// everything else put back: what PutNames needs is in names and wants.
type namedApart struct {
	parts       []*Partial
	names, kept [][]byte
	wants       map[int][][]byte
}

// takeNamesApart runs every part of s, takes their device ids apart, and
// puts back all but them, as stormaudit-beam does.
func takeNamesApart(t *testing.T, s *Split) namedApart {
	t.Helper()
	var n namedApart
	var figures, cores, tallies, recovered [][]byte
	shards := map[int][][]byte{}
	least := time.Duration(math.MaxInt64)
	for i := range s.Parts() {
		p, err := s.Part(i)
		if err != nil {
			t.Fatal(err)
		}
		if b, err := p.TakeNames(); b != nil || err != nil {
			t.Fatalf("part %d: ids taken while the incidents are in the partial: %v, %v", i, b, err)
		}
		for k, b := range p.TakeFires(3) {
			shards[k] = append(shards[k], b)
		}
		core, tally, err := p.TakeIncidents()
		if err != nil {
			t.Fatal(err)
		}
		if m, ok := p.MedianTTR(); ok {
			least = min(least, m)
		}
		rec, err := p.TakeRecovered()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.TakeNames(); err == nil || !strings.Contains(err.Error(), "before its figures") {
			t.Errorf("part %d: ids taken before the figures: err = %v", i, err)
		}
		f, err := p.TakeFigures()
		if err != nil {
			t.Fatal(err)
		}
		names, err := p.TakeNames()
		if err != nil || names == nil {
			t.Fatalf("part %d: ids %v, %v", i, names, err)
		}
		p = throughBytes(t, s, p) // the taking travels with the partial
		n.parts, n.names = append(n.parts, p), append(n.names, names)
		figures, cores, tallies, recovered = append(figures, f), append(cores, core), append(tallies, tally), append(recovered, rec)
	}
	putIncidents(t, func() *Split { return s }, n.parts, cores, func(part int) []byte { return tallies[part] })
	for i, p := range n.parts {
		kept, err := s.KeepRecovered(recovered[i], least)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.PutRecovered(kept); err != nil {
			t.Fatal(err)
		}
	}
	merged, err := MergeFigures(figures[0], figures[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := n.parts[0].PutFigures(merged); err != nil {
		t.Fatal(err)
	}
	n.wants = map[int][][]byte{}
	for _, shard := range shards {
		k, err := s.KeepFires(shard)
		if err != nil {
			t.Fatal(err)
		}
		byPart, err := s.Wanted(k)
		if err != nil {
			t.Fatal(err)
		}
		for part, w := range byPart {
			n.wants[part] = append(n.wants[part], w)
		}
		n.kept = append(n.kept, k)
	}
	return n
}

// Device ids taken from the partials must come back for every device the
// findings name: starvation's, which the partial and the recovered
// devices carry, and those of the fires KeepFires kept, which Name gives.
func TestNamesMustComeBack(t *testing.T) {
	dir := bucketed(t, 2, "testdata/rules/resync/positive.ndjson")
	s, err := NewSplit(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := takeNamesApart(t, s)
	if len(n.wants[0]) == 0 || len(n.wants[1]) == 0 {
		t.Fatalf("the kept fires name devices of %d parts: expected of both", len(n.wants))
	}
	if _, err := s.Finish(n.parts, n.kept...); err == nil || !strings.Contains(err.Error(), "a kept resync fire (Wanted, Name, PutNames) names, was not put back") {
		t.Errorf("ids not put back: err = %v", err)
	}
	n = takeNamesApart(t, s)
	if _, err := s.Name(n.names[0], n.wants[1]); err == nil || !strings.Contains(err.Error(), "devices of part 1 wanted of the ids of part 0") {
		t.Errorf("another part's devices named: err = %v", err)
	}
	if _, err := s.Name([]byte("garbage"), n.wants[0]); err == nil {
		t.Error("garbage ids named: no error")
	}
	for i, p := range n.parts {
		b, err := s.Name(n.names[i], n.wants[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := n.parts[1-i].PutNames(b); err == nil || !strings.Contains(err.Error(), "of part") {
			t.Errorf("part %d's ids put into part %d: err = %v", i, 1-i, err)
		}
		if err := p.PutNames(b); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Finish(n.parts, n.kept...)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Check(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g, w := describe(got.Findings), describe(want.Findings); g != w || !strings.Contains(w, "resync") {
		t.Errorf("named apart:%s\ncheck:%s", g, w)
	}
}

// putIncidents finds the incidents of parts apart and puts them back, as
// stormaudit-beam does, each step in a worker's Split (worker), the
// part's tallies those of tally; it returns the returns judged.
func putIncidents(t *testing.T, worker func() *Split, parts []*Partial, cores [][]byte, tally func(part int) []byte) int {
	t.Helper()
	byPart, err := worker().Infer(cores)
	if err != nil {
		t.Fatal(err)
	}
	storms := map[int][][]byte{}     // recovery-storm's shares, by incident
	connects := map[int64][][]byte{} // the connects, by shard of time
	for _, p := range parts {
		details, shares, conns, err := worker().Detail(tally(p.Index()), byPart[p.Index()])
		if err != nil {
			t.Fatal(err)
		}
		if err := p.PutIncidents(details); err != nil {
			t.Fatal(err)
		}
		for k, sh := range shares {
			storms[k] = append(storms[k], sh)
		}
		for k, c := range conns {
			connects[k] = append(connects[k], c)
		}
	}
	putPeaks(t, worker(), parts[len(parts)/2], connects) // a shard's worker, each
	for _, shares := range storms {                      // an incident's worker
		j, err := worker().JudgeStorm(shares)
		if err != nil {
			t.Fatal(err)
		}
		if err := parts[len(parts)-1].PutStorm(j); err != nil {
			t.Fatal(err)
		}
	}
	return len(storms)
}

// A partial whose ids were taken and that comes through bytes with no
// map of the ids it names (a hostile one: gob sends no nil map) takes
// the ids put back all the same, and does not panic.
func TestNamesTakenNoneNamed(t *testing.T) {
	dir := bucketed(t, 2, "testdata/rules/resync/positive.ndjson")
	s, err := NewSplit(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Part(0)
	if err != nil {
		t.Fatal(err)
	}
	p.TakeFires(3)
	if _, _, err := p.TakeIncidents(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.TakeFigures(); err != nil {
		t.Fatal(err)
	}
	names, err := p.TakeNames()
	if err != nil || names == nil {
		t.Fatalf("ids %v, %v", names, err)
	}
	p.k.fc.Named = nil // no map at all
	p = throughBytes(t, s, p)
	w, err := encode(&wantedPart{Part: 0, Devs: []int32{0}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Name(names, [][]byte{w})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.PutNames(b); err != nil {
		t.Fatal(err)
	}
	if p.k.fc.id(0) == "" {
		t.Error("the id put back is not there")
	}
}
