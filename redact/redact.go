package redact

import (
	"cmp"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"slices"
	"sync"
)

// pseudonymBytes is how much of the HMAC a pseudonym keeps: 64 bits, so
// that two of a fleet's ten million devices share a pseudonym with a
// probability of about 3 in a million.
const pseudonymBytes = 8

// A Redactor replaces what Scan and ScanJSON find with pseudonyms, and
// counts what it replaced. The same value gets the same pseudonym from the
// same key (so grouping by device still works on redacted records), and a
// pseudonym cannot be reversed, nor a guessed value confirmed, without the
// key. A Redactor is safe for concurrent use.
type Redactor struct {
	pool sync.Pool // of *hasher

	mu     sync.Mutex
	counts map[countKey]int
}

type countKey struct {
	field string
	kind  Kind
}

// A Count is how many values of one kind a Redactor replaced in one field
// (a field name, or a path in a JSON field as in Hit; "" for Text).
type Count struct {
	Field  string
	Kind   Kind
	Values int
}

// New returns a Redactor whose pseudonyms are keyed by key. With a nil or
// empty key it makes a random 32-byte key, so pseudonyms are consistent
// within the Redactor's life only; give the same key to runs whose
// outputs must agree, and keep it as secret as the values it hides.
func New(key []byte) *Redactor {
	if len(key) == 0 {
		key = make([]byte, 32)
		rand.Read(key)
	} else {
		key = slices.Clone(key)
	}
	r := &Redactor{counts: make(map[countKey]int)}
	r.pool.New = func() any { return &hasher{mac: hmac.New(sha256.New, key)} }
	return r
}

// String returns value, a plain field named field, with what Scan finds
// in it replaced: the whole value when field is a credential key, else
// each value-pattern match alone ("dev-aa:bb:cc:dd:ee:ff" becomes
// "dev-mac-…"). A value with nothing to replace is returned as it is,
// without allocating.
func (r *Redactor) String(field, value string) string {
	if IsCredentialKey(field) {
		if !isCredentialString(value) {
			return value
		}
		r.add([]countKey{{field, Password}})
		return r.pseudonym(Password, value)
	}
	return r.spans(field, value)
}

// Text returns s, free text such as a finding's message, with every
// value-pattern match replaced. There is no name to apply the key rule
// to: "password=hunter2" in a sentence stays. Replacements are counted
// under the field "".
func (r *Redactor) Text(s string) string {
	return r.spans("", s)
}

func (r *Redactor) spans(field, s string) string {
	out, counts := r.replace(field, s, nil)
	r.add(counts)
	return out
}

// maxRounds bounds how often replace looks again at what it replaced.
const maxRounds = 4

// replace returns s with every value-pattern match replaced, and counts
// appended with a count for each. A pseudonym can complete a match that
// was not there before (a Bearer token that now runs on into the text
// after a replaced MAC address), so replace looks again until nothing is
// found; should that take more than maxRounds, the whole of s is replaced
// as a Password. With nothing to replace, s is returned as is.
func (r *Redactor) replace(field, s string, counts []countKey) (string, []countKey) {
	for range maxRounds {
		var (
			out  []byte
			last int
		)
		eachSpan(s, func(sp span) {
			if out == nil {
				out = make([]byte, 0, len(s)+16)
			}
			out = append(out, s[last:sp.start]...)
			out = append(out, r.pseudonym(sp.kind, s[sp.start:sp.end])...)
			last = sp.end
			counts = append(counts, countKey{field, sp.kind})
		})
		if out == nil {
			return s, counts
		}
		s = string(append(out, s[last:]...))
	}
	if hasSpan(s) {
		return r.pseudonym(Password, s), append(counts, countKey{field, Password})
	}
	return s, counts
}

// JSON returns object, the JSON text of a field named field (normally an
// object: extra, envelope), with what ScanJSON finds in it replaced: a
// credential member's value by its pseudonym as a string, each
// value-pattern match in a string or a member name by its pseudonym. The
// result is compact JSON with the members in their order; the strings
// with nothing replaced keep their text, escapes and all. A text with
// nothing to replace is returned as it is; one that is not valid JSON is
// redacted as a plain field, with String.
func (r *Redactor) JSON(field, object string) string {
	check := walker{src: object, field: field}
	if !check.root() {
		return r.String(field, object)
	}
	if !check.hit {
		return object
	}
	w := walker{src: object, field: field, emit: true, r: r, out: make([]byte, 0, len(object)+32)}
	w.root()
	r.add(w.counts)
	return string(w.out)
}

// Replaced returns what the Redactor has replaced, by field and kind,
// sorted by field, then kind.
func (r *Redactor) Replaced() []Count {
	r.mu.Lock()
	out := make([]Count, 0, len(r.counts))
	for k, n := range r.counts {
		out = append(out, Count{Field: k.field, Kind: k.kind, Values: n})
	}
	r.mu.Unlock()
	slices.SortFunc(out, func(a, b Count) int {
		return cmp.Or(cmp.Compare(a.Field, b.Field), cmp.Compare(a.Kind, b.Kind))
	})
	return out
}

func (r *Redactor) add(counts []countKey) {
	if len(counts) == 0 {
		return
	}
	r.mu.Lock()
	for _, k := range counts {
		r.counts[k]++
	}
	r.mu.Unlock()
}

// pseudonym returns the pseudonym of the value v of kind k: the kind's
// prefix, '-', and the first 8 bytes in hex of
// HMAC-SHA256(key, prefix || 0x00 || v), where a MAC address is hashed as
// its 6 bytes, so its spellings share a pseudonym.
func (r *Redactor) pseudonym(k Kind, v string) string {
	prefix := k.prefix()
	h := r.pool.Get().(*hasher)
	h.in = append(append(h.in[:0], prefix...), 0)
	if k == MAC && (len(v) == 17 || len(v) == 14) { // not a union of overlapping matches
		for i := 0; i+1 < len(v); {
			if !isHex(v[i]) {
				i++
				continue
			}
			h.in = append(h.in, hexVal(v[i])<<4|hexVal(v[i+1]))
			i += 2
		}
	} else {
		h.in = append(h.in, v...)
	}
	h.mac.Reset()
	h.mac.Write(h.in)
	sum := h.mac.Sum(h.sum[:0])
	b := make([]byte, 0, len(prefix)+1+2*pseudonymBytes)
	b = append(b, prefix...)
	b = append(b, '-')
	b = hex.AppendEncode(b, sum[:pseudonymBytes])
	if cap(h.in) <= 4096 {
		r.pool.Put(h)
	}
	return string(b)
}

// A hasher is an HMAC under a Redactor's key with buffers for its input
// and output, kept in the Redactor's pool.
type hasher struct {
	mac hash.Hash
	in  []byte
	sum [sha256.Size]byte
}
