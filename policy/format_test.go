package policy

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/stormaudit/stormaudit/internal/jsonstr"
)

// roundTrip parses AppendTOML's and AppendJSON's output of p and returns
// what came back.
func roundTrip(t *testing.T, p Policy) (fromTOML, fromJSON Policy) {
	t.Helper()
	var err error
	out := p.AppendTOML(nil)
	if fromTOML, err = Parse("out.toml", out); err != nil {
		t.Fatalf("parsing AppendTOML's output:\n%s\n%v", out, err)
	}
	out = p.AppendJSON(nil)
	if fromJSON, err = Parse("out.json", out); err != nil {
		t.Fatalf("parsing AppendJSON's output:\n%s\n%v", out, err)
	}
	return fromTOML, fromJSON
}

func TestRoundTripPresets(t *testing.T) {
	for _, name := range PresetNames() {
		p, _ := Preset(name)
		if a, b := roundTrip(t, p); a != p || b != p {
			t.Errorf("%s: round trip changed the policy:\n toml %+v\n json %+v\n want %+v", name, a, b, p)
		}
	}
}

func TestRoundTripParsed(t *testing.T) {
	p, err := Parse("fleet.toml", []byte(fleetTOML+"min_delay_s = 0\nimmediate_first_retry = false\n"))
	if err != nil {
		t.Fatal(err)
	}
	// The declared zeros are written, the defaulted window is not.
	out := string(p.AppendTOML(nil))
	for _, s := range []string{"\nmin_delay_s = 0 ", "\nimmediate_first_retry = false ", "\nclean_session = false "} {
		if !strings.Contains(out, s) {
			t.Errorf("AppendTOML lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "window") {
		t.Errorf("AppendTOML writes the default window:\n%s", out)
	}
	if a, b := roundTrip(t, p); a != p || b != p {
		t.Errorf("round trip changed the policy:\n toml %+v\n json %+v\n want %+v", a, b, p)
	}
}

// TestAppendBuiltInGo: a Policy built in Go, or changed after parsing, is
// written with every field it sets.
func TestAppendBuiltInGo(t *testing.T) {
	p := Policy{Name: "tab\there \"q\" \\ \x01 \x7f é", Delay: Decorrelated, BaseDelayS: 0.5, MaxDelayS: 1e300, StableResetS: 30}
	a, b := roundTrip(t, p)
	for _, q := range []Policy{a, b} {
		q.declared = 0
		if q != p {
			t.Errorf("round trip: got %+v, want %+v", q, p)
		}
	}
	fixed, _ := Preset("fixed")
	fixed.AuthMinDelayS = 60
	if out := fixed.AppendTOML(nil); !strings.Contains(string(out), "\nauth_min_delay_s = 60 ") {
		t.Errorf("a field set after Preset is not written:\n%s", out)
	}
}

func TestAppendQuotedIsTOMLAndJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "a\"b\\c", "\x00\x1f\x7f\b\f\n\r\t", "ünï\u2028code", "\xff\xfe"} {
		q := jsonstr.AppendQuoted(nil, s, tomlString)
		want := string([]rune(s)) // each invalid byte becomes U+FFFD
		var fromJSON string
		if err := json.Unmarshal(q, &fromJSON); err != nil || fromJSON != want {
			t.Errorf("JSON reads %s as %q, %v; want %q", q, fromJSON, err, want)
		}
		var doc struct{ S string }
		if _, err := toml.Decode("s = "+string(q), &doc); err != nil || doc.S != want {
			t.Errorf("TOML reads %s as %q, %v; want %q", q, doc.S, err, want)
		}
	}
}

func TestFormatFloat(t *testing.T) {
	for _, f := range []float64{0, 1, 0.25, 600, 1e-5, 123456.789, 1e15, 9.3e18, 1e21, 5e-324, 1.7976931348623157e308} {
		text := formatFloat(f)
		var doc struct{ X float64 }
		if _, err := toml.Decode("x = "+text, &doc); err != nil || doc.X != f {
			t.Errorf("formatFloat(%v) = %s; TOML reads %v, %v", f, text, doc.X, err)
		}
	}
}

func TestSummary(t *testing.T) {
	p, _ := Preset("paho-go")
	want := "delay exponential, base_delay_s 1, max_delay_s 600, multiplier 2, immediate_first_retry true, keepalive_s 30, clean_session true"
	if got := p.Summary(); got != want {
		t.Errorf("Summary() = %q, want %q", got, want)
	}
}

// TestKeys checks the key table against Policy's tags and the comments.
func TestKeys(t *testing.T) {
	typ := reflect.TypeFor[Policy]()
	if len(keys) != typ.NumField()-1 || len(keys) > 32 {
		t.Fatalf("%d keys for %d fields (the declared set holds 32)", len(keys), typ.NumField())
	}
	for _, k := range keys {
		f := typ.Field(k.field)
		if tag, _, _ := strings.Cut(f.Tag.Get("toml"), ","); tag != k.name {
			t.Errorf("%s: json key %q, toml key %q", f.Name, k.name, tag)
		}
		if comments[k.name] == "" {
			t.Errorf("%s: no comment", k.name)
		}
	}
	if len(comments) != len(keys) {
		t.Errorf("%d comments for %d keys", len(comments), len(keys))
	}
}
