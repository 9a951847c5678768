package hashchain

// appendTimestamp appends ns (Unix nanoseconds) in the UTC offset
// offsetMin exactly as auditfmt.AppendTimestamp writes it, without going
// through package time: YYYY-MM-DDTHH:MM:SS, the fraction without trailing
// zeros (none for whole seconds), and ±hh:mm. It computes the wall time
// with the same wrapping int64 arithmetic.
func appendTimestamp(dst []byte, ns int64, offsetMin int16) []byte {
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
	return appendDecimals(dst, uint64(frac), 9)
}

// appendDecimals appends "." and the n-digit decimal fraction frac
// (frac < 10^n) without its trailing zeros, or nothing when frac is 0.
func appendDecimals(dst []byte, frac uint64, n int) []byte {
	if frac == 0 {
		return dst
	}
	var digits [10]byte
	digits[0] = '.'
	for i := n; i >= 1; i-- {
		digits[i] = byte('0' + frac%10)
		frac /= 10
	}
	end := n + 1
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
