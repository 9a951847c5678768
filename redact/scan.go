package redact

import "strings"

// A span is one value-pattern match: the bytes s[start:end] that a
// redactor replaces, and what they look like.
type span struct {
	start, end int
	kind       Kind
}

// A finder returns the first match of its kind whose search starts at or
// after from, and where the next search starts.
type finder func(s string, from int) (sp span, next int, ok bool)

// finders in the order that breaks ties between two matches with the same
// start and end: the kinds a context names (Bearer, URL password) before
// the kinds read from a value's shape.
var finders = [...]finder{findPEM, findBearer, findURLPassword, findJWT, findMAC}

// eachSpan calls fn for every value-pattern match in s, in order. Matches
// that overlap are one span, the union of them, of the kind of the one
// that starts first (then the longer, then the earlier finder), so every
// byte any kind matched is covered.
func eachSpan(s string, fn func(span)) {
	mask := candidates(s)
	if mask == 0 {
		return
	}
	const n = len(finders)
	var (
		cand  [n]span
		from  [n]int
		state [n]uint8 // 0: look, 1: cand holds a match, 2: no more
	)
	for k := range n {
		if mask&(1<<k) == 0 {
			state[k] = 2
		}
	}
	var cur span // the union being built; cur.kind == 0 before the first
	for {
		best := -1
		for k := range n {
			if state[k] == 0 {
				if sp, next, ok := finders[k](s, from[k]); ok {
					cand[k], from[k], state[k] = sp, next, 1
				} else {
					state[k] = 2
				}
			}
			if state[k] != 1 {
				continue
			}
			if best < 0 || cand[k].start < cand[best].start ||
				cand[k].start == cand[best].start && cand[k].end > cand[best].end {
				best = k
			}
		}
		if best < 0 {
			break
		}
		sp := cand[best]
		state[best] = 0
		if cur.kind != 0 && sp.start < cur.end {
			cur.end = max(cur.end, sp.end)
			continue
		}
		if cur.kind != 0 {
			fn(cur)
		}
		cur = sp
	}
	if cur.kind != 0 {
		fn(cur)
	}
}

// Bits of candidates' result: which finders (by index in finders) may
// match.
const (
	maybePEM = 1 << iota
	maybeBearer
	maybeURL
	maybeJWT
	maybeMAC
)

// prefilter marks the bytes that candidates looks at.
var prefilter = [256]bool{' ': true, '\t': true, ':': true, '-': true, '.': true, 'e': true}

// candidates is the prefilter: one pass over s that rules out the kinds
// whose mark it lacks: white space (Bearer), "://", "eyJ", "--" (PEM),
// and the separators of a MAC address at their distances. An ordinary
// identifier, timestamp or version has none, or only a few that fail
// right away.
func candidates(s string) uint8 {
	if len(s) < minMatch {
		return 0
	}
	var m uint8
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !prefilter[c] {
			continue
		}
		switch c {
		case ' ', '\t':
			m |= maybeBearer
		case ':':
			if i+2 < len(s) && s[i+1] == '/' && s[i+2] == '/' {
				m |= maybeURL
			}
			if i+12 < len(s) && s[i+3] == c && s[i+6] == c && s[i+9] == c && s[i+12] == c {
				m |= maybeMAC
			}
		case '-':
			if i+1 < len(s) && s[i+1] == '-' {
				m |= maybePEM
			}
			if i+12 < len(s) && s[i+3] == c && s[i+6] == c && s[i+9] == c && s[i+12] == c {
				m |= maybeMAC
			}
		case '.':
			if i+5 < len(s) && s[i+5] == '.' {
				m |= maybeMAC
			}
		case 'e':
			if i+2 < len(s) && s[i+1] == 'y' && s[i+2] == 'J' {
				m |= maybeJWT
			}
		}
	}
	return m
}

// minMatch is the length of the shortest value any finder matches
// ("://:x@").
const minMatch = 6

// Scan reports the hits in one plain string field; field is its name, like
// "client_id". When the name is a credential key (IsCredentialKey), the
// value is one Password hit unless it is "", asterisks or a pseudonym;
// otherwise each value-pattern match in it is a hit, in order. Scan does
// not allocate unless it reports a hit.
func Scan(field, value string, fn func(Hit)) {
	if IsCredentialKey(field) {
		if isCredentialString(value) {
			fn(Hit{Field: field, Kind: Password})
		}
		return
	}
	eachSpan(value, func(sp span) { fn(Hit{Field: field, Kind: sp.kind}) })
}

// isCredentialString reports whether a string under a credential key is a
// credential: not empty, not masked with asterisks, not a pseudonym.
func isCredentialString(v string) bool {
	return v != "" && !isMasked(v) && !isPseudonym(v)
}

// MAC addresses.

// findMAC finds six hex pairs joined by ':' or '-' (one of them
// throughout), or three hex quads joined by '.', that stand on their own
// (macEdge) and name an individual, non-zero address.
func findMAC(s string, from int) (span, int, bool) {
	for i := from; i+14 <= len(s); i++ {
		if c := s[i+2]; (c == ':' || c == '-') && i+17 <= len(s) && macPairs(s[i:i+17], c) &&
			macEdge(s, i-1, -1, c) && macEdge(s, i+17, 1, c) && macIndividual(s[i:i+17]) {
			return span{i, i + 17, MAC}, i + 17, true
		}
		if s[i+4] == '.' && macQuads(s[i:i+14]) &&
			macEdge(s, i-1, -1, '.') && macEdge(s, i+14, 1, '.') && macIndividual(s[i:i+14]) {
			return span{i, i + 14, MAC}, i + 14, true
		}
	}
	return span{}, len(s), false
}

// macPairs reports whether m (17 bytes) is six hex pairs joined by sep.
func macPairs(m string, sep byte) bool {
	for j := 0; j < 17; j++ {
		if j%3 == 2 {
			if m[j] != sep {
				return false
			}
		} else if !isHex(m[j]) {
			return false
		}
	}
	return true
}

// macQuads reports whether m (14 bytes) is three hex quads joined by '.'.
func macQuads(m string) bool {
	for j := 0; j < 14; j++ {
		if j%5 == 4 {
			if m[j] != '.' {
				return false
			}
		} else if !isHex(m[j]) {
			return false
		}
	}
	return true
}

// macIndividual reports whether the address m names a device: it is not
// all zero, and the first octet (whose low digit is m[1] in both forms)
// has no group bit, which marks multicast and broadcast addresses.
func macIndividual(m string) bool {
	if hexVal(m[1])&1 == 1 {
		return false
	}
	for j := 0; j < len(m); j++ {
		if c := m[j]; isHex(c) && c != '0' {
			return true
		}
	}
	return false
}

func hexVal(c byte) byte {
	switch {
	case isDigit(c):
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// macEdge reports whether the byte at j, next to a candidate address on
// side dir (-1 before, 1 after), lets the address stand on its own: the
// edge of s, or a byte that is neither a letter, a digit nor the
// separator; or the separator, when beyond it is a word (a run of letters
// and digits that is not all hex: "dev-", "mac:") or a byte other than
// the separator and a letter or digit ("ff: refused"). So 15:17:10 and
// the pairs of longer hex runs (IPv6, EUI-64, "fe80::aa:bb:cc:dd:ee:ff")
// do not match.
func macEdge(s string, j, dir int, sep byte) bool {
	if j < 0 || j >= len(s) {
		return true
	}
	if c := s[j]; isAlnum(c) {
		return false
	} else if c != sep {
		return true
	}
	k := j + dir
	word, hex := 0, true
	for ; k >= 0 && k < len(s) && isAlnum(s[k]); k += dir {
		word++
		hex = hex && isHex(s[k])
	}
	if word > 0 {
		return !hex
	}
	return k < 0 || k >= len(s) || s[k] != sep
}

// HTTP Authorization credentials.

// findBearer finds the scheme word "Bearer" or "Basic" (any case, not
// inside a longer word), then spaces or tabs, then a credential: for
// Bearer a token68 of at least 12 characters that is not a plain word,
// for Basic base64 that decodes to something with a ':' (user:password).
func findBearer(s string, from int) (span, int, bool) {
	for k := from; k < len(s); k++ {
		if s[k] != ' ' && s[k] != '\t' {
			continue
		}
		var basic bool
		switch {
		case k >= 6 && equalFold(s[k-6:k], "bearer") && (k == 6 || !isAlnum(s[k-7])):
		case k >= 5 && equalFold(s[k-5:k], "basic") && (k == 5 || !isAlnum(s[k-6])):
			basic = true
		default:
			continue
		}
		t := k
		for t < len(s) && (s[t] == ' ' || s[t] == '\t') {
			t++
		}
		e := t
		for e < len(s) && isToken68(s[e]) {
			e++
		}
		body := e
		for e < len(s) && s[e] == '=' {
			e++
		}
		tok := s[t:e]
		if e < len(s) && (isToken68(s[e]) || s[e] == '=') || isPseudonym(tok) {
			k = e - 1
			continue
		}
		if basic && basicCredential(tok) || !basic && bearerToken(s[t:body]) {
			return span{t, e, Bearer}, e, true
		}
		k = e - 1
	}
	return span{}, len(s), false
}

// isToken68 reports whether c may be in an RFC 7235 token68 before its
// '=' padding.
func isToken68(c byte) bool {
	return isAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/'
}

// bearerToken reports whether t (without padding) looks like a token and
// not like a word: 12 characters or more, with at least two of a digit, a
// lower-case letter and an upper-case letter after the first character.
func bearerToken(t string) bool {
	if len(t) < 12 {
		return false
	}
	var digit, lower, upper int
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case isDigit(c):
			digit = 1
		case isLower(c):
			lower = 1
		case isUpper(c) && i > 0:
			upper = 1
		}
	}
	return digit+lower+upper >= 2
}

// basicCredential reports whether t is standard base64 (padded to a
// multiple of 4, or unpadded) decoding to bytes with a ':'.
func basicCredential(t string) bool {
	n := len(strings.TrimRight(t, "="))
	if n == 0 || len(t)-n > 2 || len(t) != n && len(t)%4 != 0 || n%4 == 1 {
		return false
	}
	var acc uint32
	bits, colon := 0, false
	for i := 0; i < n; i++ {
		v, ok := base64Val(t[i])
		if !ok {
			return false
		}
		acc = acc<<6 | uint32(v)
		bits += 6
		if bits >= 8 {
			bits -= 8
			colon = colon || byte(acc>>bits) == ':'
		}
	}
	return colon
}

func base64Val(c byte) (byte, bool) {
	switch {
	case isUpper(c):
		return c - 'A', true
	case isLower(c):
		return c - 'a' + 26, true
	case isDigit(c):
		return c - '0' + 52, true
	case c == '+':
		return 62, true
	case c == '/':
		return 63, true
	}
	return 0, false
}

// PEM blocks.

const (
	pemBegin = "-----BEGIN "
	pemEnd   = "-----END "
	pemDash  = "-----"
	// pemRun is the base64 run a block's body must have: a bare marker in
	// a sentence is no key.
	pemRun = 16
)

// findPEM finds "-----BEGIN LABEL-----" (LABEL up to 64 printable
// characters) and a body with a run of at least pemRun base64
// characters, through the first "-----END " line after it and before the
// next BEGIN line when that has the same label; else (a value cut short)
// up to the body's last base64 character, the body being base64, white
// space and backslashes. Looking no further than the next BEGIN line
// keeps the search linear.
func findPEM(s string, from int) (span, int, bool) {
	for from < len(s) {
		i := strings.Index(s[from:], pemBegin)
		if i < 0 {
			break
		}
		i += from
		from = i + 1
		l := i + len(pemBegin)
		j := strings.Index(s[l:min(len(s), l+64+len(pemDash))], pemDash)
		if j < 0 || !printable(s[l:l+j]) {
			continue
		}
		label := s[l : l+j]
		body := l + j + len(pemDash)
		limit := len(s)
		if next := strings.Index(s[body:], pemBegin); next >= 0 {
			limit = body + next
		}
		if end := strings.Index(s[body:limit], pemEnd); end >= 0 {
			end += body
			rest := s[end+len(pemEnd):]
			if strings.HasPrefix(rest, label) && strings.HasPrefix(rest[len(label):], pemDash) &&
				maxBase64Run(s[body:end]) >= pemRun {
				e := end + len(pemEnd) + len(label) + len(pemDash)
				return span{i, e, PEM}, e, true
			}
		}
		// Cut short: the body as far as it goes.
		run, longest, last := 0, 0, -1
		for k := body; k < len(s); k++ {
			c := s[k]
			if _, ok := base64Val(c); ok || c == '=' {
				run++
				longest = max(longest, run)
				last = k
				continue
			}
			if c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '\\' {
				break
			}
			run = 0
		}
		if longest >= pemRun {
			return span{i, last + 1, PEM}, last + 1, true
		}
	}
	return span{}, len(s), false
}

func maxBase64Run(s string) int {
	run, longest := 0, 0
	for k := 0; k < len(s); k++ {
		if _, ok := base64Val(s[k]); ok || s[k] == '=' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// JSON Web Tokens.

// findJWT finds a compact JWS (header.payload.signature) or JWE (five
// segments): a run of base64url characters and dots, not after a letter,
// digit, '_' or '.', that starts "eyJ" (base64url of `{"`); one '.' at its
// end is punctuation, not an empty segment. It is a JWT when it has 3
// segments (a JWS: header, a non-empty payload, a signature that is empty
// only for an unsecured token) or 5 (a JWE: the last three not empty),
// the header has at least 12 characters, and no segment is 1 more than a
// multiple of 4 long (no base64 is).
func findJWT(s string, from int) (span, int, bool) {
	for from < len(s) {
		i := strings.Index(s[from:], "eyJ")
		if i < 0 {
			break
		}
		i += from
		from = i + 1
		if i > 0 && (isB64URL(s[i-1]) && s[i-1] != '-' || s[i-1] == '.') {
			continue
		}
		e := i
		for e < len(s) && (isB64URL(s[e]) || s[e] == '.') {
			e++
		}
		from = e
		if s[e-1] == '.' && jwtSegments(s[i:e-1]) {
			return span{i, e - 1, JWT}, from, true
		}
		if jwtSegments(s[i:e]) {
			return span{i, e, JWT}, from, true
		}
	}
	return span{}, len(s), false
}

// jwtSegments reports whether t, base64url characters and dots, has the
// segments of a JWS or a JWE.
func jwtSegments(t string) bool {
	var size [5]int
	n := 0
	for k := 0; k < len(t); k++ {
		if t[k] != '.' {
			size[n]++
			continue
		}
		if n++; n == len(size) {
			return false
		}
	}
	n++
	if size[0] < 12 {
		return false
	}
	for k := range n {
		if size[k]%4 == 1 {
			return false
		}
	}
	switch n {
	case 3:
		return size[1] > 0
	case 5:
		return size[2] > 0 && size[3] > 0 && size[4] > 0
	}
	return false
}

func isB64URL(c byte) bool { return isAlnum(c) || c == '-' || c == '_' }

// URL passwords.

// findURLPassword finds "://", then an authority (up to '/', '?', '#', a
// backslash, a quote, '<', '>', white space or a control character) with
// an '@', and in the userinfo before its last '@' a ':' followed by a
// non-empty password. The scheme is not examined.
func findURLPassword(s string, from int) (span, int, bool) {
	for from < len(s) {
		i := strings.Index(s[from:], "://")
		if i < 0 {
			break
		}
		a := from + i + 3
		e := a
		for e < len(s) && !endsAuthority(s[e]) {
			e++
		}
		from = e
		at := strings.LastIndexByte(s[a:e], '@')
		if at < 0 {
			continue
		}
		c := strings.IndexByte(s[a:a+at], ':')
		if c < 0 {
			continue
		}
		pw := s[a+c+1 : a+at]
		if pw == "" || isPseudonym(pw) {
			continue
		}
		return span{a + c + 1, a + at, URLPassword}, e, true
	}
	return span{}, len(s), false
}

func endsAuthority(c byte) bool {
	switch c {
	case '/', '?', '#', '\\', '"', '<', '>', 0x7f:
		return true
	}
	return c <= ' '
}
