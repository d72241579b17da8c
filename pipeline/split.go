package pipeline

import (
	"sync"
	"sync/atomic"
)

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

// sharePieces is how many pieces per worker Share cuts.
const sharePieces = 4

// Share returns a function with Split's contract that cuts [0, n) into up
// to 4·workers contiguous pieces of near-equal size, the same way for the
// same n, and runs them on workers goroutines (the caller's among them),
// each taking the next piece as soon as it is done with one. Each piece
// runs exactly once; which goroutine runs it varies from call to call.
//
// Where a core can be taken away for a while, as on a virtual machine
// whose host runs other tenants, the other goroutines take over its
// pieces instead of waiting for it: model.Engine.Split's parts (products
// in row chunks, the graph term in row blocks) fit it. On this 2-core
// machine a GNMF iteration at 20000×784 took a median 77 ms with it
// against 87 with Split's one part per worker while other tenants took
// 13% of the CPU time, and 76 against 73 when they were quiet.
// Where each part keeps a workspace (graph.Graph.SetSplit), Split's fewer
// parts keep fewer.
func Share(workers int) func(n int, body func(lo, hi int)) {
	if workers <= 1 {
		return Split(1)
	}
	return func(n int, body func(lo, hi int)) {
		pieces := min(sharePieces*workers, n)
		if pieces <= 1 {
			if n > 0 {
				body(0, n)
			}
			return
		}
		var next atomic.Int64
		run := func() {
			for {
				p := int(next.Add(1) - 1)
				if p >= pieces {
					return
				}
				body(p*n/pieces, (p+1)*n/pieces)
			}
		}
		var wg sync.WaitGroup
		for range min(workers, pieces) - 1 {
			wg.Go(run)
		}
		run()
		wg.Wait()
	}
}

// Go runs f on a goroutine of its own and returns at once, so that this
// package stays the one that starts goroutines: it is what
// stages.Learner.Go takes. f must not panic, and must end on its own, as a
// bounded computation does: nothing waits for it here (stages.Learner's
// use, a model's step, is waited for by the model's next write,
// model.Online.Settle).
func Go(f func()) { go f() }
