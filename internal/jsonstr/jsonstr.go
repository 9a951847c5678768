// Package jsonstr reads and writes the strings of JSON texts (RFC 8259,
// section 7). It is the one place in stormaudit that knows their escapes:
// the record decoder (package auditfmt), the canonical form the hash chain
// hashes (package hashchain) and the redactor (package redact) all read
// strings with it, each with the strictness it needs, and what writes a
// JSON string by hand outside those formats' own encoders (the redactor,
// policy files) writes it with it.
//
// # What a string is
//
// A string is a '"', then any number of characters, then a '"'. A
// character is either
//
//   - a byte other than '"', '\\' and the control characters U+0000 to
//     U+001F (U+007F is not one here), or
//   - an escape: \" \\ \/ \b \f \n \r \t, or \u and four hex digits of
//     either case, which stand for one UTF-16 code unit.
//
// # Scanning
//
// [Scan] checks the string that starts at a given index of a text, a
// string or a []byte, and returns the index after its closing quote and
// whether it has escapes. It reads no further than that quote, so the
// text may go on with more JSON. With no [Flags] it accepts exactly what
// encoding/json's Valid accepts in a string, bytes that are not UTF-8
// included. The flags make it stricter:
//
//   - [UTF8]: every character must be valid UTF-8 (so an encoded
//     surrogate, such as "\xed\xa0\x80", is not). The record format
//     (docs/format.md) asks for this.
//   - [NoLoneSurrogates]: a \u escape of a surrogate (U+D800 to U+DFFF)
//     must be the high half (U+D800 to U+DBFF) of a pair, followed at
//     once by a \u escape of the low half (U+DC00 to U+DFFF). I-JSON
//     (RFC 7493), and so RFC 8785's canonical form (docs/hashchain.md),
//     asks for this.
//
// # Unescaping
//
// [AppendUnescaped] appends the value of a string Scan accepted, given
// what lies between its quotes, as encoding/json's Unmarshal decodes it:
// each escape becomes the character it stands for, a surrogate pair the
// character above U+FFFF it encodes, and a lone surrogate U+FFFD. Unlike
// Unmarshal, it keeps bytes that are not UTF-8 as they are; with the UTF8
// flag Scan has ruled them out.
//
// # Writing
//
// [AppendQuoted] writes a string: '"' and '\\' escaped with a backslash, \n
// \r \t as such, the other control characters as \u00XX, every other
// byte as it is. Two flags change that: with [UTF8] each byte that does
// not start valid UTF-8 is written as U+FFFD, and with [EscapeDEL] U+007F
// is written as \u007f, which makes the string a TOML basic string as
// well. What it writes, Scan with the same flags accepts and
// AppendUnescaped reads back. The encoders of the record format
// (auditfmt.AppendJSONString) and of the canonical form (hashchain) are
// not this one: each format fixes its own bytes.
//
// # Errors
//
// Scan reports what it rejects as an [*Error], whose Kind says what is
// wrong and whose offsets say where, so that each caller can word the
// error in its own terms. In the order Scan meets them in the text:
//
//	Kind           Offset is the index of          when
//	Unterminated   the end of the text             the text ends before the closing quote
//	Control        the control character           one is written as itself
//	BadUTF8        the byte                        with UTF8, it does not start valid UTF-8
//	BadEscape      the byte after the backslash    it is not one of " \ / b f n r t u, or there is none
//	BadHex         the first bad or missing digit  \u is not followed by four hex digits
//	LoneSurrogate  the escape's backslash          with NoLoneSurrogates, a surrogate is not the first half of a pair
//
// For the last three, Error.Escape is the index of the backslash too.
// Scan stops at the first problem, and reports that one.
//
// # Example
//
//	end, escaped, err := jsonstr.Scan(line, i, jsonstr.UTF8)
//	if err != nil {
//		return fmt.Errorf("byte %d: %v", err.Offset+1, err.Kind)
//	}
//	value := line[i+1 : end-1]
//	if escaped {
//		value = jsonstr.AppendUnescaped(buf[:0], value)
//	}
package jsonstr

import "strconv"

// Flags make Scan stricter than JSON itself, and AppendQuoted write
// more than JSON needs; see the package doc.
type Flags uint8

const (
	// UTF8: Scan rejects a byte that does not start a valid UTF-8
	// encoding, and AppendQuoted writes it as U+FFFD.
	UTF8 Flags = 1 << iota
	// NoLoneSurrogates: Scan rejects a \u escape of a surrogate that is
	// not the first half of a surrogate pair.
	NoLoneSurrogates
	// EscapeDEL: AppendQuoted writes U+007F as \u007f, as a TOML basic
	// string needs. Scan ignores it.
	EscapeDEL
)

// Kind says what is wrong with a string.
type Kind uint8

// The kinds of Error, in the order of the table in the package doc.
const (
	Unterminated Kind = iota + 1
	Control
	BadUTF8
	BadEscape
	BadHex
	LoneSurrogate
)

var kindText = [...]string{
	Unterminated:  "the string does not end",
	Control:       "a control character not written as an escape",
	BadUTF8:       "a byte that is not UTF-8",
	BadEscape:     "a backslash not followed by an escape",
	BadHex:        `\u not followed by four hex digits`,
	LoneSurrogate: "a surrogate that is not half of a pair",
}

func (k Kind) String() string {
	if int(k) < len(kindText) && kindText[k] != "" {
		return kindText[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// An Error is why Scan rejected a string, and where.
type Error struct {
	Kind   Kind
	Offset int // the index in the text of what is wrong (see the package doc)
	Escape int // for BadEscape, BadHex and LoneSurrogate: the index of the escape's backslash
}

// Error gives the 1-based byte offset and the kind.
func (e *Error) Error() string {
	return "jsonstr: byte " + strconv.Itoa(e.Offset+1) + ": " + e.Kind.String()
}
