package ingest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
)

// Input formats, as named in the manifest.
const (
	FormatNDJSON  = "ndjson"
	FormatCSV     = "csv"
	FormatParquet = "parquet"
)

// Source is one input of an ingest.
type Source struct {
	// Name is the input as the user gave it: a path, or "-" for Stdin.
	Name string
	// Stdin is read when Name is "-"; nil means os.Stdin.
	Stdin io.Reader
	// Reader, when set, is read instead of opening Name, which then only
	// labels the input: a stream the program itself produces (for
	// example "simulate --dataset"). Like stdin, it is read once.
	Reader io.Reader
}

// opened is an input being read: the raw bytes are counted and hashed on
// their way to the (possibly decompressing) reader.
type opened struct {
	name    string
	format  string
	gzip    bool
	r       *bufio.Reader // decompressed content
	raw     *countingReader
	closer  io.Closer
	path    string      // a file holding the raw bytes, for Parquet inputs
	unwatch func() bool // stops the watch that closes the file when the ingest is cancelled
}

// openInputFile opens the file at path for reading. Opening a FIFO waits for a
// writer; cancelling ctx ends the wait.
func openInputFile(ctx context.Context, path string) (*os.File, error) {
	if st, err := os.Stat(path); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return os.Open(path)
	}
	type result struct {
		f   *os.File
		err error
	}
	done := make(chan result, 1)
	go func() {
		f, err := os.Open(path)
		done <- result{f, err}
	}()
	select {
	case r := <-done:
		return r.f, r.err
	case <-ctx.Done():
		// the open waits for a writer: be one for a moment, so that it returns
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		if r := <-done; r.f != nil {
			r.f.Close()
		}
		return nil, fmt.Errorf("%s: no writer opened the FIFO: %w", path, ctx.Err())
	}
}

// countingReader hashes and counts what passes through it.
type countingReader struct {
	r     io.Reader
	h     hash.Hash
	n     int64
	total *atomic.Int64 // bytes read by the whole ingest, for progress
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	c.n += int64(n)
	c.total.Add(int64(n))
	return n, err
}

func (c *countingReader) sum() string { return hex.EncodeToString(c.h.Sum(nil)) }

// openInput opens src, detects compression by content (the gzip magic
// bytes) and the format by name or, failing that, by content. Cancelling
// ctx ends a wait for a FIFO's writer, and a read of a FIFO or a file
// that waits for data.
func openInput(ctx context.Context, src Source, progress *atomic.Int64) (*opened, error) {
	in := &opened{name: src.Name}
	var rd io.Reader
	if src.Reader != nil {
		rd = src.Reader
	} else if src.Name == "-" {
		rd = src.Stdin
		if rd == nil {
			rd = os.Stdin
		}
	} else {
		f, err := openInputFile(ctx, src.Name)
		if err != nil {
			return nil, err
		}
		st, err := f.Stat()
		if err == nil && st.IsDir() {
			f.Close()
			return nil, fmt.Errorf("%s: is a directory; expected an NDJSON, CSV or Parquet file", src.Name)
		}
		rd, in.closer = f, f
		in.unwatch = context.AfterFunc(ctx, func() { f.Close() }) // a read that waits on a pipe returns
		if err == nil && st.Mode().IsRegular() {
			in.path = src.Name // can be opened again (Parquet, collector logs); a pipe cannot
		}
	}
	in.raw = &countingReader{r: rd, h: sha256.New(), total: progress}
	br := bufio.NewReaderSize(in.raw, 1<<16)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			in.close()
			return nil, fmt.Errorf("%s: gzip: %w", src.Name, err)
		}
		in.gzip, in.path = true, ""
		br = bufio.NewReaderSize(zr, 1<<16)
	}
	in.r = br
	in.format = detectFormat(src.Name, br)
	return in, nil
}

// detectFormat trusts a known extension and otherwise looks at the
// content: "PAR1" is Parquet, a '{' is NDJSON, anything else CSV.
func detectFormat(name string, br *bufio.Reader) string {
	base := strings.TrimSuffix(strings.ToLower(name), ".gz")
	switch {
	case strings.HasSuffix(base, ".ndjson"), strings.HasSuffix(base, ".jsonl"), strings.HasSuffix(base, ".json"):
		return FormatNDJSON
	case strings.HasSuffix(base, ".csv"):
		return FormatCSV
	case strings.HasSuffix(base, ".parquet"):
		return FormatParquet
	}
	head, _ := br.Peek(512)
	if bytes.HasPrefix(head, []byte("PAR1")) {
		return FormatParquet
	}
	if t := bytes.TrimLeft(head, " \t\r\n\ufeff"); len(t) == 0 || t[0] == '{' {
		return FormatNDJSON
	}
	return FormatCSV
}

func (in *opened) close() error {
	if in.unwatch != nil {
		in.unwatch()
	}
	if in.closer != nil {
		return in.closer.Close()
	}
	return nil
}

// drain reads what is left of the raw input so that the byte count and
// hash cover the whole input.
func (in *opened) drain() error {
	_, err := io.Copy(io.Discard, in.raw)
	return err
}

// spool copies the decompressed content to a temporary file in dir, for
// Parquet read from stdin or from gzip.
func (in *opened) spool(dir string) (string, error) {
	f, err := os.CreateTemp(dir, ".spool-*.parquet")
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(f, in.r); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), f.Close()
}
