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
