package redact

import "strings"

// IsCredentialKey reports whether a member or field name names a
// credential, by the key rule of the package documentation: the name is
// split into words, qualifier words at its end (hash, encrypted, value,
// ...) are dropped, and what remains must end with a credential word
// (password, secret, token, ...) or a credential pair (api key, private
// key, ...). Case does not matter; a JSON member name is compared after
// unescaping.
func IsCredentialKey(name string) bool {
	w, end := lastWord(name, len(name))
	for w != "" && isQualifier(w) {
		w, end = lastWord(name, end)
	}
	if w == "" {
		return false
	}
	w = trimDigits(w)
	if isCredentialWord(w) {
		return true
	}
	if equalFold(w, "key") || equalFold(w, "keys") {
		prev, _ := lastWord(name, end)
		return isKeyQualifier(prev)
	}
	return false
}

// lastWord returns the last word of name[:end] and where it starts, or
// "" when there is none. Words are the runs of ASCII letters and digits,
// split where a lower-case letter or a digit is followed by an upper-case
// letter (mqttPassword) and before the last of two or more upper-case
// letters followed by a lower-case one (APIKey, MQTTPassword).
func lastWord(name string, end int) (string, int) {
	for end > 0 && !isAlnum(name[end-1]) {
		end--
	}
	i := end
	for i > 0 && isAlnum(name[i-1]) {
		i--
		if i > 0 && isUpper(name[i]) {
			if p := name[i-1]; isLower(p) || isDigit(p) ||
				isUpper(p) && i+1 < end && isLower(name[i+1]) {
				break
			}
		}
	}
	return name[i:end], i
}

// Qualifiers say how a credential is written, not what it is: a
// password_hash is as good as the password to an offline attacker. They
// are grouped by length, for a quick lookup.
var qualifiers = byLength(
	"hash", "hashed", "digest", "enc", "encrypted", "encoded", "b64",
	"base64", "hex", "value", "raw", "plain", "plaintext", "cleartext",
	"str", "string", "old", "new", "current", "confirm", "confirmation",
	"md5", "sha1", "sha256", "sha512", "bcrypt",
)

func byLength(words ...string) [][]string {
	var t [][]string
	for _, w := range words {
		for len(t) <= len(w) {
			t = append(t, nil)
		}
		t[len(w)] = append(t[len(w)], w)
	}
	return t
}

func isQualifier(w string) bool {
	if len(w) >= len(qualifiers) {
		return false
	}
	for _, q := range qualifiers[len(w)] {
		if equalFold(w, q) {
			return true
		}
	}
	return false
}

// isCredentialWord reports whether w, a word without trailing digits,
// ends with a credential suffix (so that compounds written as one word
// match: mqttpassword, clientsecret, accesstoken), or is one of the
// words that match only whole ("bypass" is no credential), or is the
// plural of either. The suffixes are looked up by w's last letter.
func isCredentialWord(w string) bool {
	if len(w) < 3 {
		return false
	}
	switch w[len(w)-1] | 0x20 {
	case 'd':
		return hasSuffixFold(w, "password") || hasSuffixFold(w, "passwd") || hasSuffixFold(w, "pwd")
	case 'e':
		return hasSuffixFold(w, "passphrase")
	case 't':
		return hasSuffixFold(w, "secret")
	case 'n':
		return hasSuffixFold(w, "token") || hasSuffixFold(w, "authorization") || hasSuffixFold(w, "authorisation")
	case 'y':
		return hasSuffixFold(w, "apikey") || hasSuffixFold(w, "privatekey") ||
			hasSuffixFold(w, "secretkey") || hasSuffixFold(w, "accesskey")
	case 'l':
		return hasSuffixFold(w, "credential")
	case 'k':
		return hasSuffixFold(w, "psk")
	case 'r':
		return equalFold(w, "bearer")
	case 's':
		if equalFold(w, "pass") || equalFold(w, "creds") {
			return true
		}
		p := w[:len(w)-1] // a plural
		return p[len(p)-1]|0x20 != 's' && isCredentialWord(p)
	}
	return false
}

// keyQualifiers are the words that make "key" a credential.
var keyQualifiers = [...]string{
	"api", "private", "secret", "access", "shared", "signing",
	"encryption", "master",
}

func isKeyQualifier(w string) bool {
	for _, q := range keyQualifiers {
		if equalFold(w, q) {
			return true
		}
	}
	return false
}

func hasSuffixFold(w, suffix string) bool {
	return len(w) >= len(suffix) && equalFold(w[len(w)-len(suffix):], suffix)
}

// trimDigits drops a word's trailing digits (password2), unless it is
// all digits.
func trimDigits(w string) string {
	i := len(w)
	for i > 0 && isDigit(w[i-1]) {
		i--
	}
	if i == 0 {
		return w
	}
	return w[:i]
}

// equalFold compares an ASCII word with a lower-case literal.
func equalFold(w, lit string) bool {
	if len(w) != len(lit) {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if isUpper(c) {
			c += 'a' - 'A'
		}
		if c != lit[i] {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isAlnum(c byte) bool { return isDigit(c) || isLower(c) || isUpper(c) }

func isHex(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// isPseudonym reports whether s is a pseudonym this package writes:
// "secret-", "pem-", "jwt-" or "mac-", then 16 lower-case hex digits.
// Such a value is never reported, so redacting twice changes nothing.
func isPseudonym(s string) bool {
	const hexLen = 2 * pseudonymBytes
	if len(s) < hexLen+4 {
		return false
	}
	p := s[:len(s)-hexLen]
	if p != "secret-" && p != "pem-" && p != "jwt-" && p != "mac-" {
		return false
	}
	for i := len(p); i < len(s); i++ {
		if c := s[i]; !isDigit(c) && !('a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// isMasked reports whether s is a value already masked with asterisks.
func isMasked(s string) bool {
	return s != "" && strings.Trim(s, "*") == ""
}
