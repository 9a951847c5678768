package analyze

import (
	"strings"
	"testing"
)

// The fleet's figures taken from the partials must come back, every
// part's once, merged, into one partial; and the check is then the same.
func TestFiguresMustComeBack(t *testing.T) {
	dir := bucketed(t, 3, "testdata/rules/starvation/positive.ndjson")
	s, err := NewSplit(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	parts := func() ([]*Partial, [][]byte) {
		var ps []*Partial
		var fs [][]byte
		for i := range s.Parts() {
			p, err := s.Part(i)
			if err != nil {
				t.Fatal(err)
			}
			f, err := p.TakeFigures()
			if err != nil {
				t.Fatal(err)
			}
			p = throughBytes(t, s, p) // the taking travels with the partial
			ps, fs = append(ps, p), append(fs, f)
		}
		return ps, fs
	}
	merged := func(fs ...[]byte) []byte {
		t.Helper()
		m := fs[0]
		for _, f := range fs[1:] {
			var err error
			if m, err = MergeFigures(m, f); err != nil {
				t.Fatal(err)
			}
		}
		return m
	}
	ps, fs := parts()
	if _, err := s.Finish(ps); err == nil || !strings.Contains(err.Error(), "figures of parts [] put back") {
		t.Errorf("figures not put back: err = %v", err)
	}
	if _, err := MergeFigures(fs[0], fs[0]); err == nil || !strings.Contains(err.Error(), "merged twice") {
		t.Errorf("a part's figures merged twice: err = %v", err)
	}
	if _, err := MergeFigures(fs[0], []byte("garbage")); err == nil {
		t.Error("garbage merged: no error")
	}
	if err := ps[0].PutFigures(merged(fs[0], fs[1])); err != nil {
		t.Fatal(err)
	}
	if err := ps[0].PutFigures(merged(fs[2])); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("figures put twice: err = %v", err)
	}
	if _, err := s.Finish(ps); err == nil || !strings.Contains(err.Error(), "expected those of parts [0 1 2]") {
		t.Errorf("a part's figures missing: err = %v", err)
	}
	ps, fs = parts()
	p, err := s.Part(0) // its figures not taken
	if err != nil {
		t.Fatal(err)
	}
	if err := p.PutFigures(fs[0]); err == nil || !strings.Contains(err.Error(), "not taken") {
		t.Errorf("figures put into a partial they were not taken from: err = %v", err)
	}
	if _, err := s.Finish([]*Partial{p, ps[1], ps[2]}); err == nil || !strings.Contains(err.Error(), "figures of part 1 were taken and those of part 0 were not") {
		t.Errorf("figures taken from some parts: err = %v", err)
	}
	var bad figuresPart // every part's, but a device more than the parts read
	if err := decode(merged(fs[2], fs[0], fs[1]), &bad); err != nil {
		t.Fatal(err)
	}
	bad.Devices, bad.IDs = bad.Devices+1, append(bad.IDs, "zz-not-read")
	b, err := encode(&bad)
	if err != nil {
		t.Fatal(err)
	}
	if err := ps[1].PutFigures(b); err != nil {
		t.Fatal(err)
	}
	if _, err := ps[1].MarshalBinary(); err == nil {
		t.Error("a partial with the figures put back encoded: no error")
	}
	if _, err := s.Finish(ps); err == nil || !strings.Contains(err.Error(), "devices put back, and the parts read") {
		t.Errorf("figures of a device more: err = %v", err)
	}
	ps, fs = parts()
	if err := ps[2].PutFigures(merged(fs[2], fs[0], fs[1])); err != nil {
		t.Fatal(err)
	}
	got, err := s.Finish(ps)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Check(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g, w := got.Summary.Fleet.TTR50, want.Summary.Fleet.TTR50; g != w || len(got.Findings) != len(want.Findings) || len(want.Findings) == 0 {
		t.Errorf("figures merged: TTR50 %v and %d findings, check has %v and %d", g, len(got.Findings), w, len(want.Findings))
	}
}
