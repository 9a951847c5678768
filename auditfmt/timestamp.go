package auditfmt

import (
	"strconv"
	"time"

	"github.com/stormaudit/stormaudit/internal/calendar"
)

// ParseTimestamp parses an RFC 3339 timestamp with an explicit UTC offset,
// as Python's datetime.isoformat() writes it ("2026-11-30T14:17:34.979964+00:00")
// or with "Z". The fraction may have up to nine digits. It returns Unix
// nanoseconds and the offset in minutes.
func ParseTimestamp(b []byte) (ns int64, offsetMin int16, err error) {
	bad := func(what string) (int64, int16, error) {
		return 0, 0, &FieldError{Field: "recorded_at", Expected: "an RFC 3339 timestamp with a UTC offset, like 2026-11-30T14:17:34.979964+00:00", Found: what}
	}
	if len(b) < 19 {
		return bad(strconv.Quote(string(b)))
	}
	num := func(i, n int) int {
		v := 0
		for _, c := range b[i : i+n] {
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	year, month, day := num(0, 4), num(5, 2), num(8, 2)
	hour, min, sec := num(11, 2), num(14, 2), num(17, 2)
	if year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 ||
		min < 0 || min > 59 || sec < 0 || sec > 59 ||
		b[4] != '-' || b[7] != '-' || (b[10] != 'T' && b[10] != 't') || b[13] != ':' || b[16] != ':' {
		return bad(strconv.Quote(string(b)))
	}
	if day > calendar.DaysIn(year, month) {
		return bad(strconv.Quote(string(b)) + " (no such day)")
	}
	i, frac := 19, 0
	if i < len(b) && b[i] == '.' {
		i++
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		n := i - start
		if n == 0 || n > 9 {
			return bad(strconv.Quote(string(b)) + " (1 to 9 fraction digits)")
		}
		frac = num(start, n)
		for ; n < 9; n++ {
			frac *= 10
		}
	}
	rest := b[i:]
	switch {
	case len(rest) == 1 && (rest[0] == 'Z' || rest[0] == 'z'):
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, om := num(i+1, 2), num(i+4, 2)
		if oh < 0 || oh > 23 || om < 0 || om > 59 {
			return bad(strconv.Quote(string(b)))
		}
		offsetMin = int16(oh*60 + om)
		if rest[0] == '-' {
			offsetMin = -offsetMin
		}
	case len(rest) == 0:
		return bad(strconv.Quote(string(b)) + " (no UTC offset)")
	default:
		return bad(strconv.Quote(string(b)))
	}
	if year < 1678 || year > 2261 {
		return bad(strconv.Quote(string(b)) + " (years 1678 to 2261)")
	}
	t := time.Date(year, time.Month(month), day, hour, min, sec, frac, time.UTC)
	return t.UnixNano() - int64(offsetMin)*int64(time.Minute), offsetMin, nil
}

// AppendTimestamp appends ns as an RFC 3339 timestamp in the given UTC
// offset, with as many fraction digits as it needs (none for whole
// seconds) and the offset written as ±hh:mm, as Python writes it. It does
// not go through package time, but writes what time.Time.AppendFormat
// writes for the same instant, wrapping int64 arithmetic included.
func AppendTimestamp(dst []byte, ns int64, offsetMin int16) []byte {
	const nsPerSec, secPerDay = 1_000_000_000, 86400
	wall := ns + int64(offsetMin)*60*nsPerSec
	secs, frac := floorDiv(wall, nsPerSec)
	days, sod := floorDiv(secs, secPerDay)
	year, month, day := civil(days)
	dst = append(dst,
		byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+month/10), byte('0'+month%10), '-', byte('0'+day/10), byte('0'+day%10), 'T')
	dst = append2(dst, int(sod/3600), ':')
	dst = append2(dst, int(sod/60%60), ':')
	dst = append2(dst, int(sod%60), 0)
	dst = appendFraction(dst, frac)
	sign, off := byte('+'), int(offsetMin)
	if off < 0 {
		sign, off = '-', -off
	}
	dst = append(dst, sign)
	dst = append2(dst, off/60, ':')
	return append2(dst, off%60, 0)
}

// append2 appends v (0..99) in two digits and then sep, unless it is 0.
func append2(dst []byte, v int, sep byte) []byte {
	dst = append(dst, byte('0'+v/10), byte('0'+v%10))
	if sep != 0 {
		dst = append(dst, sep)
	}
	return dst
}

// appendFraction appends ".ddddddddd" for frac nanoseconds, without
// trailing zeros, or nothing when frac is 0.
func appendFraction(dst []byte, frac int64) []byte {
	if frac == 0 {
		return dst
	}
	var digits [10]byte
	digits[0] = '.'
	for i := 9; i >= 1; i-- {
		digits[i] = byte('0' + frac%10)
		frac /= 10
	}
	end := 10
	for digits[end-1] == '0' {
		end--
	}
	return append(dst, digits[:end]...)
}

// floorDiv returns the floor of a/b and the remainder in [0, b).
func floorDiv(a, b int64) (q, r int64) {
	q, r = a/b, a%b
	if r < 0 {
		q, r = q-1, r+b
	}
	return q, r
}

// civil returns the proleptic Gregorian date of a day counted from
// 1970-01-01 (H. Hinnant's days_from_civil, inverted).
func civil(days int64) (year, month, day int64) {
	z := days + 719468
	era, doe := floorDiv(z, 146097)
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	day = doy - (153*mp+2)/5 + 1
	month = mp + 3
	if mp >= 10 {
		month = mp - 9
	}
	year = yoe + era*400
	if month <= 2 {
		year++
	}
	return year, month, day
}

// Time returns the record's recorded_at as a time.Time in its original offset.
func (r *Record) Time() time.Time {
	return time.Unix(0, r.RecordedAt).In(time.FixedZone("", int(r.OffsetMin)*60))
}
