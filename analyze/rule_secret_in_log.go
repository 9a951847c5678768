package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/stormaudit/stormaudit/redact"
)

const secretInLogID = "secret-in-log"

// Secret is a value in a device's records that looks like a credential or
// a permanent hardware identifier (package redact defines the kinds): the
// field it is in and the record, never the value.
type Secret struct {
	// Field is the column (client_id, host_id, attempt_id, record_id), or
	// the path of a member of extra or envelope ("extra.mqtt.password").
	Field string
	Kind  redact.Kind
	At    int64 // the record's recorded_at
	Ref   Ref   // the record
}

// idMask names, in its own finding, a device whose client_id holds a
// credential: the pseudonyms are the same throughout one run.
var idMask = redact.New(nil)

// DeviceName returns how a device is named where its client id is listed
// without a finding of its own (JUnit's passing test cases): the
// pseudonym secret-in-log names it by when its client id holds a
// credential (not a MAC address, which every finding shows), else its
// client id.
func DeviceName(id string) string {
	credential := false
	redact.Scan("client_id", id, func(h redact.Hit) { credential = credential || h.Kind != redact.MAC })
	if credential {
		return idMask.String("client_id", id)
	}
	return id
}

// secretInLog flags devices whose records carry credentials or hardware
// identifiers, naming the fields and never the values.
type secretInLog struct{}

func (*secretInLog) Info() RuleInfo {
	return RuleInfo{ID: secretInLogID, Severity: Error, Title: "credentials or hardware identifiers in the audit records",
		Help: "A device's records carry values that look like credentials (password and token members, bearer tokens, PEM blocks, " +
			"JWTs, URLs with a password) or permanent hardware identifiers (MAC addresses), in any field, unknown members included. " +
			"Audit records travel to shared storage and into reports: they should carry the stage, the delay, the attempt count and a " +
			"failure class that reveals nothing. The finding names the fields, never the values; export and report take --redact."}
}

// secretField is what one field of a device carried: its kind, how many
// records, and the first.
type secretField struct {
	field string
	kind  redact.Kind
	n     int // records
	first Secret
	last  Ref // the last record counted
}

func (r *secretInLog) Device(c *Context, d *Device) {
	var fields []secretField
	add := func(s Secret, n int) { // n records, unless this one was counted
		k := slices.IndexFunc(fields, func(f secretField) bool { return f.field == s.Field && f.kind == s.Kind })
		if k < 0 {
			fields = append(fields, secretField{field: s.Field, kind: s.Kind, first: s, last: Ref{File: -2}})
			k = len(fields) - 1
		}
		if fields[k].last != s.Ref {
			fields[k].n, fields[k].last = fields[k].n+n, s.Ref
		}
	}
	if len(d.Events) > 0 {
		first := &d.Events[0]
		redact.Scan("client_id", d.ID, func(h redact.Hit) { // every record carries it
			add(Secret{Field: h.Field, Kind: h.Kind, At: first.At, Ref: first.Ref}, len(d.Events))
		})
	}
	for _, s := range d.Secrets { // a record's secrets are together
		add(s, 1)
	}
	if len(fields) == 0 {
		return
	}
	slices.SortFunc(fields, func(a, b secretField) int { return cmp.Or(cmp.Compare(a.field, b.field), cmp.Compare(a.kind, b.kind)) })
	c.Report(secretFinding(d, fields))
}

func secretFinding(d *Device, fields []secretField) Finding {
	sev := Warning // hardware identifiers alone
	var t tally
	var parts, lines []string
	for _, f := range fields {
		if f.kind != redact.MAC {
			sev = Error
		}
		t.add(f.first.At, f.first.Ref)
		parts = append(parts, f.field+" ("+f.kind.String()+")")
		lines = append(lines, fmt.Sprintf("%s looks like a %s in %s", f.field, f.kind, countNoun(f.n, "record", "records")))
	}
	f := t.finding(secretInLogID, sev, d)
	f.Kind = "secret-in-log/sensitive-value" // the fields and their kinds are in the message, one finding a device
	if slices.ContainsFunc(fields, func(f secretField) bool { return f.field == "client_id" && f.kind != redact.MAC }) {
		f.Device = DeviceName(d.ID) // this finding does not print the credential it reports
	}
	f.Message = fmt.Sprintf("records carry a credential or hardware identifier in %s", strings.Join(parts, ", "))
	f.Explanation = fmt.Sprintf("The device's records hold values that must not be in an audit log: %s. The values are not shown here "+
		"(a client_id that holds a credential is named by a pseudonym in this finding; one that is a MAC address is the finding's device, "+
		"as in every finding: share a redacted export instead); the "+
		"records listed are the first of each field. Audit records travel to shared storage and into after-action reports: write the stage, "+
		"the delay, the attempt count and a failure class, never credentials or permanent network identifiers, and redact what is "+
		"already written (stormaudit export --redact, report --redact).", strings.Join(lines, "; "))
	return f
}

func (r *secretInLog) Finish(*Context) {}
