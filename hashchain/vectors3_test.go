package hashchain

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
	"golang.org/x/mod/sumdb/tlog"
)

// The test vectors of version 3 of docs/hashchain.md, in
// testdata/hashchain/vectors3.json (and checkpoint3.note), which check.py
// recomputes without our code.

// vector3Input is one input line of a version 3 test dataset.
type vector3Input struct {
	source string
	line   int64
	text   string
}

// segmentInputs are the lines of the second version 3 test dataset, in
// storage order: a chain of 130 records (two whole segments of 64 and two
// records more) and a chain of 3, so that the tree has segment leaves,
// a leaf that ends both a segment and a prefix, and chain-end leaves. The
// records vary every field of B: every outcome, stage and failure class,
// each optional field, varints of one to eight bytes (attempt, seq, line,
// device_seq, reason_code 255), UTC offsets from -12:00 to +23:59, a
// negative Unix time, extra members and envelopes as written (escapes
// kept), the device_id alias, a null optional field, and a client_id and
// a source name beyond ASCII.
func segmentInputs() []vector3Input {
	outcomes := []string{"backoff_wait", "attempt_failed", "connected", "disconnected", "refused", "rate_limited_wait", "gave_up", "stopped"}
	stages := []string{"link", "address", "session"}
	failures := []string{"transient", "auth", "config", "unsupported", "overload", "unknown"}
	delays := []string{"0", "0.5", "1e-9", "2592000", "0.1", "3.75", "12.000", "6.25e-1"}
	offsets := []int{0, 330, -210, 840, -720, 60, 0, 1439}
	base := time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC).UnixNano()
	var in []vector3Input
	for i := range 130 {
		ns := base + int64(i)*1_234_567_891
		off := offsets[i%len(offsets)]
		local := time.Unix(0, ns).In(time.FixedZone("", off*60))
		at := local.Format("2006-01-02T15:04:05")
		switch i % 4 {
		case 0:
			at += local.Format(".000000") // six digits, as Python writes them
		case 1:
			at += local.Format(".999999999") // no trailing zeros
		case 2:
			at += local.Format(".000000000")
		}
		switch {
		case off != 0:
			at += local.Format("-07:00")
		case i%3 == 0:
			at += "Z"
		case i%3 == 1:
			at += "+00:00"
		default:
			at += "-00:00"
		}
		attempt := int64(i % 9)
		switch i {
		case 17:
			attempt = 300
		case 101:
			attempt = 1 << 40
		}
		id := `"client_id": "dev-0100"`
		if i == 9 {
			id = `"device_id": "dev-0100"`
		}
		rec := fmt.Sprintf(`{%s, "attempt": %d, "backoff_delay_s": %s, "outcome": %q, "clean_session": %t, "recorded_at": %q`,
			id, attempt, delays[i%len(delays)], outcomes[i%len(outcomes)], i%3 == 0, at)
		if i%5 == 0 {
			rec += `, "host_id": "gw-d"`
		}
		if i == 10 {
			rec += `, "stage": null`
		}
		if i%6 == 1 {
			rec += fmt.Sprintf(`, "stage": %q`, stages[i%3])
		}
		if i%7 == 2 {
			rec += fmt.Sprintf(`, "device_seq": %d`, i*1000+5)
		}
		if i%8 == 3 {
			rec += fmt.Sprintf(`, "failure_class": %q, "reason_code": %d`, failures[i/8%6], i*37%256)
		}
		if i%9 == 4 {
			rec += `, "schema": 1, "ceiling_s": 60.0`
		}
		if i%10 == 5 {
			rec += fmt.Sprintf(`, "session_present": %t, "outbox_depth": %d, "outbox_flushed": %d`, i%20 == 5, i*3, i)
		}
		if i%11 == 6 {
			rec += fmt.Sprintf(`, "attempt_id": "dev-0100/%d", "record_id": "r-%06d"`, i, i)
		}
		if i%12 == 7 {
			rec += `, "fw": "3.1-caf\u00e9",  "temp_c" : -4.5e1`
		}
		rec += "}"
		if i%13 == 8 {
			rec = `{"message": "mqtt", "levelname": "WARNING", "audit": ` + rec + `}`
		}
		in = append(in, vector3Input{"gw-d.ndjson", int64(i + 1), rec})
	}
	return append(in,
		vector3Input{"gw-\u00e9.ndjson", 1, `{"client_id": "\u03ba-0101", "attempt": 0, "backoff_delay_s": 0, "outcome": "connected", "clean_session": true, "recorded_at": "1969-12-31T23:00:00.25-00:30", "session_present": false}`},
		vector3Input{"gw-\u00e9.ndjson", 2, `{"client_id": "κ-0101", "attempt": 1, "backoff_delay_s": 2592000, "outcome": "attempt_failed", "clean_session": false, "recorded_at": "2026-12-01T00:00:00.123456789+23:59", "schema": 1, "host_id": "gw-ε", "stage": "link", "attempt_id": "κ/1", "record_id": "r-κ-1", "device_seq": 9007199254740992, "failure_class": "overload", "reason_code": 255, "ceiling_s": 1e-9, "session_present": true, "outbox_depth": 0, "outbox_flushed": 128}`},
		vector3Input{"gw-\u00e9.ndjson", 3, `{"ts": 1.5, "audit": {"client_id": "κ-0101", "attempt": 2, "backoff_delay_s": 0.25, "outcome": "gave_up", "clean_session": false, "recorded_at": "2026-12-01T00:00:01Z", "stage": "address", "failure_class": "unknown", "extra_flag": false, "nested": {"a": [1, 2.50, {"b": null}], "s": "tab\there \/ \u2028"}}, "logger": "gw"}`},
	)
}

// vector3Columns is a row as the dataset's columns hold it (docs/format.md),
// null for absent: what B is built from.
type vector3Columns struct {
	ClientID           string   `json:"client_id"`
	RecordedAt         int64    `json:"recorded_at"` // microseconds since the Unix epoch
	RecordedAtNs       *int32   `json:"recorded_at_ns"`
	RecordedOffsetMin  int16    `json:"recorded_offset_min"`
	Attempt            int64    `json:"attempt"`
	BackoffDelayS      float64  `json:"backoff_delay_s"`
	Outcome            string   `json:"outcome"`
	CleanSession       bool     `json:"clean_session"`
	Schema             *int64   `json:"schema"`
	HostID             *string  `json:"host_id"`
	Stage              *string  `json:"stage"`
	AttemptID          *string  `json:"attempt_id"`
	RecordID           *string  `json:"record_id"`
	DeviceSeq          *int64   `json:"device_seq"`
	FailureClass       *string  `json:"failure_class"`
	ReasonCode         *int64   `json:"reason_code"`
	CeilingS           *float64 `json:"ceiling_s"`
	SessionPresent     *bool    `json:"session_present"`
	OutboxDepth        *int64   `json:"outbox_depth"`
	OutboxFlushed      *int64   `json:"outbox_flushed"`
	InboundRedelivered *int64   `json:"inbound_redelivered"`
	InboundDuplicates  *int64   `json:"inbound_duplicates"`
	OutboxDropped      *int64   `json:"outbox_dropped"`
	InboundExpired     *int64   `json:"inbound_expired"`
	Extra              *string  `json:"extra"`
	Envelope           *string  `json:"envelope"`
	Source             string   `json:"source"`
	Line               int64    `json:"line"`
}

func columnsOf(r *auditfmt.Record, source string) *vector3Columns {
	us, rem := r.RecordedAt/1000, int32(r.RecordedAt%1000)
	if rem < 0 {
		us, rem = us-1, rem+1000
	}
	c := &vector3Columns{ClientID: r.ClientID, RecordedAt: us, RecordedOffsetMin: r.OffsetMin, Attempt: r.Attempt,
		BackoffDelayS: r.BackoffDelayS, Outcome: r.Outcome.String(), CleanSession: r.CleanSession, Source: source, Line: r.Line}
	if rem != 0 {
		c.RecordedAtNs = &rem
	}
	str := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	c.HostID, c.AttemptID, c.RecordID, c.Extra, c.Envelope = str(r.HostID), str(r.AttemptID), str(r.RecordID), str(r.Extra), str(r.Envelope)
	if r.Stage != 0 {
		c.Stage = str(r.Stage.String())
	}
	if r.FailureClass != 0 {
		c.FailureClass = str(r.FailureClass.String())
	}
	num := func(has auditfmt.Presence, v int64) *int64 {
		if r.Has&has == 0 {
			return nil
		}
		return &v
	}
	c.Schema, c.DeviceSeq, c.ReasonCode = num(auditfmt.HasSchema, r.Schema), num(auditfmt.HasDeviceSeq, r.DeviceSeq), num(auditfmt.HasReasonCode, r.ReasonCode)
	c.OutboxDepth, c.OutboxFlushed = num(auditfmt.HasOutboxDepth, r.OutboxDepth), num(auditfmt.HasOutboxFlushed, r.OutboxFlushed)
	c.InboundRedelivered = num(auditfmt.HasInboundRedelivered, r.InboundRedelivered)
	c.InboundDuplicates = num(auditfmt.HasInboundDuplicates, r.InboundDuplicates)
	c.OutboxDropped, c.InboundExpired = num(auditfmt.HasOutboxDropped, r.OutboxDropped), num(auditfmt.HasInboundExpired, r.InboundExpired)
	if r.Has&auditfmt.HasCeiling != 0 {
		c.CeilingS = &r.CeilingS
	}
	if r.Has&auditfmt.HasSessionPresent != 0 {
		c.SessionPresent = &r.SessionPresent
	}
	return c
}

// vector3Row is one row of a dataset of vectors3.json.
type vector3Row struct {
	Source  string          `json:"source"`
	Line    int64           `json:"line"`
	Input   string          `json:"input"`
	Columns *vector3Columns `json:"columns,omitempty"`
	Origin  string          `json:"origin"`
	Seq     int64           `json:"seq"`
	B       string          `json:"B"`    // hex
	Link    string          `json:"link"` // hex
	Leaf    bool            `json:"leaf"` // a leaf of the whole dataset's tree
}

// vector3Checkpoint is the checkpoint of a dataset's first Rows rows.
type vector3Checkpoint struct {
	Rows       int64   `json:"rows"`        // the checkpoint's SIZE
	Leaves     []int64 `json:"leaves"`      // the rows whose links are the tree's leaves, in order
	MerkleRoot string  `json:"merkle_root"` // hex: the RFC 6962 root of those leaves
	Root       string  `json:"root"`        // base64: the checkpoint's root
	Checkpoint string  `json:"checkpoint"`  // the checkpoint's body
}

// vector3Dataset is one test dataset of vectors3.json.
type vector3Dataset struct {
	About       string              `json:"about"`
	Genesis     map[string]string   `json:"genesis"` // link[-1] of each origin, hex
	Rows        []vector3Row        `json:"rows"`
	Checkpoints []vector3Checkpoint `json:"checkpoints"`
}

// vectors3 is testdata/hashchain/vectors3.json.
type vectors3 struct {
	About      string           `json:"about"`
	Log        string           `json:"log"`
	SegmentLen int              `json:"segment_len"`
	Datasets   []vector3Dataset `json:"datasets"`
}

const vectors3About = "Test vectors of docs/hashchain.md, version 3 (chain_version 3). Four datasets, each its rows in storage order " +
	"(the input line, where it was read, the dataset's columns for the first, third and fourth, the row's origin and seq, B and its link in hex, whether " +
	"its link is a leaf of the whole dataset's tree) and the checkpoints of some of its prefixes (SIZE rows; the rows whose links are " +
	"the leaves; the RFC 6962 root of those leaves in hex; the checkpoint's root in base64; the checkpoint body). check.py recomputes " +
	"every value from the inputs; checkpoint3.note is the second dataset's last checkpoint signed with the test-only key in test.pub."

// buildDataset3 chains inputs under version 3 and computes the
// checkpoints of the prefixes of sizes.
func buildDataset3(t *testing.T, about string, inputs []vector3Input, columns bool, sizes []int64) vector3Dataset {
	t.Helper()
	d := vector3Dataset{About: about, Genesis: map[string]string{}}
	var dec auditfmt.Decoder
	chains := NewChains3(vectorLog, true)
	links := map[string]tlog.Hash{}
	var pos []Pos
	for _, in := range inputs {
		var rec auditfmt.Record
		if err := dec.Decode([]byte(in.text), &rec); err != nil {
			t.Fatalf("%s:%d: %v", in.source, in.line, err)
		}
		rec.Line = in.line
		if _, err := AppendSourcedRecordBytes(nil, &rec, in.source); err != nil {
			t.Fatalf("%s:%d: no R, so ingest rejects it: %v", in.source, in.line, err)
		}
		origin := Origin(vectorLog, rec.ClientID)
		link, ok := links[origin]
		if !ok {
			link = Genesis3(origin)
			d.Genesis[origin] = hex.EncodeToString(link[:])
		}
		var seq int64
		if len(pos) > 0 && pos[len(pos)-1].Origin == origin {
			seq = pos[len(pos)-1].Seq + 1
		} else if ok {
			t.Fatalf("%s:%d: the rows of %s are not contiguous", in.source, in.line, origin)
		}
		B := AppendRecordBytes3(nil, &rec, seq, in.source)
		link = Link3(link, B)
		links[origin] = link
		// ingest's way, Chains.Append3, must give the same position
		if p := chains.Append3(rec.ClientID, func(s int64) []byte { return AppendRecordBytes3(nil, &rec, s, in.source) }); p != (Pos{origin, seq, link}) {
			t.Fatalf("%s:%d: Chains.Append3 gives %+v, the chain %s seq %d link %x", in.source, in.line, p, origin, seq, link)
		}
		// B reads back as the record
		back, bseq, bsource, err := DecodeRecordBytes3(B)
		if back.Source = rec.Source; err != nil || bseq != seq || bsource != in.source || back != rec {
			t.Fatalf("%s:%d: DecodeRecordBytes3: %+v %d %q %v, want %+v", in.source, in.line, back, bseq, bsource, err, rec)
		}
		pos = append(pos, Pos{origin, seq, link})
		row := vector3Row{Source: in.source, Line: in.line, Input: in.text, Origin: origin, Seq: seq,
			B: hex.EncodeToString(B), Link: hex.EncodeToString(link[:])}
		if columns {
			row.Columns = columnsOf(&rec, in.source)
		}
		d.Rows = append(d.Rows, row)
	}
	// the leaves by the rule of docs/hashchain.md, against Tree3
	leavesOf := func(n int64) []int64 {
		var leaves []int64
		for i := range n {
			if pos[i].Seq%SegmentLen == SegmentLen-1 || i == n-1 || pos[i+1].Seq == 0 {
				leaves = append(leaves, i)
			}
		}
		return leaves
	}
	for i := range d.Rows {
		for _, l := range leavesOf(int64(len(pos))) {
			d.Rows[i].Leaf = d.Rows[i].Leaf || l == int64(i)
		}
	}
	for _, n := range sizes {
		var t3 Tree3
		for _, p := range pos[:n] {
			t3.Add(p.Seq, p.Link)
		}
		leaves := leavesOf(n)
		var tree Tree
		for _, l := range leaves {
			tree.Append(pos[l].Link)
		}
		merkle := tree.Root()
		if t3.Rows() != n || t3.Leaves() != int64(len(leaves)) || t3.MerkleRoot() != merkle {
			t.Fatalf("%d rows: Tree3 has %d rows, %d leaves, merkle root %x; the rule gives %d leaves %v, root %x",
				n, t3.Rows(), t3.Leaves(), t3.MerkleRoot(), len(leaves), leaves, merkle)
		}
		c := Checkpoint{Origin: vectorLog, Size: t3.Rows(), Root: t3.Root()}
		d.Checkpoints = append(d.Checkpoints, vector3Checkpoint{Rows: n, Leaves: append([]int64{}, leaves...),
			MerkleRoot: hex.EncodeToString(merkle[:]), Root: base64.StdEncoding.EncodeToString(c.Root[:]), Checkpoint: string(c.Format())})
	}
	return d
}

// buildVectors3 computes the version 3 test vectors, and the last
// checkpoint of the second dataset signed.
func buildVectors3(t *testing.T) (v vectors3, note []byte) {
	var records []vector3Input
	for _, in := range vectorInputs {
		records = append(records, vector3Input(in))
	}
	v = vectors3{About: vectors3About, Log: vectorLog, SegmentLen: SegmentLen, Datasets: []vector3Dataset{
		buildDataset3(t, "The five records of vectors.json (version 2), chained under version 3, with the columns B is built from. "+
			"Every row ends its chain or is its chain's first row, and every chain is shorter than a segment.",
			records, true, []int64{0, 1, 2, 3, 4, 5}),
		buildDataset3(t, "A chain of 130 records (two whole segments and two records more) and a chain of 3. "+
			"Its checkpoints cut the first chain inside a segment (1, 63, 65, 100, 128 rows), at a segment's end (64 rows), "+
			"at its end (130 rows), and cut the second chain (131 rows).",
			segmentInputs(), false, []int64{0, 1, 63, 64, 65, 100, 128, 130, 131, 133}),
		buildDataset3(t, "A device back from an outage recording the messages its broker had queued for it: inbound_redelivered and "+
			"inbound_duplicates (flag bits 15 and 16, after the envelope's), alone, together, with the outbox fields, null, at 0 and at 2^53.",
			inboundInputs(), true, []int64{0, 2, 5}),
		buildDataset3(t, "Two devices recording what they lost to an outage: outbox_dropped and inbound_expired (flag bits 17 and 18, "+
			"after the inbound fields'), alone, together, with the outbox and inbound fields, in an envelope, beside an unknown member, null, "+
			"at 0 and at 2^53.",
			lostInputs(), true, []int64{0, 3, 4, 6}),
	}}
	last := v.Datasets[1].Checkpoints[len(v.Datasets[1].Checkpoints)-1]
	c, err := ParseCheckpoint([]byte(last.Checkpoint))
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := testKeys(t)
	if note, err = SignCheckpoint(c, signer); err != nil {
		t.Fatal(err)
	}
	return v, note
}

func TestVectors3(t *testing.T) {
	v, signed := buildVectors3(t)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"vectors3.json": buf.Bytes(), "checkpoint3.note": signed}
	checkVectorFiles(t, "TestVectors3", files)
	_, verifiers := testKeys(t)
	last := v.Datasets[1].Checkpoints[len(v.Datasets[1].Checkpoints)-1]
	if c, _, err := OpenCheckpoint(signed, verifiers); err != nil || string(c.Format()) != last.Checkpoint {
		t.Errorf("OpenCheckpoint of the signed vector: %+v, %v", c, err)
	}
}

// TestVectors3Cover checks that the version 3 vectors exercise what
// docs/hashchain.md says they do: every flag bit of B, every outcome,
// stage and failure class, multi-byte varints, negative times and
// offsets, segment leaves, chain-end leaves, and a leaf that is both.
func TestVectors3Cover(t *testing.T) {
	v, _ := buildVectors3(t)
	var flags uint64
	outcomes, stages, failures := map[auditfmt.Outcome]bool{}, map[auditfmt.Stage]bool{}, map[auditfmt.FailureClass]bool{}
	var negTime, negOffset, bigVarint bool
	for _, d := range v.Datasets {
		for _, row := range d.Rows {
			B, _ := hex.DecodeString(row.B)
			rec, _, _, err := DecodeRecordBytes3(B)
			if err != nil {
				t.Fatal(err)
			}
			flags |= flags3(&rec)
			outcomes[rec.Outcome], stages[rec.Stage], failures[rec.FailureClass] = true, true, true
			negTime = negTime || rec.RecordedAt < 0
			negOffset = negOffset || rec.OffsetMin < 0
			bigVarint = bigVarint || rec.DeviceSeq >= 1<<53
		}
	}
	if want := flagInboundExpired<<1 - 1; flags != want {
		t.Errorf("flags used %#x, want every bit %#x", flags, want)
	}
	if len(outcomes) != 8 || len(stages) != 4 || len(failures) != 7 || !negTime || !negOffset || !bigVarint {
		t.Errorf("outcomes %v stages %v failures %v negative time %t negative offset %t 8-byte varint %t", outcomes, stages, failures, negTime, negOffset, bigVarint)
	}
	seg := v.Datasets[1]
	var segEnd, chainEnd, both bool
	for i, row := range seg.Rows {
		last := i == len(seg.Rows)-1 || seg.Rows[i+1].Seq == 0
		segEnd = segEnd || row.Leaf && !last
		chainEnd = chainEnd || row.Leaf && last && row.Seq%SegmentLen != SegmentLen-1
	}
	for _, c := range seg.Checkpoints {
		both = both || c.Rows > 0 && seg.Rows[c.Rows-1].Seq%SegmentLen == SegmentLen-1 && seg.Rows[c.Rows].Seq != 0
	}
	if !segEnd || !chainEnd || !both {
		t.Errorf("segment leaves %t, chain-end leaves %t, a checkpoint ending at a segment's end %t", segEnd, chainEnd, both)
	}
}

// TestCheckPyCatches3 runs check.py on copies of the version 3 vectors with
// one value changed, and checks that it stops at that value: the recipe
// recomputes version 3 rather than reading it back. Whitespace added
// outside strings in an input line changes nothing (extra and envelope
// keep the text without it).
func TestCheckPyCatches3(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH")
	}
	flip := func(s any) string { // the hex or base64 text s with its first character changed
		b := []byte(s.(string))
		b[0] ^= 1
		return string(b)
	}
	type vec = map[string]any
	ds := func(v vec, i int) vec { return v["datasets"].([]any)[i].(vec) }
	row := func(v vec, d, i int) vec { return ds(v, d)["rows"].([]any)[i].(vec) }
	cp := func(v vec, d, i int) vec { return ds(v, d)["checkpoints"].([]any)[i].(vec) }
	for _, c := range []struct {
		name   string
		change func(v vec)
		want   string // check.py's complaint; "" for OK
	}{
		{"whitespace", func(v vec) {
			r := row(v, 1, 7) // one with extra members
			r["input"] = strings.ReplaceAll(r["input"].(string), `": `, "\"\t:\r\n ")
		}, ""},
		{"B", func(v vec) { row(v, 1, 70)["B"] = flip(row(v, 1, 70)["B"]) }, "v3 gw-d.ndjson:71: B"},
		{"input", func(v vec) {
			r := row(v, 1, 7)
			r["input"] = strings.Replace(r["input"].(string), `caf\u00e9`, `café`, 1)
		}, "v3 gw-d.ndjson:8: B"},
		{"columns", func(v vec) { row(v, 0, 2)["columns"].(vec)["extra"] = nil }, "v3 gw-b.ndjson:7: columns"},
		{"inbound column", func(v vec) { row(v, 2, 1)["columns"].(vec)["inbound_redelivered"] = json.Number("1499") }, "v3 dev-inbound.ndjson:2: columns"},
		{"inbound input", func(v vec) {
			r := row(v, 2, 2)
			r["input"] = strings.Replace(r["input"].(string), `"inbound_duplicates": 3`, `"inbound_duplicates": 2`, 1)
			delete(r, "columns")
		}, "v3 dev-inbound.ndjson:3: B"},
		{"lost column", func(v vec) { row(v, 3, 0)["columns"].(vec)["outbox_dropped"] = json.Number("11") }, "v3 dev-lost.ndjson:1: columns"},
		{"lost input", func(v vec) {
			r := row(v, 3, 2)
			r["input"] = strings.Replace(r["input"].(string), `"inbound_expired": 2`, `"inbound_expired": 1`, 1)
			delete(r, "columns")
		}, "v3 dev-lost.ndjson:3: B"},
		{"genesis", func(v vec) {
			g := ds(v, 1)["genesis"].(vec)
			for k := range g {
				g[k] = flip(g[k])
			}
		}, "v3 gw-d.ndjson:1: genesis"},
		{"link", func(v vec) { row(v, 1, 131)["link"] = flip(row(v, 1, 131)["link"]) }, "v3 gw-é.ndjson:2: link"},
		{"leaf row", func(v vec) { row(v, 1, 63)["leaf"] = false }, "v3 leaf rows"},
		{"leaves", func(v vec) { cp(v, 1, 3)["leaves"] = []any{62} }, "v3 64 rows: leaves"},
		{"merkle root", func(v vec) { cp(v, 1, 5)["merkle_root"] = flip(cp(v, 1, 5)["merkle_root"]) }, "v3 100 rows: merkle root"},
		{"root", func(v vec) { cp(v, 1, 5)["root"] = cp(v, 1, 6)["root"] }, "v3 100 rows: root"},
		{"body", func(v vec) {
			cp(v, 1, 5)["checkpoint"] = strings.Replace(cp(v, 1, 5)["checkpoint"].(string), "\n100\n", "\n99\n", 1)
		}, "v3 100 rows: checkpoint body"},
		{"signed", func(v vec) {
			c := cp(v, 1, 9)
			c["rows"], c["leaves"] = json.Number("131"), []any{63, 127, 129, 130}
			c["merkle_root"], c["root"], c["checkpoint"] = cp(v, 1, 8)["merkle_root"], cp(v, 1, 8)["root"], cp(v, 1, 8)["checkpoint"]
		}, "v3 signed checkpoint"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, name := range []string{"check.py", "vectors.json", "checkpoint.note", "test.pub", "vectors3.json", "checkpoint3.note"} {
				b, err := os.ReadFile(filepath.Join(vectorsDir, name))
				if err != nil {
					t.Fatal(err)
				}
				if name == "vectors3.json" {
					dec := json.NewDecoder(bytes.NewReader(b))
					dec.UseNumber()
					var v vec
					if err := dec.Decode(&v); err != nil {
						t.Fatal(err)
					}
					c.change(v)
					if b, err = json.Marshal(v); err != nil {
						t.Fatal(err)
					}
				}
				if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out, err := exec.Command(python, filepath.Join(dir, "check.py")).CombinedOutput()
			switch {
			case c.want == "" && (err != nil || strings.TrimSpace(string(out)) != "OK"):
				t.Errorf("check.py: %v\n%s", err, out)
			case c.want != "" && (err == nil || !strings.Contains(string(out), "AssertionError: "+c.want+"\n")):
				t.Errorf("check.py: %v, want it to stop with %q:\n%s", err, c.want, out)
			}
		})
	}
}

// inboundInputs are the lines of the third version 3 test dataset: one
// device's reconnect, its records after the connect carrying what it
// received of the broker's queue (inbound_redelivered) and how many of
// those its application saw twice (inbound_duplicates).
func inboundInputs() []vector3Input {
	const src = "dev-inbound.ndjson"
	head := `{"client_id": "dev-0301", "clean_session": false, `
	return []vector3Input{
		{src, 1, head + `"attempt": 0, "backoff_delay_s": 0, "outcome": "connected", "recorded_at": "2026-12-01T15:01:22.543772+00:00", "session_present": true, "inbound_redelivered": 0}`},
		{src, 2, head + `"attempt": 0, "backoff_delay_s": 0, "outcome": "disconnected", "recorded_at": "2026-12-01T15:01:27.5Z", "inbound_redelivered": 1500, "outbox_flushed": 12}`},
		{src, 3, head + `"attempt": 0, "backoff_delay_s": 1.5, "outcome": "backoff_wait", "recorded_at": "2026-12-01T15:01:27.6Z", "inbound_redelivered": 40, "inbound_duplicates": 3, "fw": "2.1"}`},
		{src, 4, `{"audit": {"client_id": "dev-0301", "clean_session": false, "attempt": 0, "backoff_delay_s": 0, "outcome": "connected", "recorded_at": "2026-12-01T15:01:29.1Z", "inbound_duplicates": 0, "inbound_redelivered": null}, "logger": "mqtt"}`},
		{src, 5, head + `"attempt": 0, "backoff_delay_s": 0, "outcome": "stopped", "recorded_at": "2026-12-01T15:02:00Z", "inbound_redelivered": 9007199254740992, "inbound_duplicates": 9007199254740992}`},
	}
}

// lostInputs are the lines of the fourth version 3 test dataset: two
// devices back from an outage, their records saying how many messages
// each dropped from a full outbox (outbox_dropped) and how many of the
// broker's queued messages it ignored as expired (inbound_expired).
func lostInputs() []vector3Input {
	const src = "dev-lost.ndjson"
	head := `{"client_id": "dev-0401", "clean_session": false, `
	return []vector3Input{
		{src, 1, head + `"attempt": 3, "backoff_delay_s": 4, "outcome": "backoff_wait", "recorded_at": "2026-12-02T09:30:00.25Z", "outbox_depth": 500, "outbox_dropped": 12}`},
		{src, 2, head + `"attempt": 0, "backoff_delay_s": 0, "outcome": "connected", "recorded_at": "2026-12-02T10:30:04.5+01:00", "session_present": true, "inbound_redelivered": 40, "inbound_duplicates": 1, "inbound_expired": 0, "outbox_flushed": 500, "outbox_dropped": 0}`},
		{src, 3, `{"level": "info", "audit": {"client_id": "dev-0401", "clean_session": false, "attempt": 0, "backoff_delay_s": 0, "outcome": "disconnected", "recorded_at": "2026-12-02T09:31:00Z", "inbound_expired": 2, "fw": "2.2", "outbox_dropped": null}}`},
		{src, 4, head + `"attempt": 0, "backoff_delay_s": 0, "outcome": "stopped", "recorded_at": "2026-12-02T09:32:00Z", "outbox_dropped": 9007199254740992, "inbound_redelivered": 9007199254740992, "inbound_expired": 9007199254740992}`},
		{src, 5, `{"client_id": "dev-0402", "clean_session": true, "attempt": 1, "backoff_delay_s": 0.5, "outcome": "attempt_failed", "recorded_at": "2026-12-02T09:30:01Z", "inbound_expired": 3}`},
		{src, 6, `{"client_id": "dev-0402", "clean_session": true, "attempt": 0, "backoff_delay_s": 0, "outcome": "connected", "recorded_at": "2026-12-02T09:30:02Z", "inbound_expired": null, "outbox_dropped": 1}`},
	}
}
