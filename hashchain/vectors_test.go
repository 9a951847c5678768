package hashchain

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stormaudit/stormaudit/auditfmt"
)

var update = flag.Bool("update", false, "rewrite the test vectors in testdata/hashchain")

// vectorsDir holds the test vectors of docs/hashchain.md.
const vectorsDir = "../testdata/hashchain"

// vectorLog is the log name of the test vectors.
const vectorLog = "stormaudit.example/incident"

// vectorInputs are the lines of the test vectors, in storage order (by
// client_id, then recorded_at): a reference-client record; one with every
// optional field; one with unknown members (nested, Unicode, names whose
// UTF-16 order differs from their code point order), the device_id alias
// and a null optional field; one in a logging envelope; one with a
// negative UTC offset. Five rows, so that the tree is not a power of two.
var vectorInputs = []struct {
	source string
	line   int64
	text   string
}{
	{"gw-a.ndjson", 1, `{"client_id": "dev-0001", "attempt": 0, "backoff_delay_s": 0.21, "outcome": "backoff_wait", "clean_session": false, "recorded_at": "2026-11-30T14:17:34.979964+00:00"}`},
	{"gw-a.ndjson", 2, `{"client_id": "dev-0001", "attempt": 1, "backoff_delay_s": 1.5, "outcome": "attempt_failed", "clean_session": false, "recorded_at": "2026-11-30T15:47:35.190000+01:30", "schema": 1, "host_id": "gw-a", "stage": "session", "attempt_id": "dev-0001/7", "record_id": "r-000102", "device_seq": 102, "failure_class": "transient", "reason_code": 3, "ceiling_s": 2.0, "session_present": false}`},
	{"gw-b.ndjson", 7, `{"device_id": "dev-0002", "attempt": 3, "backoff_delay_s": 6.25e-1, "outcome": "refused", "clean_session": true, "recorded_at": "2026-11-30T14:17:36Z", "fw": "2.4.1-\u03b2", "rssi_dbm": -71, "geo": {"lon": 18.0686, "lat": 59.3293, "fix": null}, "tags": ["north", "\u00e9t\u00e9 \"quoted\"\t"], "\ud83d\ude00": true, "\ufb01": "ligature", "reason_code": null}`},
	{"gw-b.ndjson", 8, `{"message": "mqtt_reconnect", "name": "incidentgis.mqtt.reconnect", "levelname": "INFO", "created": 1795961857.25, "audit": {"client_id": "dev-0002", "attempt": 0, "backoff_delay_s": 0, "outcome": "connected", "clean_session": true, "recorded_at": "2026-11-30T14:17:37.000001+00:00", "session_present": true}}`},
	{"gw-c.ndjson", 3, `{"client_id": "dev-0003", "attempt": 12, "backoff_delay_s": 120, "outcome": "gave_up", "clean_session": false, "recorded_at": "2026-11-30T09:17:40.5-05:00"}`},
}

// vectorRow is one row of testdata/hashchain/vectors.json.
type vectorRow struct {
	Source     string `json:"source"`
	Line       int64  `json:"line"`
	Input      string `json:"input"`
	Origin     string `json:"origin"`
	Seq        int64  `json:"seq"`
	R          string `json:"R"`
	RecordHash string `json:"record_hash"`
	Link       string `json:"link"`
	Leaf       string `json:"leaf"` // the leaf's input L, hex
	LeafHash   string `json:"leaf_hash"`
}

// vectors is testdata/hashchain/vectors.json.
type vectors struct {
	About      string      `json:"about"`
	Log        string      `json:"log"`
	Rows       []vectorRow `json:"rows"`
	TreeSize   int64       `json:"tree_size"`
	Root       string      `json:"root"`
	Checkpoint string      `json:"checkpoint"`
}

const vectorsAbout = "Test vectors of docs/hashchain.md (hash chain and checkpoints, version 2). " +
	"Hashes are hex except root (standard base64, as in the checkpoint). check.py recomputes every value from the inputs; " +
	"checkpoint.note is the checkpoint signed with the test-only key in test.pub."

// buildVectors computes the test vectors.
func buildVectors(t *testing.T) (v vectors, note []byte) {
	v = vectors{About: vectorsAbout, Log: vectorLog}
	var dec auditfmt.Decoder
	var tree Tree
	links := map[string]int64{} // the next seq of each origin
	var prev = map[string][32]byte{}
	for _, in := range vectorInputs {
		var rec auditfmt.Record
		if err := dec.Decode([]byte(in.text), &rec); err != nil {
			t.Fatalf("%s:%d: %v", in.source, in.line, err)
		}
		rec.Line = in.line
		R, err := AppendSourcedRecordBytes(nil, &rec, in.source)
		if err != nil {
			t.Fatalf("%s:%d: %v", in.source, in.line, err)
		}
		origin := vectorLog + "/" + rec.ClientID
		seq := links[origin]
		links[origin]++
		link, ok := prev[origin]
		if !ok {
			link = Genesis(origin)
		}
		h := RecordHash(R)
		link = NextLink(link, h)
		prev[origin] = link
		L := binary.BigEndian.AppendUint64(append([]byte(nil), link[:]...), uint64(seq))
		L = append(L, origin...)
		leaf := Leaf(Pos{Origin: origin, Seq: seq, Link: link})
		tree.Append(leaf)
		v.Rows = append(v.Rows, vectorRow{
			Source: in.source, Line: in.line, Input: in.text, Origin: origin, Seq: seq,
			R: string(R), RecordHash: hex.EncodeToString(h[:]), Link: hex.EncodeToString(link[:]),
			Leaf: hex.EncodeToString(L), LeafHash: hex.EncodeToString(leaf[:]),
		})
	}
	root := tree.Root()
	c := Checkpoint{Origin: vectorLog, Size: tree.Size(), Root: root}
	v.TreeSize, v.Root, v.Checkpoint = tree.Size(), base64.StdEncoding.EncodeToString(root[:]), string(c.Format())
	signer, _ := testKeys(t)
	note, err := SignCheckpoint(c, signer)
	if err != nil {
		t.Fatal(err)
	}
	return v, note
}

func TestVectors(t *testing.T) {
	v, signed := buildVectors(t)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"vectors.json":    buf.Bytes(),
		"checkpoint.note": signed,
		"test.pub":        []byte(testVerifierKey + "\n"),
	}
	checkVectorFiles(t, "TestVectors", files)
	_, verifiers := testKeys(t)
	if c, _, err := OpenCheckpoint(signed, verifiers); err != nil || string(c.Format()) != v.Checkpoint {
		t.Errorf("OpenCheckpoint of the signed vector: %+v, %v", c, err)
	}
}

// TestCheckPy runs the Python recipe of docs/hashchain.md on the vectors
// of both versions (vectors.json, vectors3.json), so that the recipe is
// known to work.
func TestCheckPy(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH")
	}
	out, err := exec.Command(python, filepath.Join(vectorsDir, "check.py")).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "OK" {
		t.Fatalf("check.py: %v\n%s", err, out)
	}
}

// TestCheckPyInDoc checks that docs/hashchain.md shows check.py as it is.
func TestCheckPyInDoc(t *testing.T) {
	script, err := os.ReadFile(filepath.Join(vectorsDir, "check.py"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../docs/hashchain.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```python\n"+string(script)+"```\n") {
		t.Error("docs/hashchain.md does not hold testdata/hashchain/check.py verbatim in a ```python block")
	}
}

// checkVectorFiles compares the files of testdata/hashchain with what the
// test named test computes now, or writes them under -update.
func checkVectorFiles(t *testing.T, test string, files map[string][]byte) {
	t.Helper()
	for name, want := range files {
		path := filepath.Join(vectorsDir, name)
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -run %s -update to write it)", err, test)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what the code computes now; the hash chain's format changed?\n"+
				"(if the change is intended, it is a new version: bump it in docs/hashchain.md, and run go test -run %s -update)", path, test)
		}
	}
}
