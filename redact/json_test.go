package redact

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

func scanJSONHits(field, object string) []Hit {
	var hs []Hit
	ScanJSON(field, object, func(h Hit) { hs = append(hs, h) })
	return hs
}

func TestScanJSON(t *testing.T) {
	type H = Hit
	for _, tt := range []struct {
		object string
		want   []Hit
	}{
		{`{"fw":"1.4.2","rssi":-71}`, nil},
		{`{}`, nil},
		{`{"mqtt":{"password":"hunter2","user":"dev"}}`, []H{{"extra.mqtt.password", Password}}},
		{`{"brokers":[{"url":"mqtt://u:p@h"},{"url":"mqtt://h"}]}`, []H{{"extra.brokers[].url", URLPassword}}},
		{`{"a":[[{"b":["aa:bb:cc:dd:ee:ff"]}]]}`, []H{{"extra.a[][].b[]", MAC}}},
		// Any JSON value under a credential key, not looked into.
		{`{"password":1234}`, []H{{"extra.password", Password}}},
		{`{"credentials":{"user":"u","pass":"p","mac":"aa:bb:cc:dd:ee:ff"}}`, []H{{"extra.credentials", Password}}},
		{`{"tokens":["a","b"]}`, []H{{"extra.tokens", Password}}},
		{`{"password":null,"token":"","secret":true,"api_key":false,"pwd":{},"pass":[ ],"passwd":"****"}`, nil},
		{`{"token":"secret-0123456789abcdef"}`, nil},
		{`{"token_type":"Bearer","token_expires_in":3600,"password_set":true}`, nil},
		// Keys and values are compared unescaped.
		{`{"pass\u0077ord":"x"}`, []H{{"extra.password", Password}}},
		{`{"m":"aa\u003abb:cc:dd:ee:ff"}`, []H{{"extra.m", MAC}}},
		{`{"cert":"` + strings.ReplaceAll(certPEM, "\n", `\n`) + `"}`, []H{{"extra.cert", PEM}}},
		{`{"auth":"Bearer ` + jwtIO + `"}`, []H{{"extra.auth", Bearer}}},
		{`{"auth":"` + jwtIO + `"}`, []H{{"extra.auth", JWT}}},
		// Member names are scanned, and shown as "*".
		{`{"devices":{"aa:bb:cc:dd:ee:ff":{"rssi":-70}}}`, []H{{"extra.devices.*", MAC}}},
		{`{"mqtt://u:p@h":"mqtt://v:q@h"}`, []H{{"extra.*", URLPassword}, {"extra.*", URLPassword}}},
		{`{"a.b":{"c\"d":"aa:bb:cc:dd:ee:ff"}}`, []H{{`extra.a.b.c"d`, MAC}}},
		// Other JSON values than objects.
		{`[{"token":"t"}]`, []H{{"extra[].token", Password}}},
		{`"dev-aa:bb:cc:dd:ee:ff"`, []H{{"extra", MAC}}},
		{` 5 `, nil},
		// Not JSON: a plain string.
		{`{"password":"x"`, nil},
		{`{"u":"mqtt://a:b@h"`, []H{{"extra", URLPassword}}},
		{`{"u":"mqtt://a:b@h"} x`, []H{{"extra", URLPassword}}},
		{"{\"u\":\"mqtt://a:b@h\x01\"}", []H{{"extra", URLPassword}}},
	} {
		if got := scanJSONHits("extra", tt.object); !slices.Equal(got, tt.want) {
			t.Errorf("ScanJSON(%s) = %v, want %v", tt.object, got, tt.want)
		}
	}
}

func TestScanJSONPaths(t *testing.T) {
	for _, tt := range []struct {
		field, object string
		want          []Hit
	}{
		{"", `{"a":{"password":1}}`, []Hit{{"a.password", Password}}},
		{"", `[{"password":1}]`, []Hit{{"[].password", Password}}},
		{"envelope", `{"a":{"password":1}}`, []Hit{{"envelope.a.password", Password}}},
		{"password", `"x"`, []Hit{{"password", Password}}},
		{"password", `{"a":1}`, []Hit{{"password", Password}}},
		{"password", `null`, nil},
	} {
		if got := scanJSONHits(tt.field, tt.object); !slices.Equal(got, tt.want) {
			t.Errorf("ScanJSON(%q, %s) = %v, want %v", tt.field, tt.object, got, tt.want)
		}
	}
	// Paths deeper than the walker keeps inline.
	deep := strings.Repeat(`{"a":`, 40) + `{"password":1}` + strings.Repeat(`}`, 40)
	want := "extra" + strings.Repeat(".a", 40) + ".password"
	if got := scanJSONHits("extra", deep); !slices.Equal(got, []Hit{{want, Password}}) {
		t.Errorf("ScanJSON(deep) = %v, want %s", got, want)
	}
}

// TestValidAgreesWithEncodingJSON pins the walker's grammar to
// json.Valid's: a text one finds valid and the other not would be
// redacted as a plain string, or give invalid JSON.
func TestValidAgreesWithEncodingJSON(t *testing.T) {
	texts := []string{
		``, ` `, `{}`, `[]`, `""`, `0`, `-0`, `01`, `1.`, `.5`, `1e5`, `1E+5`, `1e`,
		`-`, `--1`, `1.5e-3`, `true`, `tru`, `truex`, `null`, `nul`, `{"a":1,}`,
		`[1,]`, `{"a" 1}`, `{"a":1 "b":2}`, `{a:1}`, `{"a":1}}`, `[1]]`, `"\u12"`,
		`"\u12G4"`, `"\x"`, `"\/"`, "\"\t\"", "\"\x7f\"", "\"\xff\xfe\"", `"\ud800"`,
		" {\r\n\t\"a\" : [ 1 , 2 ] } ", `{"a":[{"b":{}}]}`, `[[[]]]`, `[[]`,
		"\ufeff{}", `{"a":1}{}`, `"a" "b"`, `[1 2]`, `{"":""}`, `{"a":-}`, `[-1.0e+10]`,
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000),
		strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
	}
	for _, s := range texts {
		w := walker{src: s}
		if got, want := w.root(), json.Valid([]byte(s)); got != want {
			name := s
			if len(name) > 40 {
				name = name[:40] + "…"
			}
			t.Errorf("walker finds %q valid: %v, json.Valid: %v", name, got, want)
		}
	}
}

func TestScanJSONDeepNesting(t *testing.T) {
	// Past encoding/json's limit the text is not JSON: scanned as a
	// plain string, without a stack overflow.
	s := strings.Repeat(`{"a":`, 100000) + `"mqtt://u:p@h"` + strings.Repeat("}", 100000)
	if got := scanJSONHits("extra", s); !slices.Equal(got, []Hit{{"extra", URLPassword}}) {
		t.Errorf("ScanJSON(deep) = %v", got)
	}
}

func TestScanJSONLongPaths(t *testing.T) {
	long := strings.Repeat("n", 1000)
	esc := strings.Repeat(`\u0041`, 1000)
	for _, tt := range []struct{ object, want string }{
		{`{"` + long + `":{"password":1}}`, "extra." + long[:250] + "…"},
		{`{"` + esc + `":{"password":1}}`, "extra." + strings.Repeat("A", 44) + "…"},
		{`{"é` + long + `":{"password":1}}`, "extra.é" + long[:248] + "…"},
		{strings.Repeat(`[`, 200) + `{"password":1}` + strings.Repeat(`]`, 200), ("extra" + strings.Repeat("[]", 200))[:256] + "…"},
	} {
		got := scanJSONHits("extra", tt.object)
		if len(got) != 1 || got[0].Field != tt.want {
			t.Errorf("ScanJSON(%.40s…) = %v, want a hit at %s", tt.object, got, tt.want)
		}
	}
}

// TestScanLinear feeds the finders values built to make a careless one
// quadratic: each megabyte must take well under the seconds a quadratic
// search would.
func TestScanLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("megabyte inputs")
	}
	const mib = 1 << 20
	fill := func(unit string) string { return strings.Repeat(unit, mib/len(unit)) }
	r := New(nil)
	for _, v := range []string{
		fill("-----BEGIN X-----"),
		fill("-----BEGIN X-----a-----END Y-----"),
		fill("-----BEGIN X-----MIIBszCCAVmgAwIBAgIUW1 "),
		fill("mqtt://"), fill("mqtt://u:p@"), fill("eyJ."), fill("Bearer "),
		fill("aa:bb:cc:dd:ee:ff:"), fill("aa:"), fill("aabb.ccdd.eeff."),
		fill("aa:bb:cc:dd:ee:ff "), fill("Bearer abcdEFGH12345678xyz "),
	} {
		start := time.Now()
		Scan("v", v, func(Hit) {})
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("Scan(%.20q… ×%d) took %v", v, mib/len(v), d)
		}
		start = time.Now()
		js, _ := json.Marshal(map[string]any{"a": []string{v}})
		ScanJSON("extra", string(js), func(Hit) {})
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("ScanJSON(%.20q…) took %v", v, d)
		}
		start = time.Now()
		r.Text(v)
		r.JSON("extra", string(js))
		if d := time.Since(start); d > 4*time.Second {
			t.Errorf("redacting %.20q… took %v", v, d)
		}
	}
}
