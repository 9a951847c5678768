package auditfmt

import (
	"strconv"
	"time"
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
	if day > daysIn(month, year) {
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

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// AppendTimestamp appends ns as an RFC 3339 timestamp in the given UTC
// offset, with as many fraction digits as it needs (none for whole
// seconds) and the offset written as ±hh:mm, as Python writes it.
func AppendTimestamp(dst []byte, ns int64, offsetMin int16) []byte {
	t := time.Unix(0, ns+int64(offsetMin)*int64(time.Minute)).UTC()
	dst = t.AppendFormat(dst, "2006-01-02T15:04:05.999999999")
	sign := byte('+')
	off := int(offsetMin)
	if off < 0 {
		sign, off = '-', -off
	}
	return append(dst, sign, byte('0'+off/600), byte('0'+off/60%10), ':', byte('0'+off%60/10), byte('0'+off%10))
}

// Time returns the record's recorded_at as a time.Time in its original offset.
func (r *Record) Time() time.Time {
	return time.Unix(0, r.RecordedAt).In(time.FixedZone("", int(r.OffsetMin)*60))
}
