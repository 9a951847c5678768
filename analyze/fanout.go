package analyze

import (
	"sync"
	"sync/atomic"
)

// A fan hands devices, in order, to every one of its consumers. Each
// consumer runs on a goroutine of its own, so they work on one device at
// the same time and on different devices at once. Devices come from a
// pool: a producer fills the device get returns and emits it, and its
// memory is reused once every consumer is done with it, so a consumer
// keeps nothing of a device beyond its call.
type fan struct {
	pool   chan *Device
	queues []chan *Device
	wg     sync.WaitGroup
}

func newFan(consumers []func(*Device)) *fan {
	f := &fan{pool: make(chan *Device, 4*len(consumers)+4), queues: make([]chan *Device, len(consumers))}
	for range cap(f.pool) {
		f.pool <- &Device{}
	}
	for i, fn := range consumers {
		f.queues[i] = make(chan *Device, cap(f.pool))
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			for d := range f.queues[i] {
				fn(d)
				if atomic.AddInt32(&d.refs, -1) == 0 {
					f.pool <- d
				}
			}
		}()
	}
	return f
}

// get returns a device to fill, waiting for one to be free.
func (f *fan) get() *Device { return <-f.pool }

// emit hands d, built, to every consumer.
func (f *fan) emit(d *Device) error {
	atomic.StoreInt32(&d.refs, int32(len(f.queues)))
	for _, q := range f.queues {
		q <- d
	}
	return nil
}

// close waits until every consumer is done with every device.
func (f *fan) close() {
	for _, q := range f.queues {
		close(q)
	}
	f.wg.Wait()
}
