package hashchain

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// The collector log is NDJSON, one record a line:
//
//	{"chain":{"link":"BASE64","origin":"LOG/CLIENT_ID","seq":N},"audit":RECORD}
//
// RECORD is appendAuditJSON of the record, without its Envelope. The
// line's bytes are exactly these: a reader re-encodes every record it
// reads and rejects a line that differs (see logState.verify).

// checkpointSuffix and checkpointTmpSuffix name a log's checkpoint file
// and the file a new checkpoint is written to before it replaces it.
const (
	checkpointSuffix    = ".checkpoint"
	checkpointTmpSuffix = ".checkpoint.tmp"
)

// quotedOrigin returns h.Origin as a JSON string, as the log's lines
// write it, made with the head (it is read concurrently).
func (h *Head) quotedOrigin() []byte { return h.quoted }

// linkBase64 is a link in standard base64, as lines write it.
type linkBase64 = [44]byte

// appendLinePrefix appends the start of a collector-log line, up to the
// record: {"chain":{"link":...,"origin":...,"seq":...},"audit":
func appendLinePrefix(dst []byte, link tlog.Hash, quotedOrigin []byte, seq int64) []byte {
	l := encodeLink(link)
	return appendLinePrefix64(dst, &l, quotedOrigin, seq)
}

func appendLinePrefix64(dst []byte, link *linkBase64, quotedOrigin []byte, seq int64) []byte {
	dst = append(dst, `{"chain":{"link":"`...)
	dst = append(dst, link[:]...)
	dst = append(dst, `","origin":`...)
	dst = append(dst, quotedOrigin...)
	dst = append(dst, `,"seq":`...)
	dst = strconv.AppendInt(dst, seq, 10)
	return append(dst, `},"audit":`...)
}

// ParseChainEnvelope extracts a record's place in a chain from the
// envelope a collector log wraps it in: envelope is auditfmt.Record.Envelope
// of a decoded line, the JSON object of the line's members other than
// "audit". Ingest uses it to recognise records that arrive already chained
// and to verify their links.
//
// It returns ok = false and no error when envelope is "" or an object that
// does not consist of exactly one member named "chain" (a logging envelope
// that has a "chain" member beside others is not a chain envelope). When
// it does, the member's value must be an object with exactly the members
// "link", a string holding 32 bytes in canonical standard base64 (44
// characters, padded); "origin", a non-empty string; and "seq", an integer
// >= 0 written in decimal digits only (no sign, fraction or exponent) that
// fits an int64; otherwise the error, an *auditfmt.FieldError, names the
// member ("chain", "chain.link", "chain.origin", "chain.seq") and says what
// was expected. Text that is not a JSON object (or that RFC 8785 rejects:
// invalid UTF-8, lone surrogates, a member named twice) is an error too.
// The members may come in any order and with any JSON whitespace.
//
// It does not check the position: that the origin is LOG/CLIENT_ID of
// the record, and that the link is the chain's, is the caller's to do.
func ParseChainEnvelope(envelope string) (origin string, seq int64, link tlog.Hash, ok bool, err error) {
	o, seq, link, ok, err := parseChainEnvelope([]byte(envelope))
	if !ok || err != nil {
		return "", 0, tlog.Hash{}, ok, err
	}
	return string(o), seq, link, true, nil
}

// parseChainEnvelope is ParseChainEnvelope on bytes; origin may alias
// text.
func parseChainEnvelope(text []byte) (origin []byte, seq int64, link tlog.Hash, ok bool, err error) {
	if len(text) == 0 {
		return nil, 0, tlog.Hash{}, false, nil
	}
	if origin, seq, link, ok = parseChainFast(text); ok {
		return origin, seq, link, true, nil
	}
	return parseChainSlow(text)
}

// parseChainFast parses the envelope a collector log writes,
// {"chain":{"link":"...","origin":"...","seq":N}} without whitespace,
// with an origin without escapes and a seq of at most 18 digits. It
// reports false for anything else, which parseChainSlow then reads.
func parseChainFast(b []byte) (origin []byte, seq int64, link tlog.Hash, ok bool) {
	const p1, p2, p3 = `{"chain":{"link":"`, `","origin":"`, `","seq":`
	const linkLen = 44
	if len(b) < len(p1)+linkLen+len(p2) || string(b[:len(p1)]) != p1 {
		return nil, 0, link, false
	}
	b = b[len(p1):]
	link, err := parseRoot(b[:linkLen])
	if err != nil {
		return nil, 0, link, false
	}
	b = b[linkLen:]
	if string(b[:len(p2)]) != p2 {
		return nil, 0, link, false
	}
	b = b[len(p2):]
	end := 0
	for end < len(b) && b[end] != '"' && b[end] != '\\' && b[end] >= 0x20 {
		end++
	}
	if end == 0 || end == len(b) || b[end] != '"' || !utf8.Valid(b[:end]) {
		return nil, 0, link, false
	}
	origin, b = b[:end], b[end:]
	if len(b) < len(p3) || string(b[:len(p3)]) != p3 {
		return nil, 0, link, false
	}
	b = b[len(p3):]
	digits := skipDigits(b, 0)
	if digits == 0 || digits > 18 || (b[0] == '0' && digits > 1) || string(b[digits:]) != "}}" {
		return nil, 0, link, false
	}
	for _, d := range b[:digits] {
		seq = seq*10 + int64(d-'0')
	}
	return origin, seq, link, true
}

// chainError returns the error of ParseChainEnvelope for the member field.
func chainError(field, expected, found string) error {
	return &auditfmt.FieldError{Field: field, Expected: expected, Found: found}
}

// parseChainSlow is parseChainEnvelope for any text: it checks the whole
// text with the RFC 8785 canonicalizer, then reads the chain member.
func parseChainSlow(text []byte) (origin []byte, seq int64, link tlog.Hash, ok bool, err error) {
	c := getCanonicalizer(text, false)
	defer putCanonicalizer(c)
	jsonErr := func(field string, err error) error {
		var je *JSONError
		if errors.As(err, &je) {
			return chainError(field, je.Expected, je.Found+" at byte "+strconv.Itoa(je.Offset+1))
		}
		return chainError(field, "JSON", err.Error())
	}
	var scratch []byte
	i := skipSpace(text, 0)
	if i >= len(text) || text[i] != '{' {
		return nil, 0, link, false, chainError("envelope", "a JSON object", describeAt(text, i))
	}
	// The whole text must be one JSON object; c.value checks it, names
	// twice included.
	end := 0
	if scratch, end, err = c.value(scratch, i); err != nil {
		return nil, 0, link, false, jsonErr("envelope", err)
	}
	if end = skipSpace(text, end); end != len(text) {
		return nil, 0, link, false, chainError("envelope", "the end of the text after the object", describeAt(text, end))
	}
	// Find the members: exactly one, named "chain"?
	members, chainAt := 0, -1
	i = skipSpace(text, i+1)
	for i < len(text) && text[i] == '"' {
		if i, err = c.string(i); err != nil {
			return nil, 0, link, false, jsonErr("envelope", err)
		}
		isChain := string(c.str) == "chain"
		i = skipSpace(text, skipSpace(text, i)+1) // past the ':'
		if isChain {
			chainAt = i
		}
		if scratch, i, err = c.value(scratch[:0], i); err != nil {
			return nil, 0, link, false, jsonErr("envelope", err)
		}
		members++
		i = skipSpace(text, skipSpace(text, i)+1) // past the ',' or '}'
	}
	if members != 1 || chainAt < 0 {
		return nil, 0, link, false, nil
	}
	origin, seq, link, err = parseChainMember(c, text, chainAt, jsonErr)
	if err != nil {
		return nil, 0, link, false, err
	}
	return origin, seq, link, true, nil
}

// parseChainMember reads the value of the "chain" member, at i in text,
// which c has already checked to be JSON.
func parseChainMember(c *canonicalizer, text []byte, i int, jsonErr func(string, error) error) (origin []byte, seq int64, link tlog.Hash, err error) {
	const expected = `an object {"link": BASE64, "origin": STRING, "seq": INTEGER}`
	if text[i] != '{' {
		return nil, 0, link, chainError("chain", expected, valueKind(text[i]))
	}
	const hasLink, hasOrigin, hasSeq = 1, 2, 4
	seen := 0
	i = skipSpace(text, i+1)
	for i < len(text) && text[i] == '"' {
		if i, err = c.string(i); err != nil {
			return nil, 0, link, jsonErr("chain", err)
		}
		name := string(c.str)
		i = skipSpace(text, skipSpace(text, i)+1) // past the ':'
		switch name {
		case "link":
			if text[i] != '"' {
				return nil, 0, link, chainError("chain.link", "a string of 32 bytes in canonical standard base64", valueKind(text[i]))
			}
			if i, err = c.string(i); err != nil {
				return nil, 0, link, jsonErr("chain.link", err)
			}
			if link, err = parseRoot(c.str); err != nil {
				return nil, 0, link, chainError("chain.link", "32 bytes in canonical standard base64 (44 characters ending in '=')", quoteClip(c.str))
			}
			seen |= hasLink
		case "origin":
			if text[i] != '"' {
				return nil, 0, link, chainError("chain.origin", "a non-empty string", valueKind(text[i]))
			}
			if i, err = c.string(i); err != nil {
				return nil, 0, link, jsonErr("chain.origin", err)
			}
			if len(c.str) == 0 {
				return nil, 0, link, chainError("chain.origin", "a non-empty string", "an empty string")
			}
			origin = bytes.Clone(c.str)
			seen |= hasOrigin
		case "seq":
			const expected = "an integer >= 0 in decimal digits (no sign, fraction or exponent), at most 9223372036854775807"
			if text[i] != '-' && !isDigit(text[i]) {
				return nil, 0, link, chainError("chain.seq", expected, valueKind(text[i]))
			}
			end, _ := scanNumber(text, i)
			n, perr := strconv.ParseInt(string(text[i:end]), 10, 64)
			if skipDigits(text, i) != end || perr != nil {
				return nil, 0, link, chainError("chain.seq", expected, clip(text[i:end]))
			}
			seq, i = n, end
			seen |= hasSeq
		default:
			return nil, 0, link, chainError("chain", "only the members link, origin and seq", strconv.Quote(name))
		}
		i = skipSpace(text, skipSpace(text, i)+1) // past the ',' or '}'
	}
	for _, m := range []struct {
		bit  int
		name string
	}{{hasLink, "link"}, {hasOrigin, "origin"}, {hasSeq, "seq"}} {
		if seen&m.bit == 0 {
			return nil, 0, link, chainError("chain."+m.name, "a member "+m.name, "nothing")
		}
	}
	return origin, seq, link, nil
}

// valueKind names the kind of the JSON value that starts with ch.
func valueKind(ch byte) string {
	switch {
	case ch == '{':
		return "an object"
	case ch == '[':
		return "an array"
	case ch == '"':
		return "a string"
	case ch == 't' || ch == 'f':
		return "a boolean"
	case ch == 'n':
		return "null"
	}
	return "a number"
}

// LogError says what is wrong with a collector log: which line, which
// chain, and what differs.
type LogError struct {
	Path   string // the log file
	Line   int64  // 1-based line number; 0 when the error is about the log as a whole
	Origin string // the chain of the line, when it is known
	Seq    int64  // the seq of the line, when Origin is known
	Err    error  // what differs
}

// Error reads "PATH:LINE: origin O seq N: what differs".
func (e *LogError) Error() string {
	var b strings.Builder
	b.WriteString("hashchain: ")
	b.WriteString(e.Path)
	if e.Line > 0 {
		b.WriteString(":")
		b.WriteString(strconv.FormatInt(e.Line, 10))
	}
	if e.Origin != "" {
		fmt.Fprintf(&b, ": origin %q seq %d", e.Origin, e.Seq)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the underlying error.
func (e *LogError) Unwrap() error { return e.Err }

// A logState verifies the lines of a collector log in order and keeps
// what a writer needs to go on: the chain heads and the tree.
type logState struct {
	path string // for errors
	log  string // LOG; "" until the first line says it (ReadLog without a checkpoint)

	chains  *Chains // nil until log is known
	tree    Tree
	records int64

	// snapAt is a tree size at which to keep the root in snapRoot (the
	// checkpoint's size); -1 for none.
	snapAt   int64
	snapRoot tlog.Hash

	dec                   auditfmt.Decoder
	rec                   auditfmt.Record
	env, rbuf, lbuf, xbuf []byte
}

func newLogState(path, log string, snapAt int64) *logState {
	s := &logState{path: path, log: log, snapAt: snapAt}
	if log != "" {
		s.chains = NewChains(log, false)
	}
	if snapAt == 0 {
		s.snapRoot = s.tree.Root()
	}
	return s
}

// notLogLine marks the errors of a line that is not a collector-log
// line at all (as opposed to one whose chain does not verify): a torn
// last line is one.
type notLogLine struct{ err error }

func (e *notLogLine) Error() string { return e.err.Error() }
func (e *notLogLine) Unwrap() error { return e.err }

// verify checks line n (1-based, without its newline) and, when it is
// right, adds it to the state. The error is a *LogError; its Err is a
// *notLogLine when the line does not read as a collector-log line.
func (s *logState) verify(line []byte, n int64) error {
	lineErr := func(origin string, seq int64, err error) error {
		return &LogError{Path: s.path, Line: n, Origin: origin, Seq: seq, Err: err}
	}
	if err := s.dec.Decode(line, &s.rec); err != nil {
		return lineErr("", 0, &notLogLine{fmt.Errorf("not a record: %w", err)})
	}
	s.env = append(s.env[:0], s.rec.Envelope...)
	origin, seq, link, ok, err := parseChainEnvelope(s.env)
	switch {
	case err != nil:
		return lineErr("", 0, &notLogLine{fmt.Errorf("malformed chain envelope: %w", err)})
	case !ok:
		found := "a flat record"
		if s.rec.Envelope != "" {
			found = "the envelope " + quoteClip(s.env)
		}
		return lineErr("", 0, &notLogLine{fmt.Errorf(`expected a record in a chain envelope {"chain":{"link":...,"origin":...,"seq":...},"audit":{...}}, found %s`, found)})
	}
	r := &s.rec
	r.Envelope = ""
	if s.chains == nil {
		if err := s.learnLog(origin, r.ClientID); err != nil {
			return lineErr(string(origin), seq, err)
		}
		s.chains = NewChains(s.log, false)
	}
	R, err := AppendRecordBytes(s.rbuf[:0], r)
	if err != nil {
		return lineErr(string(origin), seq, fmt.Errorf("record has no canonical bytes: %w", err))
	}
	s.rbuf = R
	h := RecordHash(R)
	// the line must be the one the writer writes for this record, before
	// the record may join its chain
	s.xbuf = auditfmt.AppendJSONString(s.xbuf[:0], string(origin))
	s.lbuf = append(r.AppendJSON(appendLinePrefix(s.lbuf[:0], link, s.xbuf, seq)), '}')
	if !bytes.Equal(s.lbuf, line) {
		return lineErr(string(origin), seq, fmt.Errorf("the line is %w (the bytes were changed)", formDiff(line, s.lbuf)))
	}
	if r.Extra != "" {
		// The decoder keeps unknown members as written, and R does not
		// see how they are written: the log holds them in RFC 8785 form.
		s.xbuf, err = AppendCanonicalJSON(s.xbuf[:0], []byte(r.Extra))
		if err != nil || string(s.xbuf) != r.Extra {
			return lineErr(string(origin), seq, fmt.Errorf("the unknown members are %w: the log holds them in their RFC 8785 form (the bytes were changed)", formDiff([]byte(r.Extra), s.xbuf)))
		}
	}
	pos := Pos{Origin: string(origin), Seq: seq, Link: link}
	if err := s.chains.Follow(r.ClientID, pos, h, false); err != nil {
		var ce *ChainError
		if errors.As(err, &ce) && ce.Field == "origin" {
			err = s.originError(origin, Origin(s.log, r.ClientID), r.ClientID)
		}
		return lineErr(pos.Origin, seq, err)
	}
	s.tree.Append(Leaf(pos))
	if s.records++; s.records == s.snapAt {
		s.snapRoot = s.tree.Root()
	}
	return nil
}

// learnLog sets LOG from the first line's origin, LOG/CLIENT_ID.
func (s *logState) learnLog(origin []byte, clientID string) error {
	log, ok := strings.CutSuffix(string(origin), "/"+clientID)
	if !ok || log == "" {
		return fmt.Errorf("origin: expected LOG/%s", clientID)
	}
	if _, err := parseOrigin([]byte(log)); err != nil {
		return fmt.Errorf("origin's log name %q: expected non-empty UTF-8 without control characters", log)
	}
	s.log = log
	return nil
}

// originError explains an origin that is not LOG/CLIENT_ID.
func (s *logState) originError(origin []byte, want, clientID string) error {
	if log, ok := strings.CutSuffix(string(origin), "/"+clientID); ok && log != s.log {
		return fmt.Errorf("origin: expected %q; the line was written under the log name %q, not %q", want, log, s.log)
	}
	return fmt.Errorf("origin: expected %q (LOG/client_id)", want)
}

// formDiff says where line first differs from the bytes the writer writes
// for the record it holds.
func formDiff(line, want []byte) error {
	i := 0
	for i < len(line) && i < len(want) && line[i] == want[i] {
		i++
	}
	at := func(b []byte) string {
		if i >= len(b) {
			return "the end of the line"
		}
		return quoteClip(b[i:min(len(b), i+16)])
	}
	return fmt.Errorf("not in the collector log's form at byte %d: found %s, the writer writes %s", i+1, at(line), at(want))
}

// A logLine is one line of a log as scanLines reads it.
type logLine struct {
	text    []byte // without the newline
	n       int64  // 1-based line number
	offset  int64  // of its first byte
	newline bool   // it ends in '\n' (only the last line may not)
	tooLong bool   // longer than a line may be; text is cut
	last    bool   // nothing follows it
}

// maxLogLine is the longest line a collector log may hold, without its
// newline: the decoder's limit.
const maxLogLine = auditfmt.MaxLineBytes

// scanLines calls fn for each line of r in order, and stops at its first
// error.
func scanLines(r io.Reader, fn func(*logLine) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	// long holds a line longer than br's buffer, gathered, or a line
	// copied out of br's buffer before Peek reads over it.
	var long []byte
	var offset int64
	for n := int64(1); ; n++ {
		text, err := br.ReadSlice('\n')
		size, tooLong := int64(len(text)), false
		if err == bufio.ErrBufferFull {
			long = append(long[:0], text...)
			for err == bufio.ErrBufferFull {
				text, err = br.ReadSlice('\n')
				size += int64(len(text))
				if !tooLong && len(long)+len(text) <= maxLogLine+1 {
					long = append(long, text...)
				} else {
					tooLong, long = true, long[:0]
				}
			}
			text = long
		}
		if err != nil && err != io.EOF {
			return err
		}
		if size == 0 {
			return nil
		}
		l := logLine{text: text, n: n, offset: offset, newline: err == nil, tooLong: tooLong, last: true}
		offset += size
		if l.newline {
			if !tooLong {
				l.text = text[:len(text)-1]
			}
			if br.Buffered() == 0 && len(long) == 0 {
				// Peek reads into the buffer that text is in.
				long = append(long, l.text...)
				l.text = long
			}
			_, perr := br.Peek(1)
			l.last = perr != nil
		}
		long = long[:0]
		if err := fn(&l); err != nil {
			return err
		}
		if !l.newline {
			return nil
		}
	}
}

// Recovery reports a torn final record that OpenWriter cut from a log: a
// last line without its newline, or a last line that is not a record, as
// a crash in the middle of a write leaves it. Nothing a checkpoint covers
// is ever cut.
type Recovery struct {
	Path   string // the log file
	Line   int64  // the 1-based line number of the torn record
	Offset int64  // where the log now ends: the end of the last complete record
	Cut    int64  // how many bytes were cut
	Reason string // why the line was torn
}

// String reads "PATH:LINE: cut N bytes at offset O: REASON".
func (r *Recovery) String() string {
	return fmt.Sprintf("%s:%d: cut %d bytes at offset %d (a torn final record): %s", r.Path, r.Line, r.Cut, r.Offset, r.Reason)
}

// scan verifies the lines of r. With recoverTail, a torn last line is not
// an error: it is returned as a Recovery (without Cut, which the caller
// knows from the file's size). end is the offset after the last complete
// record.
func (s *logState) scan(r io.Reader, recoverTail bool) (end int64, torn *Recovery, err error) {
	err = scanLines(r, func(l *logLine) error {
		var lerr error
		switch {
		case l.tooLong:
			lerr = &LogError{Path: s.path, Line: l.n, Err: &notLogLine{fmt.Errorf("line longer than %d bytes", maxLogLine)}}
		case !l.newline:
			lerr = &LogError{Path: s.path, Line: l.n, Err: &notLogLine{errors.New("the last line has no newline: a torn write")}}
		default:
			lerr = s.verify(l.text, l.n)
		}
		if lerr == nil {
			end = l.offset + int64(len(l.text)) + 1
			return nil
		}
		var nl *notLogLine
		if recoverTail && l.last && errors.As(lerr, &nl) {
			torn = &Recovery{Path: s.path, Line: l.n, Offset: l.offset, Reason: nl.err.Error()}
			return nil
		}
		return lerr
	})
	if err != nil {
		var le *LogError
		if !errors.As(err, &le) {
			err = fmt.Errorf("hashchain: read %s: %w", s.path, err)
		}
	}
	return end, torn, err
}

// LogReport is what ReadLog found in a collector log.
type LogReport struct {
	Path    string
	Log     string    // the log name LOG: the checkpoint's origin, else the prefix of the records' origins
	Records int64     // lines, each a verified record
	Bytes   int64     // the size of the log file
	Root    tlog.Hash // the root of the tree over all records
	Origins []OriginSummary

	// Checkpoint is the checkpoint file's, verified against the log; nil
	// when the log has no checkpoint file.
	Checkpoint *Checkpoint
	// Signed says whether the checkpoint file is a signed note (rather
	// than a bare checkpoint body).
	Signed bool
	// SignaturesChecked says whether the signatures were verified: ReadLog
	// was given verifiers. When it was not, Signers lists the names the
	// signature lines claim, unchecked.
	SignaturesChecked bool
	Signers           []string

	// Unsealed counts the records after the checkpoint (all of them when
	// there is none): records no signature covers yet. UnsealedFrom is the
	// line of the first of them, 0 when there are none.
	Unsealed     int64
	UnsealedFrom int64
}

// OriginSummary describes one chain of a log.
type OriginSummary struct {
	Origin  string
	Records int64     // its records: seq 0 to Records-1
	Head    tlog.Hash // the link of its last record
}

// ReadLog verifies the collector log at path and its checkpoint file
// (path + ".checkpoint") without writing anything: every line is a record
// in the log's form, every chain's seqs are contiguous from 0 and its
// links verify, the tree of the first SIZE records has the checkpoint's
// root, the log has at least SIZE records, and every line's origin is
// LOG/client_id, where LOG is the checkpoint's origin (without a
// checkpoint, the first line's origin less "/CLIENT_ID").
//
// With verifiers, the checkpoint must be a signed note with a valid
// signature by one of them (see OpenCheckpoint), and a log without a
// checkpoint file is an error. With nil verifiers the checkpoint may be
// signed or bare, and signatures are reported, not checked.
//
// A log whose last line has no newline fails: that is a torn write, which
// OpenWriter recovers. A log being written can show one.
//
// The first problem found is returned as a *LogError naming the line,
// its origin and seq when known, and what differs.
func ReadLog(path string, verifiers note.Verifiers) (*LogReport, error) {
	msg, err := os.ReadFile(path + checkpointSuffix)
	if errors.Is(err, os.ErrNotExist) {
		msg, err = nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("hashchain: read checkpoint: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("hashchain: read log: %w", err)
	}
	defer f.Close()
	return readLog(path, f, msg, verifiers)
}

// readLog is ReadLog on a log read from r and the contents of its
// checkpoint file (nil: none).
func readLog(path string, r io.Reader, checkpoint []byte, verifiers note.Verifiers) (*LogReport, error) {
	rep := &LogReport{Path: path}
	snapAt := int64(-1)
	switch {
	case checkpoint != nil:
		c, signed, signers, err := readCheckpointFile(checkpoint, verifiers)
		if err != nil {
			return nil, &LogError{Path: path + checkpointSuffix, Err: err}
		}
		rep.Checkpoint, rep.Signed, rep.Signers = &c, signed, signers
		rep.SignaturesChecked = verifiers != nil
		rep.Log, snapAt = c.Origin, c.Size
	case verifiers != nil:
		return nil, &LogError{Path: path + checkpointSuffix, Err: errors.New("no checkpoint file, so nothing is signed (verifiers were given)")}
	}
	s := newLogState(path, rep.Log, snapAt)
	end, _, err := s.scan(r, false)
	if err != nil {
		return nil, err
	}
	if err := s.checkCheckpoint(rep.Checkpoint); err != nil {
		return nil, err
	}
	rep.Log, rep.Records, rep.Bytes, rep.Root = s.log, s.records, end, s.tree.Root()
	rep.Unsealed = s.records
	if c := rep.Checkpoint; c != nil {
		rep.Unsealed = s.records - c.Size
	}
	if rep.Unsealed > 0 {
		rep.UnsealedFrom = s.records - rep.Unsealed + 1
	}
	if s.chains != nil {
		s.chains.Heads(func(_ string, h *Head) {
			rep.Origins = append(rep.Origins, OriginSummary{Origin: h.Origin, Records: h.Next, Head: h.Link})
		})
	}
	slices.SortFunc(rep.Origins, func(a, b OriginSummary) int { return cmp.Compare(a.Origin, b.Origin) })
	return rep, nil
}

// checkCheckpoint checks a log's checkpoint (nil: none) against the
// records s verified.
func (s *logState) checkCheckpoint(c *Checkpoint) error {
	switch {
	case c == nil:
		return nil
	case c.Origin != s.log:
		return &LogError{Path: s.path, Err: fmt.Errorf("the checkpoint is of the log %q, the records of the log %q", c.Origin, s.log)}
	case c.Size > s.records:
		return &LogError{Path: s.path, Line: s.records + 1, Err: fmt.Errorf("the log holds %d records, its checkpoint covers %d: sealed records were removed (the log was truncated)", s.records, c.Size)}
	case c.Root != s.snapRoot:
		return &LogError{Path: s.path, Line: c.Size, Err: fmt.Errorf("the tree of lines 1 to %d has the root %s, the checkpoint says %s: a sealed record was changed, removed, inserted or moved",
			c.Size, base64.StdEncoding.EncodeToString(s.snapRoot[:]), base64.StdEncoding.EncodeToString(c.Root[:]))}
	}
	return nil
}

// readCheckpointFile reads the contents of a checkpoint file (see
// ReadCheckpointFile): the checkpoint, whether it is signed, and the names
// of its signatures (verified with verifiers, claimed without).
func readCheckpointFile(msg []byte, verifiers note.Verifiers) (c Checkpoint, signed bool, signers []string, err error) {
	f, err := ReadCheckpointFile(msg, verifiers)
	if err != nil {
		return Checkpoint{}, false, nil, unprefixed{err}
	}
	return f.Checkpoint, f.Signed, f.Signers, nil
}

// unprefixed is an error of this package, without its "hashchain: "
// prefix, for wrapping in another of its errors.
type unprefixed struct{ err error }

func (e unprefixed) Error() string { return strings.TrimPrefix(e.err.Error(), "hashchain: ") }
func (e unprefixed) Unwrap() error { return e.err }
