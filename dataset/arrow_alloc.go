package dataset

import (
	"math/bits"
	"sync"
	"unsafe"
)

// poolAllocator is an Arrow memory.Allocator that keeps freed buffers for
// reuse, by power-of-two size class. Reading a dataset allocates the same
// column buffers for every batch; a fresh large allocation is zeroed page
// by page, while a reused one is cleared warm. Like memory.GoAllocator it
// returns zeroed, 64-byte aligned memory. It is safe for concurrent use.
type poolAllocator struct {
	pools [64]sync.Pool // by class: buffers of 1<<class bytes
}

const poolAlign = 64

// sizeClass returns the class whose buffers hold size bytes once aligned.
func sizeClass(size int) int { return bits.Len(uint(size + poolAlign - 1)) }

func (a *poolAllocator) Allocate(size int) []byte {
	c := sizeClass(size)
	if p, ok := a.pools[c].Get().(*[]byte); ok && cap(*p) >= size {
		b := (*p)[:size]
		clear(b)
		return b
	}
	buf := make([]byte, 1<<c)
	shift := 0
	if r := int(uintptr(unsafe.Pointer(&buf[0])) % poolAlign); r != 0 {
		shift = poolAlign - r
	}
	// cap(b) = 1<<c - shift, from which Free finds the class again
	return buf[shift : shift+size]
}

func (a *poolAllocator) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		old := len(b)
		b = b[:size]
		if size > old {
			clear(b[old:])
		}
		return b
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

func (a *poolAllocator) Free(b []byte) {
	if cap(b) == 0 {
		return
	}
	c := bits.Len(uint(cap(b)+poolAlign-1)) - 1
	aligned := uintptr(unsafe.Pointer(&b[:1][0]))%poolAlign == 0
	if c <= 0 || c >= len(a.pools) || 1<<c-cap(b) >= poolAlign || !aligned {
		return // not one of ours: leave it to the collector
	}
	b = b[:0]
	a.pools[c].Put(&b)
}

// arrowMemory is the allocator of every ArrowReader.
var arrowMemory = &poolAllocator{}
