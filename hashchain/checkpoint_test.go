package hashchain

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

func TestCheckpointFormat(t *testing.T) {
	c := Checkpoint{Origin: "stormaudit.example/incident", Size: 1234, Root: RecordHash(nil)}
	want := "stormaudit.example/incident\n1234\nbjQLnP+zepicpUTmu3gKLHiQHT+zNzh2hRGjBhevoB0=\n"
	if got := string(c.Format()); got != want {
		t.Errorf("Format = %q, want %q", got, want)
	}
	back, err := ParseCheckpoint([]byte(want))
	if err != nil || back != c {
		t.Errorf("ParseCheckpoint = %+v, %v; want %+v", back, err, c)
	}
	empty := Checkpoint{Origin: "o", Size: 0, Root: new(Tree).Root()}
	if back, err := ParseCheckpoint(empty.Format()); err != nil || back != empty {
		t.Errorf("empty tree: %+v, %v", back, err)
	}
}

func TestParseCheckpointErrors(t *testing.T) {
	const root = "bjQLnP+zepicpUTmu3gKLHiQHT+zNzh2hRGjBhevoB0="
	for _, tt := range []struct {
		body string
		line int
		want string // in Expected
	}{
		{"", 1, "the origin"},
		{"origin", 1, `ending in "\n"`},
		{"\n1\n" + root + "\n", 1, "non-empty"},
		{"orig\x00in\n1\n" + root + "\n", 1, "control characters"},
		{"orig\u0085in\n1\n" + root + "\n", 1, "control characters"},
		{"orig\xffin\n1\n" + root + "\n", 1, "UTF-8"},
		{"o\n", 2, "the tree size"},
		{"o\n1", 2, `ending in "\n"`},
		{"o\n01\n" + root + "\n", 2, "without leading zeros"},
		{"o\n00\n" + root + "\n", 2, "without leading zeros"},
		{"o\n+1\n" + root + "\n", 2, "without leading zeros or sign"},
		{"o\n-1\n" + root + "\n", 2, "without leading zeros or sign"},
		{"o\n-0\n" + root + "\n", 2, "without leading zeros or sign"},
		{"o\n\n" + root + "\n", 2, "the tree size"},
		{"o\n1 \n" + root + "\n", 2, "the tree size"},
		{"o\n9223372036854775808\n" + root + "\n", 2, "9223372036854775807"},
		{"o\n1\n", 3, "the root hash"},
		{"o\n1\n" + root, 3, `ending in "\n"`},
		{"o\n1\n" + strings.TrimSuffix(root, "=") + "\n", 3, "canonical standard base64"},
		{"o\n1\n" + root[:42] + "1=\n", 3, "canonical standard base64"}, // non-zero padding bits
		{"o\n1\n" + strings.ReplaceAll(root, "+", "-") + "\n", 3, "standard base64"},
		{"o\n1\nAAAA\n", 3, "32 bytes"},
		{"o\n1\n" + strings.Repeat("0", 44) + "\n", 3, "32 bytes"}, // 44 characters, no padding: 33 bytes
		{"o\n1\n" + root + "AAAA\n", 3, "32 bytes"},
		{"o\n1\n" + root + "\r\n", 3, "32 bytes"},
		{"o\n1\n" + root + "\n\n", 4, "no extension lines"},
		{"o\n1\n" + root + "\nextension\n", 4, "no extension lines"},
	} {
		_, err := ParseCheckpoint([]byte(tt.body))
		var ce *CheckpointError
		if !errors.As(err, &ce) || ce.Line != tt.line || !strings.Contains(ce.Expected, tt.want) {
			t.Errorf("%q: got %v; want line %d expecting %q", tt.body, err, tt.line, tt.want)
		}
	}
}

// The test key of testdata/hashchain. TEST ONLY: the secret key is public.
const (
	testSignerKey   = "PRIVATE+KEY+stormaudit.example/test-only+9107a060+AaCVQBf7DQew58PjHLtyH1i5BAT3x9jbW+u6/FjCYyZv"
	testVerifierKey = "stormaudit.example/test-only+9107a060+AasRfnnulIIxdWB6BG4cZWnO0SCIeF1mncWAiuaL67Ah"
)

func testKeys(t testing.TB) (note.Signer, note.Verifiers) {
	signer, err := note.NewSigner(testSignerKey)
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := note.NewVerifier(testVerifierKey)
	if err != nil {
		t.Fatal(err)
	}
	return signer, note.VerifierList(verifier)
}

func TestSignOpenCheckpoint(t *testing.T) {
	signer, verifiers := testKeys(t)
	c := Checkpoint{Origin: "stormaudit.example/incident", Size: 3, Root: RecordHash([]byte("x"))}
	msg, err := SignCheckpoint(c, signer)
	if err != nil {
		t.Fatal(err)
	}
	got, n, err := OpenCheckpoint(msg, verifiers)
	if err != nil || got != c || len(n.Sigs) != 1 || n.Sigs[0].Name != signer.Name() {
		t.Fatalf("OpenCheckpoint = %+v, %+v, %v", got, n, err)
	}

	skey, vkey, err := GenerateKey("stormaudit.example/other")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := note.NewSigner(skey)
	otherVerifier, _ := note.NewVerifier(vkey)
	otherMsg, _ := SignCheckpoint(c, other)
	unsignedNote, _ := note.Sign(&note.Note{Text: "not a checkpoint\n"}, signer)
	tampered := []byte(strings.Replace(string(msg), "\n3\n", "\n4\n", 1))

	for _, tt := range []struct {
		name string
		msg  []byte
		want string
		as   any
	}{
		{"unknown key", otherMsg, "not signed by a trusted key (signed by stormaudit.example/other+", new(*note.UnverifiedNoteError)},
		{"tampered", tampered, "changed after it was signed: invalid signature for key stormaudit.example/test-only+", new(*note.InvalidSignatureError)},
		{"unsigned", c.Format(), "not signed (no blank line", nil},
		{"garbage", []byte("hello"), "not a signed note", nil},
		{"bad body", unsignedNote, "checkpoint line 2", new(*CheckpointError)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := OpenCheckpoint(tt.msg, verifiers)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
			if tt.as != nil && !errors.As(err, tt.as) {
				t.Errorf("error %v does not wrap %T", err, tt.as)
			}
		})
	}

	// Signed by two keys, one of them unknown: refused, since a
	// checkpoint here is signed once, by the key that wrote it; with both
	// keys trusted, verified by both.
	both, err := note.Sign(&note.Note{Text: string(c.Format())}, signer, other)
	if err != nil {
		t.Fatal(err)
	}
	for _, vs := range []note.Verifiers{verifiers, note.VerifierList(otherVerifier)} {
		if _, _, err := OpenCheckpoint(both, vs); err == nil || !strings.Contains(err.Error(), "which no verifier names") {
			t.Errorf("two signatures, one key trusted: %v", err)
		}
	}
	v, _ := note.NewVerifier(testVerifierKey)
	if _, n, err := OpenCheckpoint(both, note.VerifierList(v, otherVerifier)); err != nil || len(n.Sigs) != 2 {
		t.Errorf("two signatures, both keys trusted: %v", err)
	}

	// A signature line twice: refused (package note drops the copy).
	one, err := SignCheckpoint(c, signer)
	if err != nil {
		t.Fatal(err)
	}
	sigLine := one[bytes.LastIndex(one[:len(one)-1], []byte("\n"))+1:]
	if _, _, err := OpenCheckpoint(append(one, sigLine...), verifiers); err == nil || !strings.Contains(err.Error(), "appears twice") {
		t.Errorf("a repeated signature line: %v", err)
	}
}

func TestSignCheckpointInvalid(t *testing.T) {
	signer, _ := testKeys(t)
	for _, c := range []Checkpoint{{Origin: "", Size: 1}, {Origin: "a\nb", Size: 1}, {Origin: "o", Size: -1}} {
		if _, err := SignCheckpoint(c, signer); err == nil {
			t.Errorf("SignCheckpoint(%+v): no error", c)
		}
	}
}

func TestGenerateKey(t *testing.T) {
	for _, name := range []string{"", "a b", "a+b", "a\tb", "\xff", "a\u00a0b"} {
		if _, _, err := GenerateKey(name); err == nil {
			t.Errorf("GenerateKey(%q): no error", name)
		}
	}
	skey, vkey, err := GenerateKey("stormaudit.example/log")
	if err != nil {
		t.Fatal(err)
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := note.NewVerifier(vkey)
	if err != nil || verifier.KeyHash() != signer.KeyHash() {
		t.Fatalf("verifier %v, %v", verifier, err)
	}
	var root tlog.Hash
	msg, err := SignCheckpoint(Checkpoint{Origin: "stormaudit.example/log", Size: 0, Root: root}, signer)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := OpenCheckpoint(msg, note.VerifierList(verifier)); err != nil {
		t.Fatal(err)
	}
}
