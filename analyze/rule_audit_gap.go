package analyze

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/dataset"
)

// auditGap flags holes in the audit trail: attempts whose outcome was
// never recorded, device_seq numbers missing between two records of a
// device, and lines rejected at ingest.
type auditGap struct {
	First int64 // the earliest record of the log, Unix ns
	Seen  bool
	gaps  [][2]int // scratch: a device's attempts whose outcome is not recorded
}

func (r *auditGap) merge(next Rule) {
	n := next.(*auditGap)
	if n.Seen && (!r.Seen || n.First < r.First) {
		r.First, r.Seen = n.First, true
	}
}

func (*auditGap) Info() RuleInfo {
	return RuleInfo{ID: "audit-gap", Severity: Warning, Title: "attempts whose outcome was never recorded, sequence gaps, records rejected at ingest",
		Help: "A backoff_wait followed by another backoff_wait with no attempt_failed, refused or connected between (the " +
			"first attempt's outcome was never recorded); a device_seq number missing between two records of a device; " +
			"lines rejected at ingest (rejects.ndjson). The audit trail is what the review rests on: every hole in it is " +
			"an attempt the other rules could not see."}
}

func (r *auditGap) Device(c *Context, d *Device) {
	for i := range d.Events {
		if !r.Seen || d.Events[i].At < r.First {
			r.First, r.Seen = d.Events[i].At, true
		}
	}
	if f, ok := r.unrecordedOutcomes(d); ok {
		c.Report(f)
	}
	if f, ok := seqGaps(d); ok {
		c.Report(f)
	}
}

func (r *auditGap) Finish(c *Context) {
	if c.Manifest == nil || c.Manifest.Totals.Rejected == 0 {
		return
	}
	c.Report(rejectedFinding(c, r.First))
}

// unrecordedOutcomes reports the attempts of d whose backoff_wait is
// followed, with nothing but rate_limited_waits between, by another
// backoff_wait. The last attempt of a device is never one: the log may
// end while it waits, and silent-give-up judges that.
func (r *auditGap) unrecordedOutcomes(d *Device) (Finding, bool) {
	gaps := r.gaps[:0] // index of the attempt's backoff_wait, of the next one
	defer func() { r.gaps = gaps[:0] }()
	for k := 0; k+1 < len(d.Attempts); k++ {
		a, next := &d.Attempts[k], &d.Attempts[k+1]
		if a.Outcome >= 0 {
			continue
		}
		only := true
		for i := a.Backoff + 1; i < next.Backoff; i++ {
			only = only && d.Events[i].Outcome == auditfmt.RateLimitedWait
		}
		if only {
			gaps = append(gaps, [2]int{a.Backoff, next.Backoff})
		}
	}
	if len(gaps) == 0 {
		return Finding{}, false
	}
	f := Finding{Rule: "audit-gap", Kind: "audit-gap/outcome-not-recorded", Severity: Warning, Device: d.ID,
		Start: d.Events[gaps[0][0]].At, End: d.Events[gaps[len(gaps)-1][1]].At,
		Message: fmt.Sprintf("%s never recorded", nOf(len(gaps), "attempt outcome"))}
	var ex []gapText
	for k, g := range gaps {
		if len(f.Records) < MaxRefs {
			f.Records = append(f.Records, d.Events[g[0]].Ref, d.Events[g[1]].Ref)
		}
		if k < 3 {
			a, b := &d.Events[g[0]], &d.Events[g[1]]
			ex = append(ex, gapText{a.Attempt, a.At, nanos(a.Delay), b.Attempt, b.At})
		}
	}
	n := len(gaps)
	f.explainLater(func(p prose) prose {
		p = p.d(int64(n)).s(" of the device's attempts began with a backoff_wait that the next backoff_wait followed with no " +
			"attempt_failed, refused or connected between (rate_limited_waits aside): whether the socket-open failed or connected is not in the log. ")
		return appendGaps(p, ex).s(moreText(n, 3), ".")
	})
	return f, true
}

// gapText is an attempt whose outcome was not recorded: its
// backoff_wait's attempt number, time and delay (ns), and the next
// backoff_wait's.
type gapText struct {
	attempt, at, delay, nextAttempt, nextAt int64
}

// appendGaps appends what gs are, joined by "; ".
func appendGaps(p prose, gs []gapText) prose {
	for k, g := range gs {
		if k > 0 {
			p = p.s("; ")
		}
		p = p.s("attempt ").d(g.attempt).s(": backoff_wait at ").timeNano(g.at).s(" (delay ").dur(g.delay).
			s(", socket-open due ").timeNano(g.at + g.delay).s("), then backoff_wait attempt ").d(g.nextAttempt).s(" at ").timeNano(g.nextAt)
	}
	return p
}

// seqGaps reports the device_seq numbers missing between the lowest and
// the highest device_seq of d's records. Numbers before the first record
// or after the last are not gaps: the collection may have started late or
// ended early.
func seqGaps(d *Device) (Finding, bool) {
	var idx []int
	for i := range d.Events {
		if d.Events[i].Seq >= 0 {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp64(d.Events[a].Seq, d.Events[b].Seq) })
	var missing int64
	var holes [][2]int // indices of the records either side of a hole
	for k := 1; k < len(idx); k++ {
		lo, hi := d.Events[idx[k-1]].Seq, d.Events[idx[k]].Seq
		if hi > lo+1 {
			missing += hi - lo - 1
			holes = append(holes, [2]int{idx[k-1], idx[k]})
		}
	}
	if len(holes) == 0 {
		return Finding{}, false
	}
	f := Finding{Rule: "audit-gap", Kind: "audit-gap/device-seq-gap", Severity: Warning, Device: d.ID,
		Message: fmt.Sprintf("%s missing from device_seq", nOf(int(missing), "record"))}
	f.Start, f.End = d.Events[holes[0][0]].At, d.Events[holes[0][1]].At
	var ex []string
	for k, h := range holes {
		a, b := &d.Events[h[0]], &d.Events[h[1]]
		f.Start, f.End = min(f.Start, a.At, b.At), max(f.End, a.At, b.At)
		if len(f.Records) < MaxRefs {
			f.Records = append(f.Records, b.Ref, a.Ref)
		}
		if k < 3 {
			ex = append(ex, fmt.Sprintf("%s, between %d (%s at %s) and %d (%s at %s)", seqRange(a.Seq+1, b.Seq-1), a.Seq, a.Outcome, timeText(a.At), b.Seq, b.Outcome, timeText(b.At)))
		}
	}
	f.Explanation = fmt.Sprintf("The device numbers its records with device_seq; %s missing between %d and %d, in %s: %s%s. "+
		"Duplicates are removed at ingest, so each missing number is a record that was never collected (or was rejected at ingest).",
		numbersAre(missing), d.Events[idx[0]].Seq, d.Events[idx[len(idx)-1]].Seq, nOf(len(holes), "gap"), strings.Join(ex, "; "), moreText(len(holes), 3))
	return f, true
}

// numbersAre says "1 number is" or "N numbers are".
func numbersAre(n int64) string {
	if n == 1 {
		return "1 number is"
	}
	return fmt.Sprintf("%d numbers are", n)
}

// seqRange writes the numbers lo..hi.
func seqRange(lo, hi int64) string {
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d..%d", lo, hi)
}

// rejectLine is what audit-gap reads of a line of rejects.ndjson.
type rejectLine struct {
	Source string `json:"source"`
	Line   int64  `json:"line"`
	Error  string `json:"error"`
}

// rejectedFinding reports the lines rejected at ingest, as one fleet
// finding listing and locating (its records) the first MaxRefs of
// rejects.ndjson.
func rejectedFinding(c *Context, first int64) Finding {
	t := c.Manifest.Totals
	end := c.End
	if end == NoTime {
		end = first // no record was accepted
	}
	f := Finding{Rule: "audit-gap", Kind: "audit-gap/rejected-at-ingest", Severity: Warning, Device: Fleet, Start: first, End: end,
		Message: fmt.Sprintf("%s rejected at ingest: not in the dataset", nOf(int(t.Rejected), "line"))}
	var per []string
	for _, in := range c.Manifest.Inputs {
		if in.Rejected > 0 {
			per = append(per, fmt.Sprintf("%s: %d of %d lines", in.Name, in.Rejected, in.Lines))
		}
	}
	path := filepath.Join(c.Dataset, dataset.RejectsName)
	rejects, err := firstRejects(path, MaxRefs)
	var list []string
	for _, e := range rejects {
		list = append(list, e.text())
		if k := slices.Index(c.Sources, e.Source); k >= 0 && e.Line > 0 {
			f.Records = append(f.Records, Ref{File: -1, Row: -1, Source: int32(k), Line: e.Line})
		}
	}
	listed := fmt.Sprintf("the first %d are: %s", len(list), strings.Join(list, "; "))
	if len(list) == 1 {
		listed = "it is " + list[0]
	}
	if err != nil {
		listed = fmt.Sprintf("it could not be read (%v)", err)
	}
	f.Explanation = fmt.Sprintf("The manifest accounts for %d lines read: %d accepted, %d rejected, %d duplicates (rejected by input: %s). "+
		"A rejected line is a record no rule could check; the dataset's %s lists each with its source, line and error, and %s. "+
		"A device_seq gap or an unrecorded outcome of this rule may be one of these lines.",
		t.Lines, t.Accepted, t.Rejected, t.Duplicates, strings.Join(per, ", "), dataset.RejectsName, listed)
	return f
}

// text is "source:line: field: error".
func (e *rejectLine) text() string {
	if strings.HasPrefix(e.Error, fmt.Sprintf("%s:%d:", e.Source, e.Line)) {
		return e.Error
	}
	return fmt.Sprintf("%s:%d: %s", e.Source, e.Line, e.Error)
}

// firstRejects returns the first n lines of the rejects file at path.
func firstRejects(path string, n int) ([]rejectLine, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	dec := json.NewDecoder(fh)
	var out []rejectLine
	for len(out) < n {
		var e rejectLine
		if err := dec.Decode(&e); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return out, fmt.Errorf("entry %d: %w", len(out)+1, err)
		}
		out = append(out, e)
	}
	return out, nil
}
