package brokerlog

import (
	"time"

	"github.com/stormaudit/stormaudit/internal/calendar"
)

// Stamps are parsed by hand: time.Parse wants one layout, and the stamps
// here come in several (T or space between date and time, '.' or ','
// before the fraction, any number of fraction digits, an optional zone).

// Bounds of the years a stamp may name: well inside what Unix nanoseconds
// in an int64 can hold (1677 to 2262).
const (
	minYear = 1900
	maxYear = 2200
)

// maxEpochSeconds is the last second of maxYear-1, so that an epoch stamp
// is in range exactly when a date stamp would be.
var maxEpochSeconds = time.Date(maxYear, 1, 1, 0, 0, 0, 0, time.UTC).Unix() - 1

// maxEpochMillis likewise bounds a millisecond stamp.
var maxEpochMillis = maxEpochSeconds*1000 + 999

// dateTime is a parsed date-and-time stamp.
type dateTime struct {
	at     int64         // Unix ns
	res    time.Duration // 1 s, or 10^-digits s for a fraction of that many digits
	digits int           // digits of the fraction, 0 for none
	zoned  bool          // the stamp named its zone (Z or an offset)
	n      int           // bytes of s the stamp took
}

// parseDateTime reads a stamp at the start of s:
//
//	YYYY-MM-DD(T| )hh:mm:ss[(.|,)fraction][Z|±hh:mm|±hhmm|±hh]
//
// A stamp without a zone is read in loc. The fraction may have 1 to 9
// digits.
func parseDateTime(s string, loc *time.Location) (dateTime, bool) {
	var d dateTime
	if len(s) < 19 {
		return d, false
	}
	year, ok1 := digitsAt(s, 0, 4)
	month, ok2 := digitsAt(s, 5, 2)
	day, ok3 := digitsAt(s, 8, 2)
	hour, ok4 := digitsAt(s, 11, 2)
	minute, ok5 := digitsAt(s, 14, 2)
	sec, ok6 := digitsAt(s, 17, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) ||
		s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') || s[13] != ':' || s[16] != ':' {
		return d, false
	}
	if year < minYear || year >= maxYear || month < 1 || month > 12 || day < 1 ||
		day > calendar.DaysIn(year, month) || hour > 23 || minute > 59 || sec > 59 {
		// a leap second's :60 would roll into the next minute (or day),
		// as 24:00:00 would: neither is read
		return d, false
	}
	i := 19
	nsec := 0
	d.res = time.Second
	if i < len(s) && (s[i] == '.' || s[i] == ',') && i+1 < len(s) && isDigit(s[i+1]) {
		i++
		scale := 100_000_000
		res := time.Second
		for i < len(s) && isDigit(s[i]) {
			if d.digits == 9 {
				return d, false
			}
			nsec += int(s[i]-'0') * scale
			scale /= 10
			res /= 10
			d.digits++
			i++
		}
		d.res = res
	}
	zone := loc
	if i < len(s) {
		switch c := s[i]; {
		case c == 'Z':
			zone, d.zoned = time.UTC, true
			i++
		case c == '+' || c == '-':
			off, n, ok := parseOffset(s[i:])
			if ok {
				zone, d.zoned = time.FixedZone("", off), true
				i += n
			}
		}
	}
	if zone == nil {
		zone = time.UTC
	}
	d.at = time.Date(year, time.Month(month), day, hour, minute, sec, nsec, zone).UnixNano()
	d.n = i
	return d, true
}

// parseOffset reads a zone offset "+hh:mm", "+hhmm" or "+hh" (or with
// '-') at the start of s and returns it in seconds east of UTC.
func parseOffset(s string) (seconds, n int, ok bool) {
	sign := 1
	if s[0] == '-' {
		sign = -1
	}
	h, okh := digitsAt(s, 1, 2)
	if !okh || h > 23 {
		return 0, 0, false
	}
	n, m := 3, 0
	switch {
	case len(s) >= 6 && s[3] == ':':
		mm, ok := digitsAt(s, 4, 2)
		if !ok || mm > 59 {
			return 0, 0, false
		}
		n, m = 6, mm
	case len(s) >= 5 && isDigit(s[3]):
		mm, ok := digitsAt(s, 3, 2)
		if !ok || mm > 59 {
			return 0, 0, false
		}
		n, m = 5, mm
	}
	return sign * (h*3600 + m*60), n, true
}

// parseEpoch reads Mosquitto's default stamp, decimal seconds since the
// Unix epoch, at the start of s, and returns it in ns and the bytes it
// took.
func parseEpoch(s string) (at int64, n int, ok bool) {
	var v int64
	for n < len(s) && isDigit(s[n]) {
		v = v*10 + int64(s[n]-'0')
		n++
		if v > maxEpochSeconds {
			return 0, 0, false
		}
	}
	if n == 0 {
		return 0, 0, false
	}
	return v * int64(time.Second), n, true
}

// digitsAt returns the decimal number held by s[i:i+n], which must be n
// digits.
func digitsAt(s string, i, n int) (int, bool) {
	if i+n > len(s) {
		return 0, false
	}
	v := 0
	for _, c := range []byte(s[i : i+n]) {
		if !isDigit(c) {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
