package policy

import (
	"bufio"
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// FuzzDraw checks, for every valid policy built from the fuzzed
// parameters, that Ceiling, Bounds and Draw are finite and >= 0, that
// lo <= hi <= Ceiling, and that Draw lies in Bounds for u at 0, just
// below 1, and as fuzzed (even outside [0, 1), and NaN). The seed corpus
// is in testdata/fuzz/FuzzDraw.
func FuzzDraw(f *testing.F) {
	f.Fuzz(func(t *testing.T, rule uint8, base, cap, mult, minDelay float64, immediate bool, attempt int64, prev, u float64) {
		base, cap = math.Abs(base), math.Abs(cap)
		p := Policy{
			Delay:               rules[int(rule)%len(rules)],
			BaseDelayS:          min(base, cap),
			MaxDelayS:           max(base, cap),
			Multiplier:          1 + math.Abs(mult),
			MinDelayS:           math.Abs(minDelay),
			ImmediateFirstRetry: immediate,
		}
		if p.Validate() != nil {
			return
		}
		finite := func(x float64) bool { return x >= 0 && !math.IsInf(x, 1) }
		c := p.Ceiling(attempt)
		lo, hi := p.Bounds(attempt, prev)
		if !finite(c) || !finite(lo) || !finite(hi) || lo > hi || hi > c {
			t.Fatalf("%+v attempt %d prev %v: Ceiling %v, Bounds [%v, %v]", p, attempt, prev, c, lo, hi)
		}
		for _, u := range []float64{0, math.Nextafter(1, 0), u, u - math.Floor(u)} {
			if d := p.Draw(attempt, prev, u); !finite(d) || d < lo || d > hi {
				t.Fatalf("%+v attempt %d prev %v u %v: Draw = %v, outside [%v, %v]", p, attempt, prev, u, d, lo, hi)
			}
		}
	})
}

// FuzzParse checks that Parse never panics, that its errors are a
// *FieldError or a *SyntaxError, and that a policy it accepts comes back
// equal from AppendTOML and from AppendJSON. Each input is parsed as TOML
// and as JSON (the choice by content is one of the two). The seed corpus
// is in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, name := range []string{"fuzz.toml", "fuzz.json"} {
			p, err := Parse(name, data)
			if err != nil {
				var fe *FieldError
				var se *SyntaxError
				if !errors.As(err, &fe) && !errors.As(err, &se) {
					t.Fatalf("%s: error %T %v is neither a *FieldError nor a *SyntaxError", name, err, err)
				}
				if !strings.HasPrefix(err.Error(), name+":") {
					t.Fatalf("%s: error %q does not name the file", name, err)
				}
				continue
			}
			if err := p.Validate(); err != nil || !p.Declared("delay") {
				t.Fatalf("%s: Parse accepted %+v, Validate: %v", name, p, err)
			}
			a, b := roundTrip(t, p)
			if a != p || b != p {
				t.Fatalf("%s: round trip changed the policy:\n toml %+v\n json %+v\n want %+v\n%s", name, a, b, p, p.AppendTOML(nil))
			}
		}
	})
}

// TestFuzzCorpusLoads fails when a committed seed corpus is missing or
// unreadable, so that the fuzz tests never silently run on nothing, and
// checks that enough seeds of FuzzParse are valid policies to exercise the
// round trip.
func TestFuzzCorpusLoads(t *testing.T) {
	for target, least := range map[string]int{"FuzzDraw": 10, "FuzzParse": 20} {
		files, _ := filepath.Glob(filepath.Join("testdata/fuzz", target, "*"))
		if len(files) < least {
			t.Errorf("%s: %d seeds, want at least %d", target, len(files), least)
		}
		valid := 0
		for _, name := range files {
			values, err := readSeed(name)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if target == "FuzzParse" && len(values) == 1 {
				if data, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(values[0], "[]byte("), ")")); err == nil {
					if _, err := Parse("seed", []byte(data)); err == nil {
						valid++
					}
				}
			}
		}
		if target == "FuzzParse" && valid < 5 {
			t.Errorf("FuzzParse: %d seeds are valid policies, want at least 5", valid)
		}
	}
}

// readSeed reads a corpus file in the "go test fuzz v1" format and
// returns its value lines.
func readSeed(name string) ([]string, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	if !sc.Scan() || sc.Text() != "go test fuzz v1" {
		return nil, errors.New(`expected the header "go test fuzz v1"`)
	}
	var values []string
	for sc.Scan() {
		values = append(values, sc.Text())
	}
	return values, sc.Err()
}
