package brokerlog

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"
)

// Limits on what Read keeps.
const (
	// MaxLineBytes is the longest line (or JSON array element) Read
	// decodes; a longer one is read to its end, counted and rejected.
	MaxLineBytes = 1 << 20
	// MaxRejectText is how much of a rejected record Reject.Text keeps.
	MaxRejectText = 512
	// DefaultMaxRejects is how many rejects Read keeps when
	// Options.MaxRejects is 0.
	DefaultMaxRejects = 1000
	// DefaultMaxBytes is how much log text Read reads when
	// Options.MaxBytes is 0: 1 GiB, counted after gzip decompression, so
	// that no compression ratio decides what a log costs.
	DefaultMaxBytes = 1 << 30
)

// detectRecords is how many non-blank records Read looks at to tell the
// format.
const detectRecords = 16

// Options tune Read. The zero value detects the format and reads stamps
// without a zone as UTC.
type Options struct {
	// Format is the input's format; Detect (the zero value) tells it from
	// the first non-blank records.
	Format Format
	// TZ is the zone of stamps that name none: Mosquitto's
	// log_timestamp_format stamps (Mosquitto writes local time) and
	// HiveMQ's (the JVM's default zone). nil means UTC.
	TZ *time.Location
	// MaxRejects is how many rejects Log.Rejects keeps (Log.Rejected
	// counts them all); 0 means DefaultMaxRejects, a negative value keeps
	// every one.
	MaxRejects int
	// MaxBytes bounds the log's text, counted after gzip decompression:
	// an input holding more is refused with a *LimitError. 0 means
	// DefaultMaxBytes.
	MaxBytes int64
	// Reject, when set, hears every reject as it is read, beyond the
	// MaxRejects that Log.Rejects keeps (to write them all to a file).
	Reject func(Reject)
}

// Log is a broker log, read.
//
// Every record read is accounted for exactly once:
//
//	Lines == Found + Skipped + Rejected + Blank
//
// where a record is a line, or for a JSON array an element.
type Log struct {
	Name   string // the name Read was given
	Format Format // the format read (Detect if the input had no records to tell it by)
	Gzip   bool   // the input was gzip-compressed

	// Events are the events read, sorted by At; events with the same At
	// keep the order of the file. Scan leaves it nil: it hands each event
	// to its caller instead.
	Events []Event
	// Rejects are the records not understood, in the order read, at most
	// Options.MaxRejects of them.
	Rejects []Reject

	Lines    int // records read
	Found    int // records that are events (len(Events) after Read)
	Skipped  int // records understood and known to say nothing of connections ("Opening ipv4 listen socket", "Received PINGREQ")
	Rejected int // records not understood (len(Rejects) may be smaller)
	Blank    int // lines holding only white space
}

// FormatError says that Read could not tell the input's format, or that
// none of its records is of the format it was told.
type FormatError struct {
	Name   string // the input's name
	Format Format // the format Read was told or detected; Detect when it could not tell
	Line   int    // the first record that did not fit; 0 if none
	Reason string
}

func (e *FormatError) Error() string {
	where := e.Name
	if e.Line > 0 {
		where += ":" + strconv.Itoa(e.Line)
	}
	if e.Format == Detect {
		return where + ": cannot tell the broker log's format: " + e.Reason
	}
	return where + ": not a " + e.Format.String() + " log: " + e.Reason
}

// LimitError says that an input holds more log text than
// Options.MaxBytes allows (after gzip decompression).
type LimitError struct {
	Name  string // the input's name
	Limit int64  // the bound, in bytes
	Line  int    // the line being read when the bound was passed
	Gzip  bool   // the input was gzip-compressed
}

func (e *LimitError) Error() string {
	what := "of broker log text"
	if e.Gzip {
		what += " after gzip decompression"
	}
	return fmt.Sprintf("%s:%d: expected at most %d bytes %s, found more: a broker log past the limit is refused, not read in part (split it by time)",
		e.Name, e.Line, e.Limit, what)
}

// capReader reads at most max bytes of r, and fails with over when r
// holds more.
type capReader struct {
	r    io.Reader
	n    int64
	max  int64
	over *LimitError
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.n >= c.max {
		var one [1]byte
		n, err := c.r.Read(one[:])
		if n > 0 {
			return 0, c.over
		}
		return 0, err
	}
	n, err := c.r.Read(p[:min(int64(len(p)), c.max-c.n)])
	c.n += int64(n)
	return n, err
}

// Read reads a broker log from r; name labels it in errors and in
// Log.Name. A gzip-compressed input is detected by its magic bytes and
// decompressed. It keeps every event, sorted by time: what it costs
// grows with the events (Scan hands them over one at a time instead).
//
// Records that are not understood are rejects, not errors. Read returns
// an error only when r fails (naming the line), when the gzip header is
// bad, when the input holds more than Options.MaxBytes (a *LimitError),
// when it cannot tell the format from the first non-blank records, or
// when the input has records and not one of them is an event or a known
// line of the format (a *FormatError).
func Read(r io.Reader, name string, opt Options) (*Log, error) {
	var events []Event
	log, err := Scan(r, name, opt, func(e *Event) { events = append(events, *e) })
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(events, func(a, b Event) int { return cmp.Compare(a.At, b.At) })
	log.Events = events
	return log, nil
}

// Scan reads a broker log from r as Read does, and hands each event to
// fn in the order of the input (fn may not keep the pointer), instead of
// keeping them: its own memory is bounded by MaxLineBytes, the rejects
// it keeps and the format's state, whatever the input's length.
func Scan(r io.Reader, name string, opt Options, fn func(*Event)) (*Log, error) {
	if int(opt.Format) >= len(formatNames) {
		return nil, fmt.Errorf("brokerlog: %s: unknown format %d", name, opt.Format)
	}
	log := &Log{Name: name, Format: opt.Format}
	limit := opt.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	over := &LimitError{Name: name, Limit: limit}
	br := bufio.NewReaderSize(r, 64<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: gzip: %w", name, err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(&capReader{r: zr, max: limit, over: over}, 64<<10)
		log.Gzip, over.Gzip = true, true
	} else {
		br = bufio.NewReaderSize(&capReader{r: br, max: limit, over: over}, 64<<10)
	}
	if bom, _ := br.Peek(3); string(bom) == "\xef\xbb\xbf" {
		_, _ = br.Discard(3)
	}

	var src source = &lineSource{r: br}
	if first := firstByte(br); first == '[' && (opt.Format == Detect || opt.Format == EMQX || opt.Format == AWSIoT) {
		src = &arraySource{r: br, line: 1}
	}

	// Tell the format from the first non-blank records, keeping them
	// (blank lines are only counted: there may be any number of them).
	var head []record
	if log.Format == Detect {
		for len(head) < detectRecords {
			rec, ok, err := src.next()
			if err != nil {
				return nil, ioError(name, src.where(), err, over)
			}
			if !ok {
				break
			}
			if rec.blank {
				log.Lines++
				log.Blank++
				continue
			}
			head = append(head, rec)
			if f := detect(rec); f != Detect {
				log.Format = f
				break
			}
		}
		if log.Format == Detect {
			if len(head) == 0 {
				return log, nil // nothing to tell the format by: an empty log
			}
			return nil, &FormatError{Name: name, Line: head[0].line, Reason: "the first " + strconv.Itoa(len(head)) +
				" non-blank records are none of Mosquitto's, EMQX's, AWS IoT's or HiveMQ's"}
		}
	}

	p := &parser{format: log.Format, tz: opt.TZ}
	if p.tz == nil {
		p.tz = time.UTC
	}
	maxRejects := opt.MaxRejects
	if maxRejects == 0 {
		maxRejects = DefaultMaxRejects
	}
	take := func(rec record) {
		log.Lines++
		if rec.blank {
			log.Blank++
			return
		}
		var out outcome
		if rec.fault != "" {
			out.why = rec.fault
		} else {
			p.parse(rec.text, &out)
		}
		if out.why == "" && !out.skip && out.ev.Kind == Accepted && out.ev.Client == "" {
			out.reject("client", "expected the accepted client's id, found an empty one")
		}
		switch {
		case out.why != "":
			log.Rejected++
			text := rec.text
			if len(text) > MaxRejectText {
				text = text[:MaxRejectText]
			}
			rj := Reject{Line: rec.line, Field: out.field, Reason: out.why, Text: string(text), Length: rec.length}
			if maxRejects < 0 || len(log.Rejects) < maxRejects {
				log.Rejects = append(log.Rejects, rj)
			}
			if opt.Reject != nil {
				opt.Reject(rj)
			}
		case out.skip:
			log.Skipped++
		default:
			out.ev.Line = rec.line
			log.Found++
			fn(&out.ev)
		}
	}
	for _, rec := range head {
		take(rec)
	}
	for {
		rec, ok, err := src.next()
		if err != nil {
			return nil, ioError(name, src.where(), err, over)
		}
		if !ok {
			break
		}
		take(rec)
	}

	if log.Found == 0 && log.Skipped == 0 && log.Rejected > 0 {
		return nil, &FormatError{Name: name, Format: log.Format, Line: log.Rejects[0].Line, Reason: log.Rejects[0].String()}
	}
	return log, nil
}

// ioError names the input and the line being read when r failed; past
// the bound, it is the bound's *LimitError.
func ioError(name string, line int, err error, over *LimitError) error {
	if errors.Is(err, over) {
		over.Line = line
		return over
	}
	return fmt.Errorf("%s:%d: read: %w", name, line, err)
}

// detect returns the format a record is in, or Detect if it cannot tell.
func detect(rec record) Format {
	if rec.fault != "" {
		return Detect
	}
	text := bytes.TrimLeft(rec.text, " \t")
	if len(text) > 0 && text[0] == '{' {
		return detectJSON(text)
	}
	s := string(text)
	if isHiveMQ(s) {
		return HiveMQ
	}
	if isMosquitto(s) {
		return Mosquitto
	}
	return Detect
}

// outcome is what a parser made of one record: an event, a skip, or a
// reject (why set).
type outcome struct {
	ev    Event
	skip  bool
	field string
	why   string
}

func (o *outcome) reject(field, why string) { o.field, o.why = field, why }

// parser turns records of one format into outcomes.
type parser struct {
	format Format
	tz     *time.Location

	// subscriber is the client of the Mosquitto SUBSCRIBE or UNSUBSCRIBE
	// whose lines are being read (see mosquittoAfter); "" otherwise.
	subscriber string
	// wills holds what the Mosquitto log said of wills (see mosquittoWill)
	wills willState
}

func (p *parser) parse(text []byte, out *outcome) {
	switch p.format {
	case Mosquitto:
		p.mosquitto(string(text), out)
	case HiveMQ:
		p.hivemq(string(text), out)
	case EMQX:
		p.jsonEvent(&emqxEvents, text, out)
	case AWSIoT:
		p.jsonEvent(&awsIoTEvents, text, out)
	}
}
