package auditfmt

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// csvCol says which schema field a CSV column holds.
type csvCol uint8

// The columns, in the order CSVWriter writes them. The first six are
// required.
const (
	colExtra csvCol = iota // a column the schema does not know
	colClientID
	colAttempt
	colBackoffDelay
	colOutcome
	colCleanSession
	colRecordedAt
	colSchema
	colHostID
	colStage
	colAttemptID
	colRecordID
	colDeviceSeq
	colFailureClass
	colReasonCode
	colCeiling
	colSessionPresent
	colOutboxDepth
	colOutboxFlushed
	colInboundRedelivered
	colInboundDuplicates
	colOutboxDropped
	colInboundExpired
	numCSVCols
)

var csvNames = [numCSVCols]string{
	colClientID:           "client_id",
	colAttempt:            "attempt",
	colBackoffDelay:       "backoff_delay_s",
	colOutcome:            "outcome",
	colCleanSession:       "clean_session",
	colRecordedAt:         "recorded_at",
	colSchema:             "schema",
	colHostID:             "host_id",
	colStage:              "stage",
	colAttemptID:          "attempt_id",
	colRecordID:           "record_id",
	colDeviceSeq:          "device_seq",
	colFailureClass:       "failure_class",
	colReasonCode:         "reason_code",
	colCeiling:            "ceiling_s",
	colSessionPresent:     "session_present",
	colOutboxDepth:        "outbox_depth",
	colOutboxFlushed:      "outbox_flushed",
	colInboundRedelivered: "inbound_redelivered",
	colInboundDuplicates:  "inbound_duplicates",
	colOutboxDropped:      "outbox_dropped",
	colInboundExpired:     "inbound_expired",
}

// csvExpected says what a cell of each column must hold.
var csvExpected = [numCSVCols]string{
	colClientID:           "a non-empty string",
	colAttempt:            "an integer >= 0",
	colBackoffDelay:       delayExpected,
	colOutcome:            "one of " + strings.Join(outcomeNames[1:], ", "),
	colCleanSession:       "true or false",
	colRecordedAt:         "an RFC 3339 timestamp with a UTC offset, like 2026-11-30T14:17:34.979964+00:00",
	colSchema:             strconv.Itoa(SchemaVersion),
	colHostID:             "a string",
	colStage:              "link, address or session",
	colAttemptID:          "a string",
	colRecordID:           "a string",
	colDeviceSeq:          "an integer >= 0",
	colFailureClass:       "one of " + strings.Join(failureNames[1:], ", "),
	colReasonCode:         "an integer in 0..255",
	colCeiling:            delayExpected,
	colSessionPresent:     "true or false",
	colOutboxDepth:        "an integer >= 0",
	colOutboxFlushed:      "an integer >= 0",
	colInboundRedelivered: "an integer >= 0",
	colInboundDuplicates:  "an integer >= 0",
	colOutboxDropped:      "an integer >= 0",
	colInboundExpired:     "an integer >= 0",
}

func (k csvCol) required() bool { return k >= colClientID && k <= colRecordedAt }

// csvColumnKind returns the field a column of the given name holds.
func csvColumnKind(name string) csvCol {
	if name == "device_id" {
		return colClientID
	}
	for k := colClientID; k < numCSVCols; k++ {
		if csvNames[k] == name {
			return k
		}
	}
	return colExtra
}

// CSVReader reads audit records from CSV with a header row.
//
// The input is RFC 4180 CSV: comma-separated fields, fields quoted with
// '"' when they hold a comma, a quote or a line break, a quote inside a
// quoted field written twice, rows ending in "\n" or "\r\n". Line breaks
// inside quoted fields are kept as written. A UTF-8 byte order mark before
// the header is skipped.
//
// The header names the columns by their wire names, in any order:
// client_id (or its alias device_id), attempt, backoff_delay_s, outcome,
// clean_session and recorded_at are required; schema, host_id, stage,
// attempt_id, record_id, device_seq, failure_class, reason_code, ceiling_s,
// session_present, outbox_depth, outbox_flushed, inbound_redelivered,
// inbound_duplicates, outbox_dropped and inbound_expired are optional, and an empty cell in them means the
// field is absent. Columns the schema does not know are kept: their
// non-empty cells become the record's Extra, a JSON object of strings in
// header order.
//
// Cells hold integers in decimal, numbers as strconv.ParseFloat reads them
// (finite only, and without the underscores it takes between digits), booleans as true/false (also True/False, as Python
// writes them, and 1/0), timestamps as ParseTimestamp reads them, and
// outcomes, stages and failure classes by name.
//
// Nothing is skipped silently: a blank line, a malformed row or a row
// longer than MaxLineBytes is reported as a row error with its raw bytes,
// and reading goes on with the next row.
type CSVReader struct {
	br      *bufio.Reader
	limit   int         // the longest row accepted, in bytes
	cols    []csvColumn // the header's columns
	names   []string    // the header's column names
	split   csvSplitter
	raw     []byte // the current row as read, without its final line break
	extra   []byte // the current row's Extra being built
	line    int64  // physical lines read so far
	rowLine int64  // the line the current row starts on
	err     error  // a fatal error, returned from then on

	// a physical line read ahead: the start of the next row, found while
	// the current one looked for the close of a quote
	pending     []byte
	pendingTerm string
	hasPending  bool
	probe       csvSplitter // splits a line read ahead on its own

	lastClient, lastHost string // the previous row's values, reused when equal
}

type csvColumn struct {
	kind csvCol
	name string
	key  []byte // for unknown columns: the name as a JSON string, then ':'
}

var errCSVBlankLine = errors.New("blank line")

// NewCSVReader reads and checks the header. Header errors (missing required
// column, duplicate column, empty header, client_id and device_id both
// present) are *FieldError with Field = the column name; I/O errors are
// returned as is.
func NewCSVReader(r io.Reader) (*CSVReader, error) {
	c := &CSVReader{br: bufio.NewReaderSize(r, 64<<10), limit: MaxLineBytes}
	if err := c.skipBOM(); err != nil {
		return nil, err
	}
	err := c.readRow()
	switch {
	case err == io.EOF:
		return nil, &FieldError{Expected: "a header row naming the columns", Found: "an empty input"}
	case err == errCSVBlankLine:
		return nil, &FieldError{Expected: "a header row naming the columns", Found: "an empty line"}
	case err != nil:
		return nil, err
	}
	if err := c.setColumns(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *CSVReader) skipBOM() error {
	b, err := c.br.Peek(3)
	if string(b) == "\xef\xbb\xbf" {
		_, err = c.br.Discard(3)
		return err
	}
	if err != nil && err != io.EOF {
		return err
	}
	return nil
}

// setColumns checks the header row just read and sets up the columns.
func (c *CSVReader) setColumns() error {
	n := c.split.count()
	c.cols = make([]csvColumn, n)
	c.names = make([]string, n)
	seen := make(map[string]int, n)
	for i := range n {
		name := string(bytes.ToValidUTF8(c.split.field(i), []byte("\uFFFD")))
		if name == "" {
			return &FieldError{Expected: "a name for every column", Found: fmt.Sprintf("an empty name for column %d", i+1)}
		}
		if j, dup := seen[name]; dup {
			return &FieldError{Field: name, Expected: "one column of each name", Found: fmt.Sprintf("columns %d and %d", j+1, i+1)}
		}
		seen[name] = i
		c.names[i] = name
		c.cols[i] = csvColumn{kind: csvColumnKind(name), name: name}
		if c.cols[i].kind == colExtra {
			c.cols[i].key = append(AppendJSONString(nil, name), ':')
		}
	}
	c.split.names = c.names
	return c.checkRequired(seen)
}

func (c *CSVReader) checkRequired(seen map[string]int) error {
	i, hasClient := seen["client_id"]
	j, hasDevice := seen["device_id"]
	if hasClient && hasDevice {
		return &FieldError{Field: "device_id", Expected: "either client_id or its alias device_id", Found: fmt.Sprintf("both (columns %d and %d)", i+1, j+1)}
	}
	for k := colClientID; k.required(); k++ {
		name := csvNames[k]
		if _, ok := seen[name]; ok || (k == colClientID && hasDevice) {
			continue
		}
		want := "a header column (required)"
		if k == colClientID {
			want = "a header column, or its alias device_id (required)"
		}
		found := "no such column"
		if near := c.nearName(name); near != "" {
			found += " (there is " + strconv.Quote(near) + ")"
		}
		return &FieldError{Field: name, Expected: want, Found: found}
	}
	return nil
}

// nearName returns a header column whose name differs from name only in
// case or surrounding spaces, or "".
func (c *CSVReader) nearName(name string) string {
	for _, n := range c.names {
		if strings.EqualFold(strings.TrimSpace(n), name) {
			return n
		}
	}
	return ""
}

// Columns returns the header's column names.
func (c *CSVReader) Columns() []string { return slices.Clone(c.names) }

// ExtraColumns returns the names of the header's columns the schema does
// not know, in header order: the columns whose cells go into Extra. Pass
// them to NewCSVWriter to write the records back.
func (c *CSVReader) ExtraColumns() []string {
	var extra []string
	for _, col := range c.cols {
		if col.kind == colExtra {
			extra = append(extra, col.name)
		}
	}
	return extra
}

// Next decodes the next row into rec (reset first; Source left alone,
// rec.Line set to the 1-based physical line number where the row starts,
// the header being line 1). It returns the raw bytes of the row exactly as
// read (all physical lines, without the final newline) so that a rejected
// row can be quarantined verbatim, valid until the next call. Row errors
// are *FieldError (field = column name, or "" for the row as a whole, e.g.
// wrong number of fields: "expected 6 fields as in the header, found 7",
// or a bad quote) and do NOT stop the reader: the next call continues with
// the next row. At the end it returns io.EOF. Other errors are I/O errors
// and are fatal: every later call returns them again.
//
// On a row error rec holds only Source and Line. A row longer than
// MaxLineBytes is returned cut to its first MaxLineBytes bytes.
func (c *CSVReader) Next(rec *Record) (raw []byte, err error) {
	if c.err != nil {
		return nil, c.err
	}
	*rec = Record{Source: rec.Source}
	err = c.readRow()
	rec.Line = c.rowLine
	if err == nil {
		err = c.decode(rec)
	}
	if err == nil {
		return c.raw, nil
	}
	if err == errCSVBlankLine {
		return c.raw, &FieldError{Expected: "a CSV row", Found: "an empty line"}
	}
	if _, ok := err.(*FieldError); ok {
		*rec = Record{Source: rec.Source, Line: rec.Line}
		return c.raw, err
	}
	c.err = err
	return nil, err
}

// readRow reads the next row into c.raw and splits it into c.split. It
// returns io.EOF at the end of the input, errCSVBlankLine for an empty line,
// a *FieldError for a malformed row, or an I/O error.
func (c *CSVReader) readRow() error {
	c.raw = c.raw[:0]
	c.split.reset()
	c.rowLine = c.line + 1
	if c.hasPending {
		c.rowLine = c.line
	}
	term, err := c.readLine()
	switch {
	case err != nil:
		return err
	case len(c.raw) == 0:
		return errCSVBlankLine
	}
	for start := 0; c.split.scan(c.raw[start:]); {
		// Inside a quoted field: the line break belongs to the field,
		// unless the next line is a row of its own (the quote was never
		// closed): then this row ends before it, and it is the next row.
		end := len(c.raw)
		c.raw = append(c.raw, term...)
		start = len(c.raw)
		term, err = c.readLine()
		if err == nil && c.cols != nil && c.rowAlone(c.raw[start:]) {
			c.pending, c.pendingTerm, c.hasPending = append(c.pending[:0], c.raw[start:]...), term, true
			c.raw = c.raw[:end]
			c.split.malformed("a closing quote", fmt.Sprintf("none before line %d, which is a row of its own, in %s", c.line, c.split.where()))
			c.split.endField()
			break
		}
		c.split.buf = append(c.split.buf, c.raw[end:start]...)
		if err == io.EOF {
			c.raw = c.raw[:end]
			c.split.unterminated()
			break
		}
		if err != nil {
			return err
		}
	}
	return c.split.err()
}

// rowAlone reports whether line, split on its own, is a whole row that
// decodes: the start of a row, not the inside of a quoted field.
func (c *CSVReader) rowAlone(line []byte) bool {
	c.probe.reset()
	if c.probe.scan(line) || c.probe.bad != nil || c.probe.count() != len(c.cols) {
		return false
	}
	var rec Record
	return c.decodeSplit(&rec, &c.probe) == nil
}

// readLine appends the next physical line to c.raw without its line break
// and returns the line break ("\n", "\r\n", or "" at the end of the input).
// It returns io.EOF when nothing was left to read, and a *FieldError when
// the row grows beyond c.limit bytes; the row is then cut to c.limit bytes
// and the rest of the line is skipped.
func (c *CSVReader) readLine() (term string, err error) {
	if c.hasPending { // read ahead and counted already
		c.hasPending = false
		c.raw = append(c.raw, c.pending...)
		return c.pendingTerm, nil
	}
	start := len(c.raw)
	for {
		chunk, err := c.br.ReadSlice('\n')
		c.raw = append(c.raw, chunk...)
		if len(c.raw) > c.limit+2 {
			return "", c.skipLine(err)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(c.raw) == start:
			return "", io.EOF
		case err != nil && err != io.EOF:
			return "", err
		}
		c.line++
		if bytes.HasSuffix(c.raw[start:], []byte("\r\n")) {
			term = "\r\n"
		} else if bytes.HasSuffix(c.raw[start:], []byte("\n")) {
			term = "\n"
		}
		c.raw = c.raw[:len(c.raw)-len(term)]
		if len(c.raw) > c.limit {
			c.raw = c.raw[:c.limit]
			return "", c.tooLong()
		}
		return term, nil
	}
}

// skipLine cuts an overlong row to c.limit bytes and skips the rest of its
// current physical line. err is the error of the last read.
func (c *CSVReader) skipLine(err error) error {
	c.raw = c.raw[:c.limit]
	for err == bufio.ErrBufferFull {
		_, err = c.br.ReadSlice('\n')
	}
	c.line++
	if err != nil && err != io.EOF {
		return err
	}
	return c.tooLong()
}

func (c *CSVReader) tooLong() error {
	return &FieldError{Expected: fmt.Sprintf("a row of at most %d bytes", c.limit), Found: "a longer row"}
}

// decode fills rec from the fields of the row just split.
func (c *CSVReader) decode(rec *Record) error { return c.decodeSplit(rec, &c.split) }

// decodeSplit fills rec from the fields of the row split in sp.
func (c *CSVReader) decodeSplit(rec *Record, sp *csvSplitter) error {
	if n := sp.count(); n != len(c.cols) {
		return &FieldError{Expected: fmt.Sprintf("%d fields as in the header", len(c.cols)), Found: strconv.Itoa(n)}
	}
	c.extra = c.extra[:0]
	for i := range c.cols {
		col := &c.cols[i]
		cell := sp.field(i)
		if len(cell) > 0 {
			if err := c.setField(rec, col, cell); err != nil {
				return err
			}
		} else if col.kind.required() {
			return &FieldError{Field: col.name, Expected: csvExpected[col.kind] + " (required)", Found: "an empty cell"}
		}
	}
	if len(c.extra) > 0 {
		rec.Extra = string(append(c.extra, '}'))
	}
	return rec.Validate()
}

// setField decodes a non-empty cell of column col into rec.
func (c *CSVReader) setField(rec *Record, col *csvColumn, cell []byte) error {
	ok := true
	switch col.kind {
	case colExtra:
		c.appendExtra(col, cell)
	case colClientID:
		rec.ClientID = csvReuse(&c.lastClient, cell)
	case colHostID:
		rec.HostID = csvReuse(&c.lastHost, cell)
	case colAttemptID:
		rec.AttemptID = string(cell)
	case colRecordID:
		rec.RecordID = string(cell)
	case colRecordedAt:
		return c.setTime(rec, cell)
	case colOutcome:
		rec.Outcome, ok = ParseOutcome(string(cell))
	case colStage:
		rec.Stage, ok = ParseStage(string(cell))
	case colFailureClass:
		rec.FailureClass, ok = ParseFailureClass(string(cell))
	default:
		ok = setScalar(rec, col.kind, cell)
	}
	if !ok {
		return &FieldError{Field: col.name, Expected: csvExpected[col.kind], Found: csvDescribe(col.kind, cell)}
	}
	return nil
}

// setScalar decodes a cell of a numeric or boolean column into rec.
func setScalar(rec *Record, kind csvCol, cell []byte) (ok bool) {
	switch kind {
	case colAttempt:
		rec.Attempt, ok = parseCSVInt(cell, 0, 1<<63-1)
	case colBackoffDelay:
		rec.BackoffDelayS, ok = parseCSVDelay(cell)
	case colCleanSession:
		rec.CleanSession, ok = parseCSVBool(cell)
	case colSchema:
		rec.Schema, ok = parseCSVInt(cell, SchemaVersion, SchemaVersion)
		rec.Has |= HasSchema
	case colDeviceSeq:
		rec.DeviceSeq, ok = parseCSVInt(cell, 0, 1<<63-1)
		rec.Has |= HasDeviceSeq
	case colReasonCode:
		rec.ReasonCode, ok = parseCSVInt(cell, 0, 255)
		rec.Has |= HasReasonCode
	case colCeiling:
		rec.CeilingS, ok = parseCSVDelay(cell)
		rec.Has |= HasCeiling
	case colSessionPresent:
		rec.SessionPresent, ok = parseCSVBool(cell)
		rec.Has |= HasSessionPresent
	case colOutboxDepth:
		rec.OutboxDepth, ok = parseCSVInt(cell, 0, 1<<63-1)
		rec.Has |= HasOutboxDepth
	case colOutboxFlushed:
		rec.OutboxFlushed, ok = parseCSVInt(cell, 0, 1<<63-1)
		rec.Has |= HasOutboxFlushed
	case colInboundRedelivered:
		rec.InboundRedelivered, ok = parseCSVInt(cell, 0, 1<<63-1)
		rec.Has |= HasInboundRedelivered
	case colInboundDuplicates:
		rec.InboundDuplicates, ok = parseCSVInt(cell, 0, 1<<63-1)
		rec.Has |= HasInboundDuplicates
	case colOutboxDropped:
		rec.OutboxDropped, ok = parseCSVInt(cell, 0, 1<<63-1)
		rec.Has |= HasOutboxDropped
	case colInboundExpired:
		rec.InboundExpired, ok = parseCSVInt(cell, 0, 1<<63-1)
		rec.Has |= HasInboundExpired
	}
	return ok
}

func (c *CSVReader) setTime(rec *Record, cell []byte) error {
	var err error
	rec.RecordedAt, rec.OffsetMin, err = ParseTimestamp(cell)
	if fe, ok := err.(*FieldError); ok && len(cell) > csvMaxQuoted {
		fe.Found = csvQuote(cell)
	}
	return err
}

// appendExtra adds a cell of an unknown column to the Extra being built.
// Invalid UTF-8 becomes U+FFFD here, so that Extra reads back the same
// after a round trip through JSON.
func (c *CSVReader) appendExtra(col *csvColumn, cell []byte) {
	if len(c.extra) == 0 {
		c.extra = append(c.extra, '{')
	} else {
		c.extra = append(c.extra, ',')
	}
	c.extra = append(c.extra, col.key...)
	if !utf8.Valid(cell) {
		cell = bytes.ToValidUTF8(cell, []byte("\uFFFD"))
	}
	c.extra = AppendJSONString(c.extra, string(cell))
}

// reuse returns cell as a string, reusing *last when it is equal, so that
// runs of rows from one device share one string.
func csvReuse(last *string, cell []byte) string {
	if string(cell) != *last {
		*last = string(cell)
	}
	return *last
}

func parseCSVInt(cell []byte, lo, hi int64) (int64, bool) {
	v, err := strconv.ParseInt(string(cell), 10, 64)
	return v, err == nil && v >= lo && v <= hi
}

func parseCSVDelay(cell []byte) (float64, bool) { return parseDelay(cell) }

func parseCSVBool(cell []byte) (value, ok bool) {
	switch string(cell) {
	case "true", "True", "1":
		return true, true
	case "false", "False", "0":
		return false, true
	}
	return false, false
}

// describeCell says what a rejected cell held: the number it parsed to
// when it is a number out of bounds, else the quoted text.
func csvDescribe(kind csvCol, cell []byte) string {
	var err error
	switch kind {
	case colAttempt, colSchema, colDeviceSeq, colReasonCode, colOutboxDepth, colOutboxFlushed, colInboundRedelivered, colInboundDuplicates,
		colOutboxDropped, colInboundExpired:
		var v int64
		if v, err = strconv.ParseInt(string(cell), 10, 64); err == nil {
			return strconv.FormatInt(v, 10)
		}
	case colBackoffDelay, colCeiling:
		var f float64
		if f, err = strconv.ParseFloat(string(cell), 64); err == nil && f != 0 && bytes.IndexByte(cell, '_') < 0 {
			return formatFloat(f)
		} // a zero that is rejected (-0, 1e-400), or 1_0, is shown as written
	}
	if errors.Is(err, strconv.ErrRange) {
		return csvQuote(cell) + " (out of range)"
	}
	return csvQuote(cell)
}

const csvMaxQuoted = 64

// quoteCell quotes a cell for an error message, cut to csvMaxQuoted bytes.
func csvQuote(cell []byte) string {
	if len(cell) <= csvMaxQuoted {
		return strconv.Quote(string(cell))
	}
	cut := csvMaxQuoted
	for cut > 0 && !utf8.RuneStart(cell[cut]) {
		cut--
	}
	return fmt.Sprintf("%q... (%d bytes)", cell[:cut], len(cell))
}
