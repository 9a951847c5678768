package dataset

import (
	"testing"
	"unsafe"
)

// TestPoolAllocator checks what Arrow relies on: zeroed, 64-byte aligned
// buffers of the size asked for, and freed buffers coming back cleared.
func TestPoolAllocator(t *testing.T) {
	var a poolAllocator
	for _, size := range []int{0, 1, 63, 64, 65, 1000, 4096, 1 << 16, 1<<16 + 1, 3 << 20} {
		for round := range 3 {
			b := a.Allocate(size)
			if len(b) != size {
				t.Fatalf("Allocate(%d): len %d", size, len(b))
			}
			if cap(b) > 0 && uintptr(unsafe.Pointer(&b[:1][0]))%poolAlign != 0 {
				t.Fatalf("Allocate(%d): not aligned to %d bytes", size, poolAlign)
			}
			for i, x := range b {
				if x != 0 {
					t.Fatalf("Allocate(%d), round %d: byte %d is %d, want 0", size, round, i, x)
				}
			}
			for i := range b {
				b[i] = 0xff // dirty it for the next round
			}
			b = a.Reallocate(size+10, b)
			if len(b) != size+10 || b[size+9] != 0 || size > 0 && b[0] != 0xff {
				t.Fatalf("Reallocate(%d): len %d, wrong content", size+10, len(b))
			}
			a.Free(b)
		}
	}
	foreign := make([]byte, 120)
	a.Free(foreign[1:]) // not one of its buffers (not aligned): left alone
	for range 10 {
		if b := a.Allocate(50); uintptr(unsafe.Pointer(&b[0]))%poolAlign != 0 {
			t.Fatal("Allocate(50) returned a foreign, unaligned buffer")
		}
	}
}
