package main

import (
	"fmt"
	"github.com/stormaudit/stormaudit/internal/sidefile"
	"io"

	"github.com/urfave/cli/v3"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/redact"
)

// redactor returns the Redactor --redact asks for, keyed by --redact-key,
// or nil without --redact.
func redactor(cmd *cli.Command, name string) (*redact.Redactor, error) {
	keyFile := cmd.String("redact-key")
	if !cmd.Bool("redact") {
		if keyFile != "" {
			return nil, usageErr("%s: --redact-key: give --redact too", name)
		}
		return nil, nil
	}
	if keyFile == "" {
		return redact.New(nil), nil
	}
	key, err := sidefile.Read(keyFile, sidefile.MaxKey)
	if err != nil {
		return nil, usageErr("%s: --redact-key: %v", name, err)
	}
	if len(key) < 16 {
		return nil, usageErr("%s: --redact-key: %s: expected a key of at least 16 bytes, found %d", name, keyFile, len(key))
	}
	return redact.New(key), nil
}

// redactColumn redacts one value of a dataset column that a device wrote:
// extra and envelope are JSON objects, the rest plain strings.
func redactColumn(red *redact.Redactor, column, v string) string {
	if column == "extra" || column == "envelope" {
		return red.JSON(column, v)
	}
	return red.String(column, v)
}

// redactRecord redacts the fields of r that a device wrote.
func redactRecord(red *redact.Redactor, r *auditfmt.Record) {
	r.ClientID = red.String("client_id", r.ClientID)
	for _, f := range []struct {
		name string
		v    *string
	}{{"host_id", &r.HostID}, {"attempt_id", &r.AttemptID}, {"record_id", &r.RecordID}} {
		if *f.v != "" {
			*f.v = red.String(f.name, *f.v)
		}
	}
	if r.Extra != "" {
		r.Extra = red.JSON("extra", r.Extra)
	}
	if r.Envelope != "" {
		r.Envelope = red.JSON("envelope", r.Envelope)
	}
}

// printRedacted says on w what red replaced: how many values of each kind
// in each field, never the values.
func printRedacted(w io.Writer, name string, red *redact.Redactor) {
	counts := red.Replaced()
	if len(counts) == 0 {
		fmt.Fprintf(w, "%s: redacted nothing: no credential or hardware identifier found\n", name)
		return
	}
	total, width := 0, 0
	for _, c := range counts {
		total += c.Values
		width = max(width, len(c.Field))
	}
	fmt.Fprintf(w, "%s: redacted %s with keyed pseudonyms:\n", name, plural(total, "value"))
	for _, c := range counts {
		field := c.Field
		if field == "" {
			field = "text"
		}
		fmt.Fprintf(w, "  %-*s %6d %s\n", width, field, c.Values, c.Kind)
	}
}
