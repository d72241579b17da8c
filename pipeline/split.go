package pipeline

import "sync"

// Split returns a function that runs body over [0, n) cut into at most
// workers contiguous parts of near-equal size, each on its own goroutine,
// and returns once every part has returned. The same n is always cut the
// same way. It is what model.Online.Split, graph.Graph.SetSplit and
// stages.Learner.Split take, so that the compute-bound parts of one
// learning step (the graph search, the predictions of a batch) use several
// cores while this package stays the one that starts goroutines.
//
// workers ≤ 1 returns a Split that calls body(0, n) on the caller's
// goroutine. body must not panic; the goroutines end when Split returns.
func Split(workers int) func(n int, body func(lo, hi int)) {
	if workers <= 1 {
		return func(n int, body func(lo, hi int)) {
			if n > 0 {
				body(0, n)
			}
		}
	}
	return func(n int, body func(lo, hi int)) {
		parts := min(workers, n)
		if parts <= 1 {
			if n > 0 {
				body(0, n)
			}
			return
		}
		var wg sync.WaitGroup
		for p := 1; p < parts; p++ {
			lo, hi := p*n/parts, (p+1)*n/parts
			wg.Go(func() { body(lo, hi) })
		}
		body(0, n/parts) // the first part on the caller's goroutine
		wg.Wait()
	}
}
