// Package sidefile reads the small files a command takes beside its
// inputs (a policy, a configuration, a key, a checkpoint, a proof, a
// replay report, credentials): a regular file of bounded size, or an
// error that says what was found. A device (/dev/zero), a FIFO or a file
// past the bound is refused before it is read, and the read itself stops
// at the bound, so no side file can take unbounded memory or time.
package sidefile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// The bounds of the side files, by kind.
const (
	MaxText   = 1 << 20  // a policy, a configuration, a PEM bundle: 1 MiB
	MaxKey    = 64 << 10 // a key, a checkpoint, credentials: 64 KiB
	MaxReport = 64 << 20 // a replay's JSON report, a proof: 64 MiB
	// MaxShardReport bounds a shard's replay report with its samples
	// (replay --merge): about 200 bytes a connect, so 1 GiB is some five
	// million connects a shard.
	MaxShardReport = 1 << 30
	// MaxBrokerLog bounds a broker log (--broker-log) as stored, gzip or
	// not: 1 GiB (brokerlog bounds its text after decompression too).
	MaxBrokerLog = 1 << 30
)

// Read reads the regular file at path, of at most max bytes.
func Read(path string, max int64) ([]byte, error) {
	f, err := Open(path, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// Open opens the regular file at path, of at most max bytes, for a
// reader that reads it as a stream: reading past max bytes (a file that
// grew while read) fails.
func Open(path string, max int64) (io.ReadCloser, error) {
	// opening a FIFO waits for a writer: look before opening, and open
	// without waiting, then look again at what was opened
	if st, err := os.Stat(path); err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			pe.Op = "open" // as a reader that opened it says
		}
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: expected a regular file, found %s", path, kind(st.Mode()))
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: expected a regular file, found %s", path, kind(st.Mode()))
	}
	if st.Size() > max {
		f.Close()
		return nil, fmt.Errorf("%s: expected a file of at most %d bytes, found %d", path, max, st.Size())
	}
	return &bounded{f: f, path: path, left: max, max: max}, nil
}

// bounded reads at most left more bytes of f.
type bounded struct {
	f    *os.File
	path string
	left int64
	max  int64
}

func (b *bounded) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		if n, err := b.f.Read(one[:]); n == 0 {
			return 0, err
		}
		return 0, fmt.Errorf("%s: expected a file of at most %d bytes, found more (it grew while read)", b.path, b.max)
	}
	n, err := b.f.Read(p[:min(int64(len(p)), b.left)])
	b.left -= int64(n)
	return n, err
}

func (b *bounded) Close() error { return b.f.Close() }

// kind names a file mode that is not a regular file's.
func kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "a " + m.Type().String() + " file"
}

// MaxNesting bounds how deep a TOML side file may nest its tables, arrays
// and dotted keys (CheckNesting).
const MaxNesting = 32

// CheckNesting refuses a TOML file whose lines nest deeper than
// MaxNesting: more dots, opening brackets and braces on one line. A
// stormaudit.toml nesting 100,000 tables took 4 GB to parse; no policy or
// configuration nests more than a few levels.
func CheckNesting(path string, data []byte) error {
	line, n := 1, 0
	for _, c := range data {
		switch c {
		case '\n':
			line, n = line+1, 0
		case '.', '[', '{':
			if n++; n > MaxNesting {
				return fmt.Errorf("%s:%d: expected tables, arrays and dotted keys nested at most %d deep, found deeper", path, line, MaxNesting)
			}
		}
	}
	return nil
}
