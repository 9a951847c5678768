package analyze

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/stormaudit/stormaudit/dataset"
)

// fanOut reads the devices of the dataset in dir, as devices does, and
// hands each, in dataset order, to every one of consumers. Each consumer
// runs on a goroutine of its own, so they work on one device at the same
// time and on different devices at once; a device's memory is reused
// once every consumer is done with it, so a consumer keeps nothing of it
// beyond its call. Devices are built (Device.Build) before they are handed
// on.
func fanOut(dir string, consumers []func(*Device)) (*dataset.Manifest, []string, error) {
	pool := make(chan *Device, 4*len(consumers)+4)
	for range cap(pool) {
		pool <- &Device{}
	}
	queues := make([]chan *Device, len(consumers))
	var wg sync.WaitGroup
	for i, fn := range consumers {
		queues[i] = make(chan *Device, cap(pool))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range queues[i] {
				fn(d)
				if atomic.AddInt32(&d.refs, -1) == 0 {
					pool <- d
				}
			}
		}()
	}
	get := func() *Device { return <-pool }
	man, sources, err := readDevices(dir, math.MaxInt64, get, func(d *Device) error {
		atomic.StoreInt32(&d.refs, int32(len(consumers)))
		for _, q := range queues {
			q <- d
		}
		return nil
	})
	for _, q := range queues {
		close(q)
	}
	wg.Wait()
	return man, sources, err
}
