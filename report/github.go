package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/internal/safe"
)

// DefaultGitHubMax is the number of findings GitHub annotates when its
// limit is 0: GitHub Actions shows at most 10 annotations of each level for
// a step.
const DefaultGitHubMax = 10

// GitHub writes the findings, worst first, as GitHub Actions workflow
// commands that annotate the input line of each finding's first record:
// at most limit of them (DefaultGitHubMax if 0, all if negative), then a
// notice of how many more there are.
func GitHub(w io.Writer, r *analyze.Result, limit int) error {
	if limit == 0 {
		limit = DefaultGitHubMax
	}
	bw := bufio.NewWriter(w)
	shown := r.Findings
	if limit > 0 && len(shown) > limit {
		shown = shown[:limit]
	}
	for _, f := range shown {
		bw.WriteString(annotation(r, f))
		bw.WriteString(lineAnnotations(r, f))
	}
	if rest := r.Findings[len(shown):]; len(rest) > 0 {
		var bySev [analyze.Error + 1]int
		for _, f := range rest {
			if f.Severity <= analyze.Error {
				bySev[f.Severity]++
			}
		}
		msg := fmt.Sprintf("%d more %s not annotated (%d error, %d warning, %d info): stormaudit check --format text lists them",
			len(rest), pluralWord(len(rest), "finding"), bySev[analyze.Error], bySev[analyze.Warning], bySev[analyze.Info])
		fmt.Fprintf(bw, "::notice title=%s::%s\n", EscapeProperty("stormaudit check"), EscapeData(msg))
	}
	return bw.Flush()
}

// annotation returns the workflow command of one finding.
func annotation(r *analyze.Result, f analyze.Finding) string {
	var props []string
	if len(f.Records) > 0 {
		ref := f.Records[0]
		if ref.Source >= 0 && int(ref.Source) < len(r.Sources) && r.Sources[ref.Source] != "-" {
			props = append(props, "file="+EscapeProperty(r.Sources[ref.Source]),
				"line="+strconv.FormatInt(max(ref.Line, 1), 10))
		}
	}
	props = append(props, "title="+EscapeProperty("stormaudit "+f.Rule+": "+safe.Text(f.Device)))
	msg := f.Message
	if x := f.Explained(); x != "" {
		msg += "\n" + x
	}
	if len(f.Records) > 0 {
		msg += "\nrecords: " + recordsText(r.Sources, f.Records, DefaultRecords)
	}
	return "::" + githubLevel(f.Severity) + " " + strings.Join(props, ",") + "::" + EscapeData(safeLines(msg)) + "\n"
}

// maxLineAnnotations bounds the lines one finding annotates beyond its
// first record.
const maxLineAnnotations = 5

// lineAnnotations annotates the other lines a finding rests on that are
// no record (Row < 0: lines rejected at ingest), up to
// maxLineAnnotations in all with the finding's own: each is in the file
// where it was read, which the finding's explanation names it by.
func lineAnnotations(r *analyze.Result, f analyze.Finding) string {
	var b strings.Builder
	for i, ref := range f.Records {
		if i == 0 {
			if ref.Row >= 0 {
				return "" // a finding about records
			}
			continue
		}
		if i >= maxLineAnnotations || ref.Row >= 0 || int(ref.Source) >= len(r.Sources) || r.Sources[ref.Source] == "-" {
			break
		}
		fmt.Fprintf(&b, "::%s file=%s,line=%d,title=%s::%s\n", githubLevel(f.Severity), EscapeProperty(r.Sources[ref.Source]), max(ref.Line, 1),
			EscapeProperty("stormaudit "+f.Rule+": "+safe.Text(f.Device)), EscapeData(safeLines(f.Message+" (this line is one of them)")))
	}
	return b.String()
}

func githubLevel(s analyze.Severity) string {
	switch s {
	case analyze.Error:
		return "error"
	case analyze.Warning:
		return "warning"
	}
	return "notice"
}

var (
	dataEscaper     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	propertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

// EscapeData escapes the message of a workflow command: %, CR and LF.
func EscapeData(s string) string { return dataEscaper.Replace(s) }

// EscapeProperty escapes a property value of a workflow command: %, CR,
// LF, ":" and ",".
func EscapeProperty(s string) string { return propertyEscaper.Replace(s) }

// safeLines escapes each line of s for a person (safe.Text), keeping the
// line breaks that separate them.
func safeLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = safe.Text(l)
	}
	return strings.Join(lines, "\n")
}
