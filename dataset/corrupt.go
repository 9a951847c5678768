package dataset

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// CorruptError is a Parquet file the reader libraries could not read
// without failing inside: a file damaged or crafted so that parquet-go or
// arrow-go panicked on it. The panic is recovered at this package's
// boundary and returned as this error, naming the file.
type CorruptError struct {
	File  string
	Panic any // what the library panicked with, or what is wrong in the footer
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("%s: corrupt Parquet: %v", e.File, e.Panic)
}

// recoverCorrupt turns a panic of the reader libraries while reading
// file into a *CorruptError in *err. Deferred by every read entry point,
// itself: recover stops a panic only when the deferred function calls it.
func recoverCorrupt(file string, err *error) {
	if p := recover(); p != nil {
		if debugCorrupt {
			fmt.Printf("%s: %v\n%s", file, p, debug.Stack())
		}
		*err = &CorruptError{File: file, Panic: fmt.Sprintf("the reader failed on it (%v)", p)}
	}
}

// debugCorrupt prints the stack of each recovered panic (for debugging).
const debugCorrupt = false

// maxUncompressed bounds a column chunk's uncompressed size against its
// compressed one: zstd of the records' columns stays far below it, and a
// footer that claims more would have a reader allocate gigabytes.
const maxUncompressed = 1 << 10

// checkFooter refuses a footer no writer of ours makes, before any page is
// read: a codec other than zstd (or none), a column chunk outside the
// file, or an uncompressed size past maxUncompressed times its compressed
// one. A flipped bit there would otherwise have the reader decode with
// another codec or allocate without bound (issue 25: an lz4 codec read
// where zstd was written asked for 32 GiB).
func checkFooter(path string, md *format.FileMetaData, size int64) error {
	for g, rg := range md.RowGroups {
		for c, col := range rg.Columns {
			m := &col.MetaData
			bad := ""
			switch {
			case m.Codec != format.Zstd && m.Codec != format.Uncompressed:
				bad = fmt.Sprintf("codec %s, not zstd", m.Codec)
			case m.TotalCompressedSize < 0 || m.DataPageOffset < 4 || m.DataPageOffset > size || m.TotalCompressedSize > size-m.DataPageOffset:
				bad = fmt.Sprintf("%d bytes at offset %d, outside the file of %d", m.TotalCompressedSize, m.DataPageOffset, size)
			case m.TotalUncompressedSize < 0 || m.TotalUncompressedSize > maxUncompressed*max(m.TotalCompressedSize, 1<<10):
				bad = fmt.Sprintf("%d bytes uncompressed from %d", m.TotalUncompressedSize, m.TotalCompressedSize)
			}
			if bad != "" {
				return &CorruptError{File: path, Panic: fmt.Sprintf("row group %d, column %d: %s", g, c, bad)}
			}
		}
	}
	return nil
}

// checkFileFooter reads the footer of the Parquet file path and checks it
// (checkFooter): the guard of the readers that do not go through
// parquet-go (arrow-go's).
func checkFileFooter(path string) (err error) {
	defer recoverCorrupt(path, &err)
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s: not a Parquet file: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return fmt.Errorf("%s: not a Parquet file: %w", path, err)
	}
	return checkFooter(path, pf.Metadata(), st.Size())
}
