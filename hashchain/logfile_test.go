package hashchain

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"golang.org/x/mod/sumdb/note"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// sealedLog writes a small signed log of n records from a fleet of three
// devices (the checkpoint covers all of them) and returns its path, its
// bytes and its checkpoint file.
func sealedLog(t testing.TB, n int) (path string, log, checkpoint []byte) {
	t.Helper()
	signer, _ := testKeys(t)
	path = filepath.Join(t.TempDir(), "collector.ndjson")
	w := openTestWriter(t, path, signer)
	for i := range n {
		r := genFleetRecord(i, 3)
		if _, err := w.Append(&r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	checkpoint, err = os.ReadFile(path + ".checkpoint")
	if err != nil {
		t.Fatal(err)
	}
	return path, log, checkpoint
}

func ptr[T any](v T) *T { return &v }

// lineOf returns the 1-based line of the byte at offset i.
func lineOf(log []byte, i int) int64 { return int64(bytes.Count(log[:i], []byte("\n"))) + 1 }

func TestReadLogBitFlips(t *testing.T) {
	// Seven records: every kind genRecord makes, on three devices.
	path, log, checkpoint := sealedLog(t, 7)
	_, verifiers := testKeys(t)
	if _, err := readLog(path, bytes.NewReader(log), checkpoint, verifiers); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	mod := bytes.Clone(log)
	for i := range log {
		for bit := range 8 {
			mod[i] = log[i] ^ 1<<bit
			_, err := readLog(path, bytes.NewReader(mod), checkpoint, verifiers)
			var le *LogError
			switch {
			case err == nil:
				t.Fatalf("byte %d bit %d (%q -> %q, line %d): tampering not detected", i, bit, log[i], mod[i], lineOf(log, i))
			case !errors.As(err, &le):
				t.Fatalf("byte %d bit %d: error %T %v is not a *LogError", i, bit, err, err)
			case le.Line != lineOf(log, i):
				t.Fatalf("byte %d bit %d (line %d): error names line %d: %v", i, bit, lineOf(log, i), le.Line, err)
			}
			var nl *notLogLine
			switch msg := err.Error(); {
			case errors.As(err, &nl):
				kinds["not a log line"]++
			case le.Origin == "":
				t.Fatalf("byte %d bit %d: a line that reads as a record, but the error names no origin: %v", i, bit, err)
			case strings.Contains(msg, "link: "):
				kinds["link"]++
			case strings.Contains(msg, "seq: "):
				kinds["seq"]++
			case strings.Contains(msg, "origin: "):
				kinds["origin"]++
			case strings.Contains(msg, "not in the collector log's form"):
				kinds["form differs"]++ // decodes to the same record: 'T' -> 't', '\u00e9' -> '\u00E9'
			case strings.Contains(msg, "no canonical bytes"):
				kinds["no canonical bytes"]++
			default:
				t.Fatalf("byte %d bit %d: unexpected error: %v", i, bit, err)
			}
		}
		mod[i] = log[i]
	}
	t.Logf("%d bit flips in %d bytes, all caught on their line: %v", 8*len(log), len(log), kinds)
}

func TestReadLogTampering(t *testing.T) {
	path, log, checkpoint := sealedLog(t, 9)
	signer, verifiers := testKeys(t)
	lines := bytes.SplitAfter(log, []byte("\n"))
	lines = lines[:len(lines)-1] // the empty string after the last newline
	join := func(ls ...[]byte) []byte { return bytes.Join(ls, nil) }
	edit := func(f func(ls [][]byte) [][]byte) []byte {
		ls := make([][]byte, len(lines))
		copy(ls, lines)
		return join(f(ls)...)
	}
	// A forged record with a valid chain of its own: only the tree sees it.
	forged := func(client string) []byte {
		r := genRecord(0)
		r.ClientID = client
		origin := testLog + "/" + client
		link := NextLink(Genesis(origin), RecordHash(recordBytes(t, &r)))
		line := appendLinePrefix(nil, link, auditfmt.AppendJSONString(nil, origin), 0)
		return append(r.AppendJSON(line), "}\n"...)
	}
	for _, tt := range []struct {
		name string
		log  []byte
		line int64  // the line the error must name; 0: any
		want string // in the error
	}{
		{"delete a line (a later record of its chain)", edit(func(ls [][]byte) [][]byte { return append(ls[:1], ls[2:]...) }), 0, "seq: expected"},
		{"delete the last line", edit(func(ls [][]byte) [][]byte { return ls[:len(ls)-1] }), 9, "its checkpoint covers 9"},
		{"truncate below the checkpoint", edit(func(ls [][]byte) [][]byte { return ls[:3] }), 4, "log holds 3 records, its checkpoint covers 9"},
		{"truncate in a line", log[:len(log)-40], 9, "no newline"},
		{"empty", nil, 1, "its checkpoint covers 9"},
		{"swap two lines of different chains", edit(func(ls [][]byte) [][]byte { ls[2], ls[3] = ls[3], ls[2]; return ls }), 9, "the tree of lines 1 to 9"},
		{"swap two lines of one chain", edit(func(ls [][]byte) [][]byte { ls[0], ls[3] = ls[3], ls[0]; return ls }), 1, "seq: "},
		{"duplicate a line", edit(func(ls [][]byte) [][]byte { return append(ls[:3], ls[2:]...) }), 4, "seq: "},
		{"insert a forged line", edit(func(ls [][]byte) [][]byte { return append(ls[:4], append([][]byte{forged("intruder")}, ls[4:]...)...) }), 9, "the tree of lines 1 to 9"},
		{"append a forged line", join(log, forged("intruder")), 0, ""},                                                             // unsealed: allowed, reported
		{"replace a record by a forged one", edit(func(ls [][]byte) [][]byte { ls[1] = forged("dev-1"); return ls }), 5, "link: "}, // the next of its chain
		{"replace the last record of a chain by a forged one", edit(func(ls [][]byte) [][]byte {
			r := genFleetRecord(8, 3)
			r.Attempt = 99
			head := NextLink(NextLink(Genesis(testLog+"/dev-2"), RecordHash(recordBytes(t, ptr(genFleetRecord(2, 3))))), RecordHash(recordBytes(t, ptr(genFleetRecord(5, 3)))))
			link := NextLink(head, RecordHash(recordBytes(t, &r)))
			line := appendLinePrefix(nil, link, auditfmt.AppendJSONString(nil, testLog+"/dev-2"), 2)
			ls[8] = append(r.AppendJSON(line), "}\n"...)
			return ls
		}), 9, "the tree of lines 1 to 9"},
		{"change a record", edit(func(ls [][]byte) [][]byte {
			ls[4] = bytes.Replace(ls[4], []byte(`"attempt":4`), []byte(`"attempt":7`), 1)
			return ls
		}), 5, "link: "},
		{"CRLF", bytes.Replace(log, []byte("}\n"), []byte("}\r\n"), 1), 1, "form"},
		{"blank line", join(lines[0], []byte("\n"), join(lines[1:]...)), 2, "empty line"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := readLog(path, bytes.NewReader(tt.log), checkpoint, verifiers)
			if tt.want == "" {
				if err != nil || rep.Unsealed != 1 || rep.UnsealedFrom != 10 {
					t.Fatalf("readLog: %+v, %v", rep, err)
				}
				return
			}
			var le *LogError
			if !errors.As(err, &le) || !strings.Contains(err.Error(), tt.want) || (tt.line != 0 && le.Line != tt.line) {
				t.Fatalf("readLog: %v; want a *LogError at line %d saying %q", err, tt.line, tt.want)
			}
			t.Log(err)
		})
	}

	// The log is named by LOG, in its checkpoint and every origin, not by
	// its file: a renamed log still verifies.
	renamed := filepath.Join(filepath.Dir(path), "renamed.ndjson")
	if _, err := readLog(renamed, bytes.NewReader(log), checkpoint, verifiers); err != nil {
		t.Errorf("renamed log: %v", err)
	}

	// The checkpoint file: changed, signed by another key, unsigned.
	otherKey, _, err := GenerateKey("someone.else")
	if err != nil {
		t.Fatal(err)
	}
	other, err := note.NewSigner(otherKey)
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := OpenCheckpoint(checkpoint, verifiers)
	if err != nil {
		t.Fatal(err)
	}
	byOther, _ := SignCheckpoint(c, other)
	smaller := c
	smaller.Size = 5
	forgedSmaller, _ := SignCheckpoint(smaller, signer) // a genuine but older-looking checkpoint: root differs
	for _, tt := range []struct {
		name, want string
		cp         []byte
	}{
		{"changed size", "changed after it was signed", bytes.Replace(checkpoint, []byte("\n9\n"), []byte("\n8\n"), 1)},
		{"other key", "not signed by a trusted key", byOther},
		{"unsigned", "not signed", c.Format()},
		{"wrong root for the size", "the tree of lines 1 to 5", forgedSmaller},
		{"garbage", "not a signed note", []byte("garbage\n")},
	} {
		_, err := readLog(path, bytes.NewReader(log), tt.cp, verifiers)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("checkpoint %s: %v, want %q", tt.name, err, tt.want)
		}
	}
	// Every bit of the signed checkpoint matters.
	mod := bytes.Clone(checkpoint)
	for i := range checkpoint {
		for bit := range 8 {
			mod[i] = checkpoint[i] ^ 1<<bit
			if _, err := readLog(path, bytes.NewReader(log), mod, verifiers); err == nil {
				t.Fatalf("checkpoint byte %d bit %d: change not detected", i, bit)
			}
		}
		mod[i] = checkpoint[i]
	}
}

func TestParseChainEnvelope(t *testing.T) {
	link := RecordHash([]byte("x"))
	b64 := base64.StdEncoding.EncodeToString(link[:])
	for _, tt := range []struct {
		env    string
		ok     bool
		origin string
		seq    int64
		field  string // of the FieldError; "" for no error
	}{
		{``, false, "", 0, ""},
		{`{"chain":{"link":"` + b64 + `","origin":"L/dev-1","seq":12}}`, true, "L/dev-1", 12, ""},
		{` { "chain" : { "seq" : 0 , "origin" : "L/d\u00e9v\"\n" , "link" : "` + b64 + `" } } `, true, "L/dév\"\n", 0, ""},
		{`{"ch\u0061in":{"link":"` + b64 + `","origin":"L/d","seq":9223372036854775807}}`, true, "L/d", 9223372036854775807, ""},
		{`{"message":"x"}`, false, "", 0, ""},
		{`{}`, false, "", 0, ""},
		{`{"chain":{"link":"` + b64 + `","origin":"L/d","seq":1},"message":"x"}`, false, "", 0, ""},
		{`{"message":"x","chain":5}`, false, "", 0, ""},
		{`{"chain":5}`, false, "", 0, "chain"},
		{`{"chain":{"link":"` + b64 + `","origin":"L/d"}}`, false, "", 0, "chain.seq"},
		{`{"chain":{"origin":"L/d","seq":1}}`, false, "", 0, "chain.link"},
		{`{"chain":{"link":"` + b64 + `","seq":1}}`, false, "", 0, "chain.origin"},
		{`{"chain":{"link":"` + b64 + `","origin":"L/d","seq":1,"x":2}}`, false, "", 0, "chain"},
		{`{"chain":{"link":"` + b64 + `","origin":"","seq":1}}`, false, "", 0, "chain.origin"},
		{`{"chain":{"link":"` + b64 + `","origin":7,"seq":1}}`, false, "", 0, "chain.origin"},
		{`{"chain":{"link":"` + b64[:43] + `","origin":"L/d","seq":1}}`, false, "", 0, "chain.link"},
		{`{"chain":{"link":"` + b64[:42] + `R=","origin":"L/d","seq":1}}`, false, "", 0, "chain.link"}, // non-canonical padding bits
		{`{"chain":{"link":"` + strings.TrimRight(b64, "=") + `","origin":"L/d","seq":1}}`, false, "", 0, "chain.link"},
		{`{"chain":{"link":"` + b64 + `","origin":"L/d","seq":-1}}`, false, "", 0, "chain.seq"},
		{`{"chain":{"link":"` + b64 + `","origin":"L/d","seq":1.0}}`, false, "", 0, "chain.seq"},
		{`{"chain":{"link":"` + b64 + `","origin":"L/d","seq":1e2}}`, false, "", 0, "chain.seq"},
		{`{"chain":{"link":"` + b64 + `","origin":"L/d","seq":9223372036854775808}}`, false, "", 0, "chain.seq"},
		{`{"chain":{"link":"` + b64 + `","origin":"L/d","seq":"1"}}`, false, "", 0, "chain.seq"},
		{`{"chain":{"link":"` + b64 + `","origin":"L/d","seq":01}}`, false, "", 0, "envelope"},
		{`{"chain":{"link":"` + b64 + `","origin":"L/\ud800","seq":1}}`, false, "", 0, "envelope"},
		{`{"chain":{"link":"` + b64 + `","link":"` + b64 + `","origin":"L/d","seq":1}}`, false, "", 0, "envelope"},
		{`{"chain":1,"chain":2}`, false, "", 0, "envelope"},
		{`[]`, false, "", 0, "envelope"},
		{`{"chain":{}} x`, false, "", 0, "envelope"},
		{"{\"chain\":{\"link\":\"" + b64 + "\",\"origin\":\"L/\xff\",\"seq\":1}}", false, "", 0, "envelope"},
	} {
		origin, seq, got, ok, err := ParseChainEnvelope(tt.env)
		var fe *auditfmt.FieldError
		switch {
		case tt.field != "":
			if !errors.As(err, &fe) || fe.Field != tt.field || ok {
				t.Errorf("ParseChainEnvelope(%s): %v, %v; want an error for %s", tt.env, ok, err, tt.field)
			}
		case err != nil || ok != tt.ok || origin != tt.origin || seq != tt.seq || (ok && got != link):
			t.Errorf("ParseChainEnvelope(%s) = %q, %d, %v, %v, %v; want %q, %d, %v", tt.env, origin, seq, got, ok, err, tt.origin, tt.seq, tt.ok)
		}
	}
}

// TestReadLogLineAtBufferEnd is the regression test of a line that ends
// where a read ends: looking past it for the end of the log refilled the
// buffer the line was in. Short reads put every line there.
func TestReadLogLineAtBufferEnd(t *testing.T) {
	path, log, checkpoint := sealedLog(t, 40)
	_, verifiers := testKeys(t)
	for name, r := range map[string]io.Reader{
		"one byte":  iotest.OneByteReader(bytes.NewReader(log)),
		"half":      iotest.HalfReader(bytes.NewReader(log)),
		"data, EOF": iotest.DataErrReader(bytes.NewReader(log)),
		"per line":  &lineReader{log},
	} {
		if rep, err := readLog(path, r, checkpoint, verifiers); err != nil || rep.Records != 40 {
			t.Errorf("%s: %+v, %v", name, rep, err)
		}
	}
}

// lineReader returns one line per Read.
type lineReader struct{ b []byte }

func (r *lineReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := bytes.IndexByte(r.b, '\n') + 1
	if n == 0 {
		n = len(r.b)
	}
	n = copy(p, r.b[:n])
	r.b = r.b[n:]
	return n, nil
}
