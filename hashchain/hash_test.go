package hashchain

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/tlog"
)

func TestRecordHash(t *testing.T) {
	for _, n := range []int{0, 1, 55, 56, 63, 64, 200, 510, 511, 512, 4000} {
		b := []byte(strings.Repeat("x", n))
		if got, want := RecordHash(b), tlog.RecordHash(b); got != want {
			t.Errorf("RecordHash of %d bytes = %v, want %v", n, got, want)
		}
		if got, want := LeafHash(b), tlog.RecordHash(b); got != want {
			t.Errorf("LeafHash of %d bytes = %v, want %v", n, got, want)
		}
	}
}

func TestGenesisAndNextLink(t *testing.T) {
	origin := "stormaudit.example/incident/dev-0001"
	g := Genesis(origin)
	if want := sha256.Sum256([]byte("stormaudit/chain/v1\n" + origin + "\n")); g != want {
		t.Errorf("Genesis = %v, want %v", g, tlog.Hash(want))
	}
	h := RecordHash([]byte(`{"record":{}}`))
	if want := sha256.Sum256(append(g[:], h[:]...)); NextLink(g, h) != want {
		t.Errorf("NextLink = %v, want %v", NextLink(g, h), tlog.Hash(want))
	}
	if Genesis("a") == Genesis("b") || Genesis("") == Genesis("\n") {
		t.Error("different origins share a genesis link")
	}
}

func TestRowBytes(t *testing.T) {
	var link tlog.Hash
	for i := range link {
		link[i] = byte(i * 7)
	}
	for _, tt := range []struct {
		origin, source string
		seq, line      int64
	}{
		{"stormaudit.example/incident/dev-0001", "gw-a.ndjson", 0, 1},
		{"log/dév \"quoted\"\t\U0001F600", "C:\\logs\\a.csv", 12345, 9007199254740992},
		{"log/x", "-", -1, math.MaxInt64},
	} {
		got := AppendRowBytes(nil, tt.origin, tt.seq, link, tt.source, tt.line)
		// The same object through encoding/json and the canonicaliser.
		j, err := json.Marshal(map[string]any{
			"line": tt.line, "link": base64.StdEncoding.EncodeToString(link[:]),
			"origin": tt.origin, "seq": tt.seq, "source": tt.source,
		})
		if err != nil {
			t.Fatal(err)
		}
		want, err := AppendCanonicalJSON(nil, j)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
	got := AppendRowBytes(nil, "o", 0, link, "bad\xffname", 1)
	if !strings.Contains(string(got), `"source":"bad`+"\uFFFD"+`name"`) {
		t.Errorf("invalid UTF-8 source: got %s", got)
	}
}
