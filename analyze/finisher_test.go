package analyze

import (
	"strings"
	"testing"
)

// A Finisher takes the parts in any order, each once, and finishes only
// with every one; Check's one partial of every part stands alone.
func TestFinisherWantsEveryPartOnce(t *testing.T) {
	dir := bucketed(t, 3, "testdata/rules/starvation/positive.ndjson")
	s, err := NewSplit(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	part := func(i int) *Partial {
		p, err := s.Part(i)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	f := s.NewFinisher()
	if err := f.Add(part(2)); err != nil {
		t.Fatal(err)
	}
	if err := f.Add(part(2)); err == nil || !strings.Contains(err.Error(), "part 2 given twice") {
		t.Errorf("part 2 twice: err = %v", err)
	}
	if err := f.Add(part(0)); err != nil {
		t.Fatal(err)
	}
	if err := f.Add(part(0)); err == nil || !strings.Contains(err.Error(), "part 0 given twice") {
		t.Errorf("part 0 twice, after it merged: err = %v", err)
	}
	if len(f.early) != 1 || f.next != 1 {
		t.Errorf("parts 2 and 0 given: %d waiting, part %d next; want 1 waiting (part 2), part 1 next", len(f.early), f.next)
	}
	if _, err := f.Finish(); err == nil || !strings.Contains(err.Error(), "expected the partials of 3 parts, found 2") {
		t.Errorf("part 1 missing: err = %v", err)
	}
	if err := f.Add(part(1)); err != nil {
		t.Fatal(err)
	}
	if len(f.early) != 0 || f.next != 3 {
		t.Errorf("every part given: %d waiting, part %d next", len(f.early), f.next)
	}
	got, err := f.Finish()
	if err != nil {
		t.Fatal(err)
	}
	want, err := Check(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g, w := describe(got.Findings), describe(want.Findings); g != w || !strings.Contains(w, "starvation") {
		t.Errorf("finished in any order:%s\ncheck:%s", g, w)
	}
}

// FinishInPasses reads its source at most FinishPasses times, whatever
// the window asked for, and finishes as Check does.
func TestFinishInPassesBoundsPasses(t *testing.T) {
	dir := bucketed(t, 17, "testdata/rules/starvation/positive.ndjson")
	s, err := NewSplit(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var parts [][]byte
	for i := range s.Parts() {
		p, err := s.Part(i)
		if err != nil {
			t.Fatal(err)
		}
		b, err := p.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, b)
	}
	passes := 0
	each := func(yield func(int, []byte) error) error {
		passes++
		for i := len(parts) - 1; i >= 0; i-- { // the last part first
			if err := yield(i, parts[i]); err != nil {
				return err
			}
		}
		return nil
	}
	got, err := s.FinishInPasses(1, each, func(*Partial) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if passes > FinishPasses || s.Parts() <= FinishPasses {
		t.Errorf("%d parts read in %d passes: want more than %d parts, in at most %d passes", s.Parts(), passes, FinishPasses, FinishPasses)
	}
	want, err := Check(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g, w := describe(got.Findings), describe(want.Findings); g != w {
		t.Errorf("finished in passes:%s\ncheck:%s", g, w)
	}
}
