package analyze

// The words and numbers of findings' messages and explanations.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// ftoa writes a number of seconds as records write them.
func ftoa(s float64) string { return string(auditfmt.AppendFloat(nil, s)) }

// timeText writes Unix ns as RFC 3339 UTC, for explanations.
func timeText(ns int64) string { return time.Unix(0, ns).UTC().Format(time.RFC3339Nano) }

// nOf says "1 record" or "N records".
func nOf(n int, noun string) string { return countNoun(n, noun, noun+"s") }

// nTimes says "once", "twice" or "N times".
func nTimes(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}

// durText formats ns as a duration rounded to the microsecond.
func durText(ns int64) string { return time.Duration(ns).Round(time.Microsecond).String() }

// moreText says how many items were left out of a list of the first shown.
func moreText(n, shown int) string {
	if n <= shown {
		return ""
	}
	return fmt.Sprintf("; and %d more", n-shown)
}

// fmtNum formats a number as short as exact.
func fmtNum(f float64) string { return fmt.Sprint(f) }

// fmtSeconds writes a number of seconds for explanations, to the
// microsecond.
func fmtSeconds(s float64) string {
	if math.Abs(s) < 1e12 {
		s = math.Round(s*1e6) / 1e6
	}
	return strconv.FormatFloat(s, 'f', -1, 64)
}

// countNoun writes n with the singular or plural noun: "1 time", "2 times".
func countNoun(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// fmtTime writes Unix ns as an RFC 3339 UTC timestamp, for explanations.
func fmtTime(ns int64) string { return string(auditfmt.AppendTimestamp(nil, ns, 0)) }

// durS formats ns as seconds, as short as exact.
func durS(ns int64) string { return strconv.FormatFloat(float64(ns)/1e9, 'f', -1, 64) }

// upperFirst capitalises the first letter of s.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
