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
func timeText(ns int64) string { return string(prose(nil).timeNano(ns)) }

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
	return strconv.Itoa(n) + " times"
}

// durText formats ns as a duration rounded to the microsecond.
func durText(ns int64) string { return time.Duration(ns).Round(time.Microsecond).String() }

// moreText says how many items were left out of a list of the first shown.
func moreText(n, shown int) string {
	if n <= shown {
		return ""
	}
	return "; and " + strconv.Itoa(n-shown) + " more"
}

// fmtNum formats a number as short as exact.
func fmtNum(f float64) string { return fmt.Sprint(f) }

// fmtSeconds writes a number of seconds for explanations, to the
// microsecond.
func fmtSeconds(s float64) string { return string(prose(nil).secs(s)) }

// countNoun writes n with the singular or plural noun: "1 time", "2 times".
func countNoun(n int, one, many string) string { return string(prose(nil).count(n, one, many)) }

// fmtTime writes Unix ns as an RFC 3339 UTC timestamp, for explanations.
func fmtTime(ns int64) string { return string(auditfmt.AppendTimestamp(nil, ns, 0)) }

// durS formats ns as seconds, as short as exact.
func durS(ns int64) string { return string(prose(nil).durS(ns)) }

// upperFirst capitalises the first letter of s.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// prose is an explanation being written, piece by piece, as the
// explanations' fmt verbs would write each piece but with no fmt: the
// per-device rules write one explanation a finding, and fmt's boxing of
// every argument was most of what they cost (docs/performance.md).
type prose []byte

// s appends strs as they are (%s).
func (p prose) s(strs ...string) prose {
	for _, s := range strs {
		p = append(p, s...)
	}
	return p
}

// d appends n in decimal (%d).
func (p prose) d(n int64) prose { return strconv.AppendInt(p, n, 10) }

// time appends Unix ns as fmtTime writes it.
func (p prose) time(ns int64) prose { return auditfmt.AppendTimestamp(p, ns, 0) }

// timeNano appends Unix ns as timeText writes it.
func (p prose) timeNano(ns int64) prose {
	return time.Unix(0, ns).UTC().AppendFormat(p, time.RFC3339Nano)
}

// dur appends ns as durText writes it.
func (p prose) dur(ns int64) prose { return append(p, durText(ns)...) }

// secs appends a number of seconds as fmtSeconds writes it.
func (p prose) secs(s float64) prose {
	if math.Abs(s) < 1e12 {
		s = math.Round(s*1e6) / 1e6
	}
	return strconv.AppendFloat(p, s, 'f', -1, 64)
}

// durS appends ns as seconds, as durS writes them.
func (p prose) durS(ns int64) prose { return strconv.AppendFloat(p, float64(ns)/1e9, 'f', -1, 64) }

// count appends n with the singular or plural noun, as countNoun does.
func (p prose) count(n int, one, many string) prose {
	if n == 1 {
		return append(append(p, "1 "...), one...)
	}
	return append(append(strconv.AppendInt(p, int64(n), 10), ' '), many...)
}
