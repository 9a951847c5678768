package dataset

import (
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// leakAllocator is an Arrow allocator for tests that counts what is
// allocated and not freed, like memory.CheckedAllocator, except the
// buffers of arrow-go's DELTA_BINARY_PACKED decoder, which it never
// frees (v18.8.0, parquet/internal/encoding/delta_bit_packing.go: the
// bit widths of a block, 64 bytes a decoder, left to the collector; our
// reader's allocator hands such buffers to the collector too).
type leakAllocator struct {
	mu    sync.Mutex
	base  memory.GoAllocator
	live  map[*byte]leak
	bytes int
}

type leak struct {
	size  int
	where string
}

func newLeakAllocator() *leakAllocator { return &leakAllocator{live: make(map[*byte]leak)} }

func (a *leakAllocator) Allocate(size int) []byte {
	b := a.base.Allocate(size)
	a.track(b, 3)
	return b
}

func (a *leakAllocator) Reallocate(size int, b []byte) []byte {
	a.untrack(b)
	nb := a.base.Reallocate(size, b)
	a.track(nb, 3)
	return nb
}

func (a *leakAllocator) Free(b []byte) {
	a.untrack(b)
	a.base.Free(b)
}

// track records b unless arrow-go's delta decoder allocated it.
func (a *leakAllocator) track(b []byte, skip int) {
	if cap(b) == 0 {
		return
	}
	pcs := make([]uintptr, 16)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(skip, pcs)])
	var where string
	for {
		f, more := frames.Next()
		if strings.Contains(f.Function, "deltaBitPackDecoder") {
			return
		}
		if where == "" && !strings.Contains(f.Function, "arrow/memory") {
			where = f.Function
		}
		if !more {
			break
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.live[unsafe.SliceData(b[:1])] = leak{size: len(b), where: where}
	a.bytes += len(b)
}

func (a *leakAllocator) untrack(b []byte) {
	if cap(b) == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	p := unsafe.SliceData(b[:1])
	if l, ok := a.live[p]; ok {
		a.bytes -= l.size
		delete(a.live, p)
	}
}

// CurrentAlloc returns the bytes allocated and not freed.
func (a *leakAllocator) CurrentAlloc() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bytes
}

// assertFreed fails t for every buffer not freed.
func (a *leakAllocator) assertFreed(t *testing.T) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, l := range a.live {
		t.Errorf("%d bytes allocated by %s not freed", l.size, l.where)
	}
}

// TestLeakAllocator: the allocator reports what is not freed, and lets
// only the delta decoder's buffers go.
func TestLeakAllocator(t *testing.T) {
	a := newLeakAllocator()
	b := a.Allocate(100)
	c := a.Allocate(10)
	a.Free(c)
	if a.CurrentAlloc() != 100 || len(a.live) != 1 {
		t.Fatalf("%d bytes in %d buffers outstanding, want 100 in 1", a.CurrentAlloc(), len(a.live))
	}
	a.Free(b)
	if a.CurrentAlloc() != 0 {
		t.Fatalf("%d bytes outstanding after freeing all", a.CurrentAlloc())
	}
}
