package hashchain

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// A Checkpoint commits to a tree: its origin (the log's name), its size
// and its root hash.
type Checkpoint struct {
	Origin string    `json:"origin"` // the log's name, LOG
	Size   int64     `json:"size"`   // the number of rows it covers
	Root   tlog.Hash `json:"root"`   // the root of the tree of those rows
}

// Format returns the checkpoint's body in the C2SP tlog-checkpoint format,
// three lines each ending in a newline: the origin, the size in decimal,
// and the root in standard base64. It writes no extension lines.
func (c Checkpoint) Format() []byte {
	b := make([]byte, 0, len(c.Origin)+20+45+3)
	b = append(b, c.Origin...)
	b = append(b, '\n')
	b = strconv.AppendInt(b, c.Size, 10)
	b = append(b, '\n')
	b = base64.StdEncoding.AppendEncode(b, c.Root[:])
	return append(b, '\n')
}

// CheckpointError says what is wrong with a line of a checkpoint body.
type CheckpointError struct {
	Line     int    // 1-based
	Expected string // what the format requires on that line
	Found    string // what the line holds
}

// Error names the line and says what it should hold.
func (e *CheckpointError) Error() string {
	return fmt.Sprintf("checkpoint line %d: expected %s, found %s", e.Line, e.Expected, e.Found)
}

// ParseCheckpoint parses a checkpoint body strictly: exactly three lines,
// each ending in a newline; an origin that is non-empty UTF-8 without
// control characters; a size in decimal without leading zeros ("0" for
// the empty tree) that fits an int64; a root in canonical standard base64
// of exactly 32 bytes. Extension lines are rejected. Errors are
// *CheckpointError values.
func ParseCheckpoint(body []byte) (Checkpoint, error) {
	var lines [3][]byte
	rest := body
	for i := range lines {
		end := bytes.IndexByte(rest, '\n')
		if end < 0 {
			return Checkpoint{}, missingLine(i+1, rest)
		}
		lines[i], rest = rest[:end], rest[end+1:]
	}
	if len(rest) > 0 {
		return Checkpoint{}, &CheckpointError{Line: 4, Expected: "the end of the checkpoint (no extension lines)", Found: quoteClip(rest)}
	}
	origin, err := parseOrigin(lines[0])
	if err != nil {
		return Checkpoint{}, err
	}
	size, err := parseSize(lines[1])
	if err != nil {
		return Checkpoint{}, err
	}
	root, err := parseRoot(lines[2])
	if err != nil {
		return Checkpoint{}, err
	}
	return Checkpoint{Origin: origin, Size: size, Root: root}, nil
}

var lineNames = [...]string{1: "the origin", 2: "the tree size", 3: "the root hash"}

// missingLine returns the error for line n when only text, without a
// newline, is left.
func missingLine(n int, text []byte) error {
	if len(text) == 0 {
		return &CheckpointError{Line: n, Expected: lineNames[n], Found: "the end of the text"}
	}
	return &CheckpointError{Line: n, Expected: lineNames[n] + ` ending in "\n"`, Found: quoteClip(text) + " at the end of the text"}
}

func parseOrigin(line []byte) (string, error) {
	const expected = "the origin: non-empty UTF-8 without control characters"
	if len(line) == 0 {
		return "", &CheckpointError{Line: 1, Expected: expected, Found: "an empty line"}
	}
	if !utf8.Valid(line) {
		return "", &CheckpointError{Line: 1, Expected: expected, Found: "invalid UTF-8"}
	}
	if i := bytes.IndexFunc(line, unicode.IsControl); i >= 0 {
		r, _ := utf8.DecodeRune(line[i:])
		return "", &CheckpointError{Line: 1, Expected: expected, Found: fmt.Sprintf("%U at byte %d", r, i+1)}
	}
	return string(line), nil
}

func parseSize(line []byte) (int64, error) {
	const expected = "the tree size: a decimal integer without leading zeros or sign, at most 9223372036854775807"
	size, err := strconv.ParseInt(string(line), 10, 64)
	if err != nil || size < 0 || string(line) != strconv.FormatInt(size, 10) {
		return 0, &CheckpointError{Line: 2, Expected: expected, Found: quoteClip(line)}
	}
	return size, nil
}

func parseRoot(line []byte) (tlog.Hash, error) {
	const expected = "the root hash: 32 bytes in canonical standard base64 (44 characters ending in '=')"
	bad := &CheckpointError{Line: 3, Expected: expected, Found: quoteClip(line)}
	if len(line) != base64.StdEncoding.EncodedLen(tlog.HashSize) {
		return tlog.Hash{}, bad
	}
	// Decode needs room for DecodedLen bytes (33 for 44 characters) even
	// when the text holds fewer.
	var buf [tlog.HashSize + 1]byte
	n, err := base64.StdEncoding.Strict().Decode(buf[:], line)
	if err != nil || n != tlog.HashSize || base64.StdEncoding.EncodeToString(buf[:n]) != string(line) {
		return tlog.Hash{}, bad
	}
	return tlog.Hash(buf[:n]), nil
}

func quoteClip(b []byte) string {
	const max = 64
	if len(b) > max {
		return strconv.Quote(string(b[:max])) + "..."
	}
	return strconv.Quote(string(b))
}

// SignCheckpoint checks c and returns it as a signed note (C2SP
// signed-note): the body, a blank line, and signer's signature line.
func SignCheckpoint(c Checkpoint, signer note.Signer) ([]byte, error) {
	body := c.Format()
	if _, err := ParseCheckpoint(body); err != nil {
		return nil, fmt.Errorf("hashchain: sign checkpoint: %w", err)
	}
	msg, err := note.Sign(&note.Note{Text: string(body)}, signer)
	if err != nil {
		return nil, fmt.Errorf("hashchain: sign checkpoint: %w", err)
	}
	return msg, nil
}

// OpenCheckpoint verifies a signed checkpoint, as OpenNote does (every
// signature by a key of verifiers and valid, each once), and parses its
// body. The errors say whether msg is not a signed note, is a checkpoint
// without signatures, has no signature by a known key (wrapping
// *note.UnverifiedNoteError) or a signature that does not verify
// (wrapping *note.InvalidSignatureError), breaks OpenNote's rules, or has
// a malformed body (wrapping *CheckpointError).
func OpenCheckpoint(msg []byte, verifiers note.Verifiers) (Checkpoint, *note.Note, error) {
	n, err := OpenNote(msg, verifiers)
	if err != nil {
		return Checkpoint{}, nil, err
	}
	c, err := ParseCheckpoint([]byte(n.Text))
	if err != nil {
		return Checkpoint{}, nil, fmt.Errorf("hashchain: signed checkpoint: %w", err)
	}
	return c, n, nil
}

// openError explains why note.Open failed on msg.
func openError(msg []byte, err error) error {
	var unverified *note.UnverifiedNoteError
	var invalid *note.InvalidSignatureError
	switch {
	case errors.As(err, &unverified):
		var keys []string
		for _, s := range unverified.Note.UnverifiedSigs {
			keys = append(keys, fmt.Sprintf("%s+%08x", s.Name, s.Hash))
		}
		return fmt.Errorf("hashchain: not signed by a trusted key (signed by %s): %w", strings.Join(keys, ", "), err)
	case errors.As(err, &invalid):
		return fmt.Errorf("hashchain: changed after it was signed: %w", err)
	}
	if _, perr := ParseCheckpoint(msg); perr == nil {
		return fmt.Errorf("hashchain: not signed (no blank line and signature lines after the checkpoint): %w", err)
	}
	return fmt.Errorf("hashchain: not a signed note (the body, a blank line, then lines \"— NAME SIGNATURE\"): %w", err)
}

// GenerateKey returns a new Ed25519 signer key (secret) and verifier key
// for signing checkpoints, in the encodings of package note
// ("PRIVATE+KEY+NAME+HASH+DATA" and "NAME+HASH+DATA"). name must be
// non-empty UTF-8 without spaces or '+'; by convention it is the log's
// origin.
func GenerateKey(name string) (skey, vkey string, err error) {
	if name == "" || !utf8.ValidString(name) || strings.IndexFunc(name, unicode.IsSpace) >= 0 || strings.Contains(name, "+") {
		return "", "", fmt.Errorf("hashchain: key name %q: expected non-empty UTF-8 without spaces or '+'", name)
	}
	return note.GenerateKey(rand.Reader, name)
}

// CheckLogName reports whether name can name a log: a checkpoint's origin
// line, non-empty UTF-8 without control characters.
func CheckLogName(name string) error {
	if _, err := parseOrigin([]byte(name)); err != nil {
		return fmt.Errorf("log name %q: expected non-empty UTF-8 without control characters", name)
	}
	return nil
}
