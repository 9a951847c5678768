// Package ordered runs work on a stream of items in parallel and delivers
// the items in the order they arrived.
package ordered

import "sync"

// Run applies work to each item received from in, on n goroutines, and
// sends the items to out in the order in delivered them. worker is the
// index, in [0, n), of the goroutine running work, so that work can keep
// per-goroutine state without locks. Run returns once in is closed and every
// item is sent; it closes out. n below 1 means 1.
func Run[T any](n int, in <-chan T, out chan<- T, work func(worker int, item T)) {
	n = max(n, 1)
	type job struct {
		item T
		done chan struct{}
	}
	jobs := make(chan job, n)
	order := make(chan job, n)
	var wg sync.WaitGroup
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				work(w, j.item)
				close(j.done)
			}
		}()
	}
	go func() {
		for it := range in {
			j := job{item: it, done: make(chan struct{})}
			jobs <- j
			order <- j
		}
		close(jobs)
		close(order)
	}()
	for j := range order {
		<-j.done
		out <- j.item
	}
	close(out)
	wg.Wait()
}
