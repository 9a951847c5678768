package brokerlog

import (
	"bufio"
	"bytes"
	"compress/gzip"
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
}

// Log is a broker log, read.
//
// Every record read is accounted for exactly once:
//
//	Lines == len(Events) + Skipped + Rejected + Blank
//
// where a record is a line, or for a JSON array an element.
type Log struct {
	Name   string // the name Read was given
	Format Format // the format read (Detect if the input had no records to tell it by)
	Gzip   bool   // the input was gzip-compressed

	// Events are the events read, sorted by At; events with the same At
	// keep the order of the file.
	Events []Event
	// Rejects are the records not understood, in the order read, at most
	// Options.MaxRejects of them.
	Rejects []Reject

	Lines    int // records read
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

// Read reads a broker log from r; name labels it in errors and in
// Log.Name. A gzip-compressed input is detected by its magic bytes and
// decompressed.
//
// Records that are not understood are rejects, not errors. Read returns
// an error only when r fails (naming the line), when the gzip header is
// bad, when it cannot tell the format from the first non-blank records,
// or when the input has records and not one of them is an event or a
// known line of the format (a *FormatError).
func Read(r io.Reader, name string, opt Options) (*Log, error) {
	if int(opt.Format) >= len(formatNames) {
		return nil, fmt.Errorf("brokerlog: %s: unknown format %d", name, opt.Format)
	}
	log := &Log{Name: name, Format: opt.Format}
	br := bufio.NewReaderSize(r, 64<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: gzip: %w", name, err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 64<<10)
		log.Gzip = true
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
				return nil, ioError(name, src.where(), err)
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
			if maxRejects < 0 || len(log.Rejects) < maxRejects {
				text := rec.text
				if len(text) > MaxRejectText {
					text = text[:MaxRejectText]
				}
				log.Rejects = append(log.Rejects, Reject{Line: rec.line, Field: out.field, Reason: out.why,
					Text: string(text), Length: rec.length})
			}
		case out.skip:
			log.Skipped++
		default:
			out.ev.Line = rec.line
			log.Events = append(log.Events, out.ev)
		}
	}
	for _, rec := range head {
		take(rec)
	}
	for {
		rec, ok, err := src.next()
		if err != nil {
			return nil, ioError(name, src.where(), err)
		}
		if !ok {
			break
		}
		take(rec)
	}

	if len(log.Events) == 0 && log.Skipped == 0 && log.Rejected > 0 {
		return nil, &FormatError{Name: name, Format: log.Format, Line: log.Rejects[0].Line, Reason: log.Rejects[0].String()}
	}
	slices.SortStableFunc(log.Events, func(a, b Event) int {
		switch {
		case a.At < b.At:
			return -1
		case a.At > b.At:
			return 1
		}
		return 0
	})
	return log, nil
}

// ioError names the input and the line being read when r failed.
func ioError(name string, line int, err error) error {
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
}

func (p *parser) parse(text []byte, out *outcome) {
	switch p.format {
	case Mosquitto:
		p.mosquitto(string(text), out)
	case HiveMQ:
		p.hivemq(string(text), out)
	case EMQX:
		p.emqx(text, out)
	case AWSIoT:
		p.awsIoT(text, out)
	}
}
