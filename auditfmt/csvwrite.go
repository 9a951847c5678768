package auditfmt

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// CSVWriter writes records as CSV with a header: the six required columns,
// then the optional columns, then the given extra columns (taken from each
// record's Extra, which must then hold only strings).
//
// Fields are quoted only when they hold a comma, a quote or a line break;
// rows end in "\n". Absent optional fields are empty cells, and so are
// extra columns the record's Extra does not name; an empty string in Extra
// is therefore not told apart from an absent member. Envelope, Source and
// Line are not written. Reading the output with CSVReader yields equal
// records.
type CSVWriter struct {
	w      *bufio.Writer
	extra  []string       // the extra columns
	index  map[string]int // an extra column's position in extra
	cells  []string       // the current record's extra cells
	buf    []byte
	header bool  // whether the header was written
	err    error // a bad extra column or an I/O error, returned from then on
}

// NewCSVWriter returns a writer of records to w with the given extra
// columns. An extra column must have a name that is non-empty, not a
// schema field (nor device_id) and not repeated; otherwise Write and Flush
// return an error. The header is written with the first record, or by
// Flush.
func NewCSVWriter(w io.Writer, extra []string) *CSVWriter {
	c := &CSVWriter{
		w:     bufio.NewWriterSize(w, 64<<10),
		extra: slices.Clone(extra),
		index: make(map[string]int, len(extra)),
		cells: make([]string, len(extra)),
	}
	for i, name := range extra {
		switch j, dup := c.index[name]; {
		case name == "":
			c.err = &FieldError{Expected: "a name for every extra column", Found: fmt.Sprintf("an empty name for extra column %d", i+1)}
		case dup:
			c.err = &FieldError{Field: name, Expected: "one column of each name", Found: fmt.Sprintf("extra columns %d and %d", j+1, i+1)}
		case csvColumnKind(name) != colExtra:
			c.err = &FieldError{Field: name, Expected: "an extra column that is not a schema field", Found: "a schema field"}
		}
		if c.err != nil {
			break
		}
		c.index[name] = i
	}
	return c
}

// Write writes one record, after the header if it is the first. It
// returns an error without writing anything when the record does not
// validate or its Extra does not fit the extra columns (a member that is
// not a string, or has no column).
func (c *CSVWriter) Write(rec *Record) error {
	if err := c.writeHeader(); err != nil {
		return err
	}
	if err := rec.Validate(); err != nil {
		return err
	}
	if err := c.splitExtra(rec.Extra); err != nil {
		return err
	}
	c.buf = c.appendRow(c.buf[:0], rec)
	_, c.err = c.w.Write(c.buf)
	return c.err
}

// Flush writes the header if no record was written, and any buffered data
// to the underlying writer.
func (c *CSVWriter) Flush() error {
	if err := c.writeHeader(); err != nil {
		return err
	}
	c.err = c.w.Flush()
	return c.err
}

func (c *CSVWriter) writeHeader() error {
	if c.err != nil || c.header {
		return c.err
	}
	c.header = true
	b := c.buf[:0]
	for k := colClientID; k < numCSVCols; k++ {
		b = append(b, csvNames[k]...)
		b = append(b, ',')
	}
	b = b[:len(b)-1]
	for _, name := range c.extra {
		b = appendCSVField(append(b, ','), name)
	}
	c.buf = append(b, '\n')
	_, c.err = c.w.Write(c.buf)
	return c.err
}

// splitExtra sets c.cells from a record's Extra.
func (c *CSVWriter) splitExtra(extra string) error {
	clear(c.cells)
	if extra == "" {
		return nil
	}
	members, err := csvExtraMembers(extra)
	if err != nil {
		return err
	}
	for _, m := range members {
		i, ok := c.index[m[0]]
		if !ok {
			return &FieldError{Field: m[0], Expected: "a member of Extra that has a column", Found: "no extra column of this name"}
		}
		c.cells[i] = m[1]
	}
	return nil
}

// appendRow appends rec as one CSV row, with its line break.
func (c *CSVWriter) appendRow(b []byte, rec *Record) []byte {
	b = appendCSVField(b, rec.ClientID)
	b = strconv.AppendInt(append(b, ','), rec.Attempt, 10)
	b = AppendFloat(append(b, ','), rec.BackoffDelayS)
	b = append(append(b, ','), rec.Outcome.String()...)
	b = strconv.AppendBool(append(b, ','), rec.CleanSession)
	b = AppendTimestamp(append(b, ','), rec.RecordedAt, rec.OffsetMin)
	b = appendCSVOptional(b, rec)
	for _, cell := range c.cells {
		b = appendCSVField(append(b, ','), cell)
	}
	return append(b, '\n')
}

// appendOptional appends the optional columns, each after a comma.
func appendCSVOptional(b []byte, rec *Record) []byte {
	b = append(b, ',')
	if rec.Has&HasSchema != 0 {
		b = strconv.AppendInt(b, rec.Schema, 10)
	}
	b = appendCSVField(append(b, ','), rec.HostID)
	b = append(append(b, ','), rec.Stage.String()...)
	b = appendCSVField(append(b, ','), rec.AttemptID)
	b = appendCSVField(append(b, ','), rec.RecordID)
	b = append(b, ',')
	if rec.Has&HasDeviceSeq != 0 {
		b = strconv.AppendInt(b, rec.DeviceSeq, 10)
	}
	b = append(append(b, ','), rec.FailureClass.String()...)
	b = append(b, ',')
	if rec.Has&HasReasonCode != 0 {
		b = strconv.AppendInt(b, rec.ReasonCode, 10)
	}
	b = append(b, ',')
	if rec.Has&HasCeiling != 0 {
		b = AppendFloat(b, rec.CeilingS)
	}
	b = append(b, ',')
	if rec.Has&HasSessionPresent != 0 {
		b = strconv.AppendBool(b, rec.SessionPresent)
	}
	b = append(b, ',')
	if rec.Has&HasOutboxDepth != 0 {
		b = strconv.AppendInt(b, rec.OutboxDepth, 10)
	}
	b = append(b, ',')
	if rec.Has&HasOutboxFlushed != 0 {
		b = strconv.AppendInt(b, rec.OutboxFlushed, 10)
	}
	b = appendOptInt(append(b, ','), rec.Has&HasInboundRedelivered != 0, rec.InboundRedelivered)
	b = appendOptInt(append(b, ','), rec.Has&HasInboundDuplicates != 0, rec.InboundDuplicates)
	b = appendOptInt(append(b, ','), rec.Has&HasOutboxDropped != 0, rec.OutboxDropped)
	return appendOptInt(append(b, ','), rec.Has&HasInboundExpired != 0, rec.InboundExpired)
}

// appendOptInt appends v when the record has it: an absent field is an
// empty cell.
func appendOptInt(b []byte, has bool, v int64) []byte {
	if !has {
		return b
	}
	return strconv.AppendInt(b, v, 10)
}

// appendCSVField appends s as a CSV field, quoted when it holds a comma, a
// quote or a line break.
func appendCSVField(b []byte, s string) []byte {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return append(b, s...)
	}
	b = append(b, '"')
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			break
		}
		b = append(b, s[:i+1]...)
		b = append(b, '"')
		s = s[i+1:]
	}
	b = append(b, s...)
	return append(b, '"')
}

// csvExtraMembers returns the members of Extra, which must be a JSON
// object of strings, as name and value pairs in order.
func csvExtraMembers(extra string) ([][2]string, error) {
	bad := func(err error) error {
		return &FieldError{Expected: "Extra holding a JSON object", Found: err.Error()}
	}
	dec := json.NewDecoder(strings.NewReader(extra))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, bad(fmt.Errorf("%q", extra))
	}
	var members [][2]string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, bad(err)
		}
		v, err := dec.Token()
		if err != nil {
			return nil, bad(err)
		}
		s, ok := v.(string)
		if !ok {
			return nil, &FieldError{Field: fmt.Sprint(k), Expected: "a string in Extra for an extra CSV column", Found: csvJSONKind(v)}
		}
		members = append(members, [2]string{fmt.Sprint(k), s})
	}
	return members, nil
}

func csvJSONKind(v json.Token) string {
	switch v {
	case json.Delim('{'):
		return "an object"
	case json.Delim('['):
		return "an array"
	case nil:
		return "null"
	case true, false:
		return "a boolean"
	}
	return "a number"
}
