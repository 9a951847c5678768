package hashchain

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
