package hashchain

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// The seed corpora of these fuzz tests are committed in testdata/fuzz;
// go test -run TestLogFuzzCorpora -update rewrites them.

func FuzzParseChainEnvelope(f *testing.F) {
	f.Fuzz(func(t *testing.T, envelope string) {
		origin, seq, link, ok, err := ParseChainEnvelope(envelope)
		switch {
		case err != nil:
			if _, isField := err.(*auditfmt.FieldError); !isField || ok {
				t.Fatalf("ParseChainEnvelope(%q): %v, error %T %v", envelope, ok, err, err)
			}
			return
		case !ok:
			if envelope != "" {
				if _, err := AppendCanonicalJSON(nil, []byte(envelope)); err != nil {
					t.Fatalf("ParseChainEnvelope(%q): no chain and no error, but it is not JSON: %v", envelope, err)
				}
			}
			return
		}
		if _, err := AppendCanonicalJSON(nil, []byte(envelope)); err != nil {
			t.Fatalf("ParseChainEnvelope(%q) accepted text RFC 8785 rejects: %v", envelope, err)
		}
		if origin == "" || seq < 0 {
			t.Fatalf("ParseChainEnvelope(%q) = %q, %d", envelope, origin, seq)
		}
		// The envelope as a collector log writes it reads back the same.
		w := `{"chain":{"link":"` + base64.StdEncoding.EncodeToString(link[:]) + `","origin":` + string(auditfmt.AppendJSONString(nil, origin)) + `,"seq":` + fmt.Sprint(seq) + `}}`
		o2, s2, l2, ok2, err2 := ParseChainEnvelope(w)
		if o2 != origin || s2 != seq || l2 != link || !ok2 || err2 != nil {
			t.Fatalf("ParseChainEnvelope(%q) = %q, %d, %v; its writer form %s reads %q, %d, %v, %v, %v", envelope, origin, seq, link, w, o2, s2, l2, ok2, err2)
		}
	})
}

// fuzzLogName is the base name the fuzzed logs are read under; the seeds'
// checkpoints are of logs written under it.
const fuzzLogName = "fuzz.ndjson"

func FuzzReadLog(f *testing.F) {
	_, verifiers := testKeys(f)
	f.Fuzz(func(t *testing.T, log, checkpoint []byte) {
		if len(checkpoint) == 0 {
			checkpoint = nil // no checkpoint file
		}
		rep, err := readLog(fuzzLogName, bytes.NewReader(log), checkpoint, nil)
		if err == nil {
			if rep.Records != int64(bytes.Count(log, []byte("\n"))) || rep.Bytes != int64(len(log)) {
				t.Fatalf("readLog: %d records, %d bytes, of a log of %d lines, %d bytes", rep.Records, rep.Bytes, bytes.Count(log, []byte("\n")), len(log))
			}
			if c := rep.Checkpoint; c != nil && c.Size == rep.Records && c.Root != rep.Root {
				t.Fatal("readLog accepted a log whose root is not its checkpoint's")
			}
		} else if _, ok := err.(*LogError); !ok {
			t.Fatalf("readLog error %T %v is not a *LogError", err, err)
		}
		// Short reads change nothing.
		rep2, err2 := readLog(fuzzLogName, iotest.HalfReader(bytes.NewReader(log)), checkpoint, nil)
		if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) || (err == nil && rep.Root != rep2.Root) {
			t.Fatalf("readLog: %v; with short reads: %v", err, err2)
		}
		readLog(fuzzLogName, bytes.NewReader(log), checkpoint, verifiers)

		// Recovery: what is left after cutting a torn tail verifies.
		s := newLogState(fuzzLogName, "", -1)
		end, torn, err := s.scan(bytes.NewReader(log), true)
		if err != nil {
			return
		}
		if torn != nil && torn.Offset != end {
			t.Fatalf("recovery %+v of a log whose records end at %d", torn, end)
		}
		if torn == nil && end != int64(len(log)) {
			t.Fatalf("no recovery, but the records end at %d of %d bytes", end, len(log))
		}
		rep, err = readLog(fuzzLogName, bytes.NewReader(log[:end]), nil, nil)
		if err != nil || rep.Records != s.records {
			t.Fatalf("after cutting the torn tail at %d: %+v, %v; the scan found %d records", end, rep, err, s.records)
		}
	})
}

// logFuzzSeeds returns the seed corpora of the fuzz tests of this file,
// by test and name, each the arguments of one call.
func logFuzzSeeds(t *testing.T) map[string]map[string][]any {
	signer, _ := testKeys(t)
	write := func(n int, sign bool) (log, checkpoint []byte) {
		path := filepath.Join(t.TempDir(), fuzzLogName)
		opts := WriterOptions{Log: testLog}
		if sign {
			opts.Signer = signer
		}
		w, _, err := OpenWriter(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			r := genFleetRecord(i, 2)
			if _, err := w.Append(&r); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Checkpoint(); err != nil {
			t.Fatal(err)
		}
		w.Close()
		log, _ = os.ReadFile(path)
		checkpoint, _ = os.ReadFile(path + ".checkpoint")
		return log, checkpoint
	}
	log, bare := write(4, false)
	_, signed := write(4, true)
	withExtra, withExtraCP := write(3, false) // genRecord(2) has unknown members
	empty, emptyCP := write(0, false)
	flipped := bytes.Clone(log)
	flipped[100] ^= 4
	firstLine := log[:bytes.IndexByte(log, '\n')+1]
	env := func(link, origin, seq string) string {
		return `{"chain":{"link":` + link + `,"origin":` + origin + `,"seq":` + seq + `}}`
	}
	link := `"` + base64.StdEncoding.EncodeToString(make([]byte, 32)) + `"`
	return map[string]map[string][]any{
		"FuzzReadLog": {
			"bare_checkpoint":   {log, bare},
			"signed_checkpoint": {log, signed},
			"no_checkpoint":     {log, []byte{}},
			"torn":              {log[:len(log)-50], bare},
			"flipped":           {flipped, bare},
			"unsealed_tail":     {log, emptyCP},
			"empty":             {empty, emptyCP},
			"unknown_members":   {withExtra, withExtraCP},
			"not_records":       {[]byte("{}\n\n{\"chain\":1,\"audit\":{}}\n"), []byte{}},
			"duplicate_line":    {append(bytes.Clone(firstLine), firstLine...), []byte{}},
		},
		"FuzzLogLine": {
			"reference":       {"dev-0001", "", "", "", int64(3), 6.48, int64(1796048254979964000), int16(0), uint8(2), uint8(0), uint8(0)},
			"every_field":     {"dev-\"é\"\t", "gw-1", "rec-😀", "", int64(1 << 53), 1e21, int64(1796048254000000000), int16(-90), uint8(5), uint8(3), uint8(31)},
			"outbox":          {"dev-1", "", "", `{"zone":"n"}`, int64(12), 0.5, int64(1796048254979964000), int16(60), uint8(2), uint8(0), uint8(127)},
			"unknown_members": {"d", "", "", `{ "x" : 1.50, "a":[1e2,"\u00e9"] }`, int64(0), 0.0, int64(0), int16(1439), uint8(1), uint8(1), uint8(0)},
			"negative_zero":   {"d", "", "", "", int64(0), math.Copysign(0, -1), int64(0), int16(0), uint8(1), uint8(0), uint8(8)},
			"year_1677":       {"d", "", "", "", int64(0), 0.5, int64(math.MinInt64), int16(-1439), uint8(1), uint8(0), uint8(0)},
			"invalid":         {"", "", "", "", int64(-1), math.NaN(), int64(0), int16(0), uint8(0), uint8(9), uint8(0)},
		},
		"FuzzParseChainEnvelope": {
			"writer_form":     {env(link, `"L/dev-1"`, "7")},
			"spaces_escapes":  {` { "chain" : { "seq" : 0 , "origin" : "L/d\u00e9v\"" , "link" : ` + link + ` } } `},
			"other_members":   {`{"chain":{"link":` + link + `,"origin":"L/d","seq":1},"message":"x"}`},
			"logging":         {`{"message":"mqtt_reconnect","levelname":"INFO"}`},
			"short_link":      {env(`"AAAA"`, `"L/d"`, "1")},
			"seq_exponent":    {env(link, `"L/d"`, "1e3")},
			"seq_negative":    {env(link, `"L/d"`, "-1")},
			"extra_member":    {`{"chain":{"link":` + link + `,"origin":"L/d","seq":1,"x":null}}`},
			"not_object":      {`[1,2]`},
			"empty":           {``},
			"lone_surrogate":  {env(link, `"L/\ud800"`, "1")},
			"duplicate_names": {`{"chain":{"seq":1,"seq":2}}`},
		},
	}
}

func TestLogFuzzCorpora(t *testing.T) {
	for test, seeds := range logFuzzSeeds(t) {
		dir := filepath.Join("testdata", "fuzz", test)
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, args := range seeds {
				var b strings.Builder
				b.WriteString("go test fuzz v1\n")
				for _, a := range args {
					switch a := a.(type) {
					case []byte:
						fmt.Fprintf(&b, "[]byte(%q)\n", a)
					case string:
						fmt.Fprintf(&b, "string(%q)\n", a)
					case int64:
						fmt.Fprintf(&b, "int64(%d)\n", a)
					case int16:
						fmt.Fprintf(&b, "int16(%d)\n", a)
					case uint8:
						fmt.Fprintf(&b, "byte(%q)\n", a)
					case float64:
						fmt.Fprintf(&b, "float64(%s)\n", strconv.FormatFloat(a, 'g', -1, 64))
					default:
						t.Fatalf("seed argument %T", a)
					}
				}
				if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		files, err := os.ReadDir(dir)
		if err != nil || len(files) == 0 {
			t.Errorf("no seed corpus for %s in %s (go test -run TestLogFuzzCorpora -update writes it): %v", test, dir, err)
		}
	}
}
