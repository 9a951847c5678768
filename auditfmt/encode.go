package auditfmt

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends the record as one line of seed-format NDJSON (without
// the newline): the required fields in schema order, then the optional
// fields that are set, then the unknown members of Extra. Envelope, Source
// and Line are not written. Decoding the result yields an equal record.
func (r *Record) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"client_id":`...)
	dst = AppendJSONString(dst, r.ClientID)
	dst = append(dst, `,"attempt":`...)
	dst = strconv.AppendInt(dst, r.Attempt, 10)
	dst = append(dst, `,"backoff_delay_s":`...)
	dst = AppendFloat(dst, r.BackoffDelayS)
	dst = append(dst, `,"outcome":"`...)
	dst = append(dst, r.Outcome.String()...)
	dst = append(dst, `","clean_session":`...)
	dst = strconv.AppendBool(dst, r.CleanSession)
	dst = append(dst, `,"recorded_at":"`...)
	dst = AppendTimestamp(dst, r.RecordedAt, r.OffsetMin)
	dst = append(dst, '"')
	if r.Has&HasSchema != 0 {
		dst = append(dst, `,"schema":`...)
		dst = strconv.AppendInt(dst, r.Schema, 10)
	}
	if r.HostID != "" {
		dst = append(dst, `,"host_id":`...)
		dst = AppendJSONString(dst, r.HostID)
	}
	if r.Stage != 0 {
		dst = append(dst, `,"stage":"`...)
		dst = append(dst, r.Stage.String()...)
		dst = append(dst, '"')
	}
	if r.AttemptID != "" {
		dst = append(dst, `,"attempt_id":`...)
		dst = AppendJSONString(dst, r.AttemptID)
	}
	if r.RecordID != "" {
		dst = append(dst, `,"record_id":`...)
		dst = AppendJSONString(dst, r.RecordID)
	}
	if r.Has&HasDeviceSeq != 0 {
		dst = append(dst, `,"device_seq":`...)
		dst = strconv.AppendInt(dst, r.DeviceSeq, 10)
	}
	if r.FailureClass != 0 {
		dst = append(dst, `,"failure_class":"`...)
		dst = append(dst, r.FailureClass.String()...)
		dst = append(dst, '"')
	}
	if r.Has&HasReasonCode != 0 {
		dst = append(dst, `,"reason_code":`...)
		dst = strconv.AppendInt(dst, r.ReasonCode, 10)
	}
	if r.Has&HasCeiling != 0 {
		dst = append(dst, `,"ceiling_s":`...)
		dst = AppendFloat(dst, r.CeilingS)
	}
	if r.Has&HasSessionPresent != 0 {
		dst = append(dst, `,"session_present":`...)
		dst = strconv.AppendBool(dst, r.SessionPresent)
	}
	if r.Has&HasOutboxDepth != 0 {
		dst = append(dst, `,"outbox_depth":`...)
		dst = strconv.AppendInt(dst, r.OutboxDepth, 10)
	}
	if r.Has&HasOutboxFlushed != 0 {
		dst = append(dst, `,"outbox_flushed":`...)
		dst = strconv.AppendInt(dst, r.OutboxFlushed, 10)
	}
	if r.Has&HasInboundRedelivered != 0 {
		dst = append(dst, `,"inbound_redelivered":`...)
		dst = strconv.AppendInt(dst, r.InboundRedelivered, 10)
	}
	if r.Has&HasInboundDuplicates != 0 {
		dst = append(dst, `,"inbound_duplicates":`...)
		dst = strconv.AppendInt(dst, r.InboundDuplicates, 10)
	}
	if r.Has&HasOutboxDropped != 0 {
		dst = append(dst, `,"outbox_dropped":`...)
		dst = strconv.AppendInt(dst, r.OutboxDropped, 10)
	}
	if r.Has&HasInboundExpired != 0 {
		dst = append(dst, `,"inbound_expired":`...)
		dst = strconv.AppendInt(dst, r.InboundExpired, 10)
	}
	if len(r.Extra) > 2 { // "{...}" with at least one member
		dst = append(dst, ',')
		dst = append(dst, r.Extra[1:len(r.Extra)-1]...)
	}
	return append(dst, '}')
}

// AppendFloat appends f as records write floats: the shortest form that
// parses back to f, plain below 1e21, with a ".0" on whole numbers as
// Python's repr writes them.
func AppendFloat(dst []byte, f float64) []byte {
	if k, ok := wholeMicros(f); ok {
		return appendMicros(dst, k)
	}
	start := len(dst)
	if math.Abs(f) < 1e21 {
		dst = strconv.AppendFloat(dst, f, 'f', -1, 64)
	} else {
		dst = strconv.AppendFloat(dst, f, 'g', -1, 64)
	}
	for _, c := range dst[start:] {
		if c == '.' || c == 'e' || c == 'N' || c == 'I' {
			return dst
		}
	}
	return append(dst, '.', '0')
}

// wholeMicros returns f in microseconds if f is a whole number of them in
// [0, 1e9): the delays and times clients log. For those, f's shortest
// decimal is the microseconds' decimal without trailing zeros: decimals
// with six fraction digits lie 1e-6 apart, more than twice the spacing of
// doubles below 1e9 (about 1.2e-7), so no shorter decimal rounds to f.
func wholeMicros(f float64) (int64, bool) {
	if !(f >= 0 && f < 1e9) || math.Signbit(f) {
		return 0, false
	}
	m := f * 1e6
	k := int64(m)
	return k, float64(k) == m && float64(k)/1e6 == f
}

// appendMicros appends k microseconds as seconds, with at least one
// fraction digit and no trailing zeros beyond it.
func appendMicros(dst []byte, k int64) []byte {
	dst = strconv.AppendInt(dst, k/1e6, 10)
	frac := k % 1e6
	if frac == 0 {
		return append(dst, '.', '0')
	}
	var digits [7]byte
	digits[0] = '.'
	for i := 6; i >= 1; i-- {
		digits[i] = byte('0' + frac%10)
		frac /= 10
	}
	end := 7
	for digits[end-1] == '0' {
		end--
	}
	return append(dst, digits[:end]...)
}

func formatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return string(AppendFloat(nil, f))
}

const hexDigits = "0123456789abcdef"

// AppendJSONString appends s as a JSON string. Invalid UTF-8 is written as
// U+FFFD; control characters, quote and backslash are escaped.
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) && plain8(s[i:i+8]) {
			i += 8
			continue
		}
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// plain8 reports whether none of the 8 bytes of s needs escaping in a JSON
// string or starts a multi-byte character: no byte below 0x20, none at or
// above 0x80, no '"' and no '\\', tested a word at a time.
func plain8(s string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	zero := func(x uint64) uint64 { return (x - ones) & ^x & highs } // a 0x80 bit in each byte of x that is 0 (and maybe above it)
	return (w&highs)|zero(w&^(ones*0x1f)&^highs)|zero(w^ones*'"')|zero(w^ones*'\\') == 0
}
