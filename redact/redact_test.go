package redact

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

var testKey = []byte("test key: not a secret")

// expand replaces each «kind:value» in s by r's pseudonym of value, so
// that wanted outputs read as what they replace.
func expand(r *Redactor, s string) string {
	kinds := map[string]Kind{"secret": Password, "pem": PEM, "jwt": JWT, "mac": MAC}
	for {
		i := strings.Index(s, "«")
		if i < 0 {
			return s
		}
		j := strings.Index(s[i:], "»") + i
		k, v, _ := strings.Cut(s[i+len("«"):j], ":")
		s = s[:i] + r.pseudonym(kinds[k], v) + s[j+len("»"):]
	}
}

var pseudonymRE = regexp.MustCompile(`^(secret|pem|jwt|mac)-[0-9a-f]{16}$`)

func TestPseudonym(t *testing.T) {
	r := New(testKey)
	for _, k := range []Kind{Password, Bearer, PEM, JWT, URLPassword, MAC} {
		p := r.pseudonym(k, "aa:bb:cc:dd:ee:ff")
		if !pseudonymRE.MatchString(p) || !isPseudonym(p) {
			t.Errorf("pseudonym %q is not of the documented form", p)
		}
		if q := r.pseudonym(k, "aa:bb:cc:dd:ee:ff"); q != p {
			t.Errorf("pseudonym changes: %q, then %q", p, q)
		}
	}
	// A MAC address's spellings are one device.
	mac := r.pseudonym(MAC, "aa:bb:cc:dd:ee:ff")
	for _, v := range []string{"AA-BB-CC-DD-EE-FF", "aabb.ccdd.eeff", "AaBb.cCdD.eEfF"} {
		if got := r.pseudonym(MAC, v); got != mac {
			t.Errorf("pseudonym(%q) = %q, want %q (as aa:bb:cc:dd:ee:ff)", v, got, mac)
		}
	}
	// The credential kinds share a class; the others do not.
	if r.pseudonym(Bearer, "tok") != r.pseudonym(Password, "tok") ||
		r.pseudonym(URLPassword, "tok") != r.pseudonym(Password, "tok") {
		t.Error("a credential's pseudonym depends on where it was found")
	}
	if strings.TrimPrefix(r.pseudonym(JWT, "x"), "jwt-") == strings.TrimPrefix(r.pseudonym(PEM, "x"), "pem-") {
		t.Error("one value has one hash in two classes")
	}
	// Another key, other pseudonyms; no key, a random one.
	if New([]byte("another key")).pseudonym(MAC, "aa:bb:cc:dd:ee:ff") == mac {
		t.Error("two keys give one pseudonym")
	}
	if New(nil).pseudonym(MAC, "aa:bb:cc:dd:ee:ff") == New(nil).pseudonym(MAC, "aa:bb:cc:dd:ee:ff") {
		t.Error("two random keys give one pseudonym")
	}
	// The key is copied.
	key := slices.Clone(testKey)
	r2 := New(key)
	key[0] ^= 1
	if r2.pseudonym(MAC, "aa:bb:cc:dd:ee:ff") != mac {
		t.Error("changing the key after New changes the pseudonyms")
	}
}

func TestRedactString(t *testing.T) {
	r := New(testKey)
	for _, tt := range []struct{ field, value, want string }{
		{"client_id", "dev-aa:bb:cc:dd:ee:ff", "dev-«mac:aa:bb:cc:dd:ee:ff»"},
		{"client_id", "dev-AA-BB-CC-DD-EE-FF", "dev-«mac:aa:bb:cc:dd:ee:ff»"},
		{"client_id", "dev-0001", "dev-0001"},
		{"host_id", "mqtt://user:pw@broker:1883", "mqtt://user:«secret:pw»@broker:1883"},
		{"x", "Authorization: Bearer abcdEFGH12345678xyz", "Authorization: Bearer «secret:abcdEFGH12345678xyz»"},
		{"x", "Basic dXNlcjpwYXNz", "Basic «secret:dXNlcjpwYXNz»"},
		{"x", "t=" + jwtIO + ";", "t=«jwt:" + jwtIO + "»;"},
		{"x", "cert " + keyPEM + "\n", "cert «pem:" + keyPEM + "»\n"},
		{"x", "a aa:bb:cc:dd:ee:ff b 00:11:22:33:44:55", "a «mac:aa:bb:cc:dd:ee:ff» b «mac:00:11:22:33:44:55»"},
		{"password", "hunter2", "«secret:hunter2»"},
		{"password", "", ""},
		{"password", "***", "***"},
	} {
		want := expand(r, tt.want)
		got := r.String(tt.field, tt.value)
		if got != want {
			t.Errorf("String(%q, %q) = %q, want %q", tt.field, tt.value, got, want)
		}
		if got != tt.value && !isRedacted(tt.field, got) {
			t.Errorf("String(%q, %q) = %q still has a hit", tt.field, tt.value, got)
		}
		if again := r.String(tt.field, got); again != got {
			t.Errorf("String twice: %q, then %q", got, again)
		}
	}
}

func isRedacted(field, s string) bool {
	clean := true
	Scan(field, s, func(Hit) { clean = false })
	return clean
}

func TestRedactUnchangedDoesNotAllocate(t *testing.T) {
	r := New(testKey)
	for _, v := range plainValues(16) {
		if n := testing.AllocsPerRun(10, func() { r.String("attempt_id", v) }); n != 0 {
			t.Errorf("String(%q): %v allocations", v, n)
		}
		if got := r.String("attempt_id", v); got != v {
			t.Errorf("String(%q) = %q", v, got)
		}
	}
	const extra = "{\"fw\": \"1.4.2\",\n \"rssi\": -71}"
	if n := testing.AllocsPerRun(10, func() { r.JSON("extra", extra) }); n != 0 {
		t.Errorf("JSON(%q): %v allocations", extra, n)
	}
	if got := r.JSON("extra", extra); got != extra {
		t.Errorf("JSON(%q) = %q, want it as it is", extra, got)
	}
}

func TestRedactJSON(t *testing.T) {
	r := New(testKey)
	for _, tt := range []struct{ object, want string }{
		{
			`{"z":1, "password":"hunter2", "a":"dev-aa:bb:cc:dd:ee:ff", "m":[true,null,-1.5e3]}`,
			`{"z":1,"password":"«secret:hunter2»","a":"dev-«mac:aa:bb:cc:dd:ee:ff»","m":[true,null,-1.5e3]}`,
		},
		{
			`{"mqtt":{"url":"mqtt://u:p@h","pass\u0077ord":5,"note":"caf\u00e9"}}`,
			`{"mqtt":{"url":"mqtt://u:«secret:p»@h","pass\u0077ord":"«secret:5»","note":"caf\u00e9"}}`,
		},
		{
			`{"credentials": {"user": "u", "pass": "p"}}`,
			`{"credentials":"«secret:{"user":"u","pass":"p"}»"}`,
		},
		{
			`{"devices":{"aa:bb:cc:dd:ee:ff":{"seen":"aabb.ccdd.eeff"}}}`,
			`{"devices":{"«mac:aa:bb:cc:dd:ee:ff»":{"seen":"«mac:aa:bb:cc:dd:ee:ff»"}}}`,
		},
		{
			// Escapes in a replaced string are written anew; others kept.
			`{"a":"x\u0041\n\"aa:bb:cc:dd:ee:ff\"\u2028","b":"\u0041"}`,
			`{"a":"xA\n\"«mac:aa:bb:cc:dd:ee:ff»\"` + "\u2028" + `","b":"\u0041"}`,
		},
		{
			`{"cert":"` + strings.ReplaceAll(keyPEM, "\n", `\n`) + `"}`,
			`{"cert":"«pem:` + keyPEM + `»"}`,
		},
		{`{"password":null,"token":"","x":[]}`, `{"password":null,"token":"","x":[]}`},
		{` [ "Bearer abcdEFGH12345678xyz" ] `, `["Bearer «secret:abcdEFGH12345678xyz»"]`},
		// Not JSON: redacted as a plain string.
		{`{"u":"mqtt://a:b@h"`, `{"u":"mqtt://a:«secret:b»@h"`},
	} {
		want := expand(r, tt.want)
		got := r.JSON("extra", tt.object)
		if got != want {
			t.Errorf("JSON(%s)\n got %s\nwant %s", tt.object, got, want)
		}
		if json.Valid([]byte(tt.object)) {
			if !json.Valid([]byte(got)) {
				t.Errorf("JSON(%s) = %s is not valid JSON", tt.object, got)
			}
			ScanJSON("extra", got, func(h Hit) { t.Errorf("JSON(%s) = %s still has %v at %s", tt.object, got, h.Kind, h.Field) })
		}
		if again := r.JSON("extra", got); again != got {
			t.Errorf("JSON twice: %s, then %s", got, again)
		}
	}
}

// TestRedactJSONKeepsOrder checks that the members come out in the order
// they went in: the order of a record's extra is part of it.
func TestRedactJSONKeepsOrder(t *testing.T) {
	r := New(testKey)
	in := `{"z":"aa:bb:cc:dd:ee:ff","y":{"token":"t","b":2,"a":1},"x":[{"q":1,"p":"mqtt://u:p@h"}],"w":0}`
	got := r.JSON("extra", in)
	last := -1
	for _, name := range []string{"z", "y", "token", "b", "a", "x", "q", "p", "w"} {
		i := strings.Index(got, `"`+name+`":`)
		if i <= last {
			t.Fatalf("member %q out of order in %s", name, got)
		}
		last = i
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(got), &v); err != nil || len(v) != 4 {
		t.Errorf("JSON(%s) = %s: %v", in, got, err)
	}
}

func TestRedactText(t *testing.T) {
	r := New(testKey)
	msg := "device dev-aa:bb:cc:dd:ee:ff reconnected 40 times; password=hunter2"
	want := expand(r, "device dev-«mac:aa:bb:cc:dd:ee:ff» reconnected 40 times; password=hunter2")
	if got := r.Text(msg); got != want {
		t.Errorf("Text = %q, want %q", got, want)
	}
	if got := r.Replaced(); !slices.Equal(got, []Count{{"", MAC, 1}}) {
		t.Errorf("Replaced() = %v", got)
	}
}

func TestReplaced(t *testing.T) {
	r := New(testKey)
	r.String("client_id", "dev-aa:bb:cc:dd:ee:ff")
	r.String("client_id", "dev-00:11:22:33:44:55 aa:bb:cc:dd:ee:ff")
	r.String("client_id", "dev-0001")
	r.String("password", "x")
	r.JSON("extra", `{"mqtt":{"password":"x","url":"mqtt://u:p@h"},"devs":["aa:bb:cc:dd:ee:ff","aabb.ccdd.eeff"]}`)
	r.JSON("envelope", `{"auth":"Bearer abcdEFGH12345678xyz"}`)
	want := []Count{
		{"client_id", MAC, 3},
		{"envelope.auth", Bearer, 1},
		{"extra.devs[]", MAC, 2},
		{"extra.mqtt.password", Password, 1},
		{"extra.mqtt.url", URLPassword, 1},
		{"password", Password, 1},
	}
	if got := r.Replaced(); !slices.Equal(got, want) {
		t.Errorf("Replaced() =\n%v\nwant\n%v", got, want)
	}
}

func TestRedactorConcurrent(t *testing.T) {
	r := New(nil)
	const workers, each = 8, 200
	outs := make([][]string, workers)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			for range each {
				outs[i] = append(outs[i],
					r.String("client_id", "dev-aa:bb:cc:dd:ee:ff"),
					r.JSON("extra", `{"password":"x","m":"aabb.ccdd.eeff"}`))
			}
		})
	}
	wg.Wait()
	for i := range outs {
		for j := range outs[i] {
			if outs[i][j] != outs[0][j%2] {
				t.Fatalf("worker %d got %q, worker 0 %q", i, outs[i][j], outs[0][j%2])
			}
		}
	}
	want := []Count{{"client_id", MAC, workers * each}, {"extra.m", MAC, workers * each}, {"extra.password", Password, workers * each}}
	if got := r.Replaced(); !slices.Equal(got, want) {
		t.Errorf("Replaced() = %v, want %v", got, want)
	}
}

// TestRedactedScansClean redacts every value of the scan tables, as a
// plain field, as free text and inside JSON, and scans the result again.
func TestRedactedScansClean(t *testing.T) {
	r := New(testKey)
	for _, tt := range scanTests {
		if got := r.String("v", tt.value); !isRedacted("v", got) {
			t.Errorf("String(%q) = %q still has a hit", tt.value, got)
		}
		if got := r.Text(tt.value); !isRedacted("", got) {
			t.Errorf("Text(%q) = %q still has a hit", tt.value, got)
		}
		js, _ := json.Marshal(map[string]any{"v": tt.value, tt.value: []string{tt.value}, "password": tt.value})
		got := r.JSON("extra", string(js))
		if !json.Valid([]byte(got)) {
			t.Errorf("JSON(%s) = %s is not valid", js, got)
		}
		ScanJSON("extra", got, func(h Hit) { t.Errorf("JSON(%s) = %s still has %v at %s", js, got, h.Kind, h.Field) })
	}
}
