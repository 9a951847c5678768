package hashchain

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// The examples of RFC 8785: section 3.2.2 (values), section 3.2.3
// (sorting) and the "weird" member names of its test suite.
var rfc8785Examples = []struct{ name, in, want string }{
	{
		"3.2.2 values",
		`{
  "numbers": [333333333.33333329, 1E30, 4.50,
              2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`,
		`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
	},
	{
		"3.2.3 sorting",
		`{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`,
		"{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\"," +
			"\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"\uFB33\":\"Hebrew Letter Dalet With Dagesh\"}",
	},
	{
		"weird names",
		`{"\u20ac":"Euro Sign","1":"One","\u0080":"Control\u007f","\ud83d\ude02":"Smiley","\u00f6":"Latin Small Letter O With Diaeresis","\ufb33":"Hebrew Letter Dalet With Dagesh","</script>":"Browser Challenge"}`,
		"{\"1\":\"One\",\"</script>\":\"Browser Challenge\",\"\u0080\":\"Control\u007f\",\"ö\":\"Latin Small Letter O With Diaeresis\"," +
			"\"€\":\"Euro Sign\",\"😂\":\"Smiley\",\"\uFB33\":\"Hebrew Letter Dalet With Dagesh\"}",
	},
	{
		"nesting",
		` { "b" : [ { "z" : 1 , "a" : { } } , [ ] , "" ] , "a" : -0 } `,
		`{"a":0,"b":[{"a":{},"z":1},[],""]}`,
	},
}

func TestCanonicalJSONExamples(t *testing.T) {
	for _, tt := range rfc8785Examples {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AppendCanonicalJSON(nil, []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// The number serialisation samples of RFC 8785, appendix B: IEEE 754 bits
// and the ECMAScript form.
var rfc8785Numbers = []struct {
	bits uint64
	want string // "" for an error (NaN, Infinity)
}{
	{0x0000000000000000, "0"},
	{0x8000000000000000, "0"},
	{0x0000000000000001, "5e-324"},
	{0x8000000000000001, "-5e-324"},
	{0x7fefffffffffffff, "1.7976931348623157e+308"},
	{0xffefffffffffffff, "-1.7976931348623157e+308"},
	{0x4340000000000000, "9007199254740992"},
	{0xc340000000000000, "-9007199254740992"},
	{0x4430000000000000, "295147905179352830000"},
	{0x7fffffffffffffff, ""},
	{0x7ff0000000000000, ""},
	{0x44b52d02c7e14af5, "9.999999999999997e+22"},
	{0x44b52d02c7e14af6, "1e+23"},
	{0x44b52d02c7e14af7, "1.0000000000000001e+23"},
	{0x444b1ae4d6e2ef4e, "999999999999999700000"},
	{0x444b1ae4d6e2ef4f, "999999999999999900000"},
	{0x444b1ae4d6e2ef50, "1e+21"},
	{0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
	{0x3eb0c6f7a0b5ed8d, "0.000001"},
	{0x41b3de4355555553, "333333333.3333332"},
	{0x41b3de4355555554, "333333333.33333325"},
	{0x41b3de4355555555, "333333333.3333333"},
	{0x41b3de4355555556, "333333333.3333334"},
	{0x41b3de4355555557, "333333333.33333343"},
	{0xbecbf647612f3696, "-0.0000033333333333333333"},
	{0x43143ff3c1cb0959, "1424953923781206.2"},
}

func TestES6NumbersRFC8785(t *testing.T) {
	for _, tt := range rfc8785Numbers {
		f := math.Float64frombits(tt.bits)
		if tt.want == "" {
			if !math.IsNaN(f) && !math.IsInf(f, 0) {
				t.Errorf("%016x: sample is finite", tt.bits)
			}
			continue
		}
		if got := string(appendES6(nil, f)); got != tt.want {
			t.Errorf("%016x: got %s, want %s", tt.bits, got, tt.want)
		}
		// Through the canonicaliser, from Go's own shortest form.
		in := strconv.FormatFloat(f, 'g', -1, 64)
		got, err := AppendCanonicalJSON(nil, []byte(in))
		if err != nil || string(got) != tt.want {
			t.Errorf("AppendCanonicalJSON(%s) = %s, %v; want %s", in, got, err, tt.want)
		}
	}
}

var tenth = 0.1 // a variable: constant arithmetic would be exact

func TestES6Numbers(t *testing.T) {
	for _, tt := range []struct {
		in   float64
		want string
	}{
		{1e21, "1e+21"}, {1e-7, "1e-7"}, {0.000001, "0.000001"}, {5.0, "5"},
		{123456789012345680000, "123456789012345680000"}, {-1.5e-7, "-1.5e-7"},
		{0.21, "0.21"}, {100, "100"}, {1e20, "100000000000000000000"}, {1.5e300, "1.5e+300"},
		{-0.0000001, "-1e-7"}, {123e-20, "1.23e-18"}, {tenth + 2*tenth, "0.30000000000000004"},
		{math.MaxInt64, "9223372036854776000"}, {1e-6 * 9.999, "0.000009999"},
	} {
		if got := string(appendES6(nil, tt.in)); got != tt.want {
			t.Errorf("appendES6(%v) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// TestES6FastPath checks appendES6 against strconv's shortest form for
// numbers with few decimals, where it takes its fast path, and around it.
func TestES6FastPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for i := range 1_000_000 {
		var f float64
		switch i % 4 {
		case 0:
			f = float64(rng.Int64N(1e15)) / 1e6
		case 1:
			f = float64(rng.Int64N(1e9)) / math.Pow(10, float64(rng.IntN(10)))
		case 2:
			f = math.Nextafter(float64(rng.Int64N(1e12))/1e6, math.Inf(1))
		default:
			f = rng.Float64() * 1000
		}
		if rng.IntN(2) == 0 {
			f = -f
		}
		if f == 0 || math.Abs(f) < 1e-6 {
			continue
		}
		want := strconv.FormatFloat(f, 'f', -1, 64)
		if got := string(appendES6(nil, f)); got != want {
			t.Fatalf("appendES6(%v) = %s, want %s", f, got, want)
		}
	}
}

func TestCanonicalJSONNumbers(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"1E400", ""}, {"-1e400", ""}, {"1e-400", "0"}, {"-1e-400", "0"}, {"-0.0", "0"},
		{"0.1000000000000000055511151231257827", "0.1"}, {"12345678901234567890", "12345678901234567000"},
		{"1e+2", "100"}, {"1E-2", "0.01"}, {"10.50e1", "105"},
		{"01", ""}, {"1.", ""}, {".5", ""}, {"+1", ""}, {"1e", ""}, {"-", ""}, {"0x10", ""}, {"Infinity", ""}, {"NaN", ""},
	} {
		got, err := AppendCanonicalJSON(nil, []byte(tt.in))
		switch {
		case tt.want == "" && err == nil:
			t.Errorf("%s: got %s, want an error", tt.in, got)
		case tt.want != "" && (err != nil || string(got) != tt.want):
			t.Errorf("%s: got %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

func TestCanonicalJSONStrings(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`"\u0000\u001f\u0020\u007f\u0080"`, "\"\\u0000\\u001f \u007f\u0080\""},
		{`"\b\f\n\r\t\/\\\""`, `"\b\f\n\r\t/\\\""`},
		{`"\u00E9\u00e9é"`, `"ééé"`},
		{`"\uD83D\uDE00"`, `"😀"`},
		{"\"\u2028\u2029\"", "\"\u2028\u2029\""},
		{`"<>&'"`, `"<>&'"`},
	} {
		got, err := AppendCanonicalJSON(nil, []byte(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: got %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

func TestCanonicalJSONErrors(t *testing.T) {
	for _, tt := range []struct{ in, expected string }{
		{``, "a JSON value"},
		{` `, "a JSON value"},
		{`{"a":1,"a":2}`, "each member name once"},
		{`{"a":1,"\u0061":2}`, "each member name once"},
		{`"\ud800"`, "a surrogate pair"},
		{`"\udc00\ud800"`, "a surrogate pair"},
		{`"\ud800\u0041"`, "a surrogate pair"},
		{"\"\xff\"", "UTF-8"},
		{"\"\xed\xa0\x80\"", "UTF-8"},
		{"\"a\tb\"", "a control character"},
		{`"\x"`, "an escape sequence"},
		{`"\u12"`, "four hex digits"},
		{`"abc`, `'"' to end the string`},
		{`{"a" 1}`, "':'"},
		{`{"a":1 "b":2}`, "',' or '}'"},
		{`{1:2}`, "a member name"},
		{`[1 2]`, "',' or ']'"},
		{`[1,]`, "a JSON value"},
		{`{"a":1,}`, "a member name"},
		{`tru`, "a JSON value"},
		{`1 2`, "the end of the text"},
		{`{"a":1}}`, "the end of the text"},
		{strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1), "levels of nesting"},
	} {
		_, err := AppendCanonicalJSON(nil, []byte(tt.in))
		var je *JSONError
		if !errors.As(err, &je) || !strings.Contains(je.Expected, tt.expected) {
			t.Errorf("%q: got error %v, want one expecting %q", tt.in, err, tt.expected)
		}
	}
	deep := strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth)
	if _, err := AppendCanonicalJSON(nil, []byte(deep)); err != nil {
		t.Errorf("%d levels of nesting: %v", maxDepth, err)
	}
}

func TestCompareUTF16(t *testing.T) {
	ordered := []string{"", "\r", "1", "a", "ab", "b", "\u0080", "ö", "€", "\U0001F600", "\U0001F601", "\uFB33", "\uFFFF"}
	for i, a := range ordered {
		for j, b := range ordered {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := compareUTF16([]byte(a), []byte(b)); got != want {
				t.Errorf("compareUTF16(%q, %q) = %d, want %d", a, b, got, want)
			}
		}
	}
}

func TestExactDouble(t *testing.T) {
	c := &canonicalizer{}
	for _, tt := range []struct {
		text  string
		exact bool
	}{
		{"0", true}, {"-0.0", true}, {"0e99999999999", true}, {"0.25", true}, {"2.50", true}, {"1e2", true},
		{"0.1", true}, {"0.30000000000000004", true}, {"9007199254740993", false}, {"9007199254740992", true},
		{"12345678901234567890", false}, {"0.1000000000000000055511151231257827", false},
		{"1e-400", false}, {"5e-324", true}, {"4.9e-324", false}, {"1.7976931348623157e308", true},
		{"100000000000000000000000", true}, {"99999999999999991611392", false}, {"1e23", true}, {"123.456000", true}, {"1e999999999999", false},
	} {
		f, _ := strconv.ParseFloat(tt.text, 64)
		if got := c.exactDouble([]byte(tt.text), f); got != tt.exact {
			t.Errorf("exactDouble(%s) = %v, want %v", tt.text, got, tt.exact)
		}
	}
}

func TestCanonicalJSONAppends(t *testing.T) {
	got, err := AppendCanonicalJSON([]byte("x="), []byte(`{"b":1,"a":2}`))
	if err != nil || string(got) != `x={"a":2,"b":1}` {
		t.Errorf("got %s, %v", got, err)
	}
}
