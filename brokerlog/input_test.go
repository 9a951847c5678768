package brokerlog

import (
	"bufio"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadLine splits lines across a small buffer: every line comes back
// whole, without its newline or a final \r, with its length.
func TestReadLine(t *testing.T) {
	for n := 0; n < 40; n++ {
		for _, end := range []string{"\n", "\r\n", ""} {
			body := strings.Repeat("x", n)
			in, wantErr := body+end+"next\n", error(nil)
			if end == "" { // the last line, without a newline
				in, wantErr = body, io.EOF
			}
			r := bufio.NewReaderSize(strings.NewReader(in), 16)
			line, full, err := readLine(r)
			if string(line) != body || full != n || err != wantErr {
				t.Fatalf("%d %q: got %q (%d), %v", n, end, line, full, err)
			}
			if end == "" {
				continue
			}
			line, _, err = readLine(r)
			if string(line) != "next" || err != nil {
				t.Fatalf("%d %q: then %q, %v", n, end, line, err)
			}
		}
	}
	// at the limit: a line of MaxLineBytes fits, with or without \r
	for _, tt := range []struct {
		in   string
		full int
	}{
		{strings.Repeat("y", MaxLineBytes) + "\n", MaxLineBytes},
		{strings.Repeat("y", MaxLineBytes) + "\r\n", MaxLineBytes},
		{strings.Repeat("y", MaxLineBytes+1) + "\n", MaxLineBytes + 1},
		{strings.Repeat("y", 3*MaxLineBytes) + "\r\n", 3 * MaxLineBytes},
		{strings.Repeat("y", 3*MaxLineBytes), 3 * MaxLineBytes},
	} {
		r := bufio.NewReaderSize(strings.NewReader(tt.in), 64<<10)
		line, full, _ := readLine(r)
		if full != tt.full || len(line) != min(full, MaxLineBytes) || strings.Trim(string(line), "y") != "" {
			t.Errorf("%d bytes: got %d bytes of %d", len(tt.in), len(line), full)
		}
	}
}

// TestFirstByte: the first byte that is not white space, from a stream
// that gives one byte at a time.
func TestFirstByte(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want byte
	}{{"", 0}, {"  \n\t", 0}, {" \n [", '['}, {"{", '{'}, {strings.Repeat(" ", 70000) + "[", 0}} {
		r := bufio.NewReaderSize(iotest.OneByteReader(strings.NewReader(tt.in)), 64<<10)
		if got := firstByte(r); got != tt.want {
			t.Errorf("%.10q: %q, want %q", tt.in, got, tt.want)
		}
		if b, _ := io.ReadAll(r); string(b) != tt.in {
			t.Errorf("%.10q: firstByte consumed its input", tt.in)
		}
	}
}
