// Package splittest provides a Split function for tests of code that
// takes one (model.Engine.Split, graph.Graph.SetSplit): parts cut and
// ordered unlike pipeline.Split's and the serial run's, so that a result
// that depends on the cut or on the order shows.
package splittest

// Reverse cuts [0, n) into three uneven parts (a fifth, three tenths and
// a half) and runs them last first, one after another, on the caller's
// goroutine.
func Reverse(n int, body func(lo, hi int)) {
	cuts := []int{0, n / 5, n / 2, n}
	for p := len(cuts) - 2; p >= 0; p-- {
		if cuts[p] < cuts[p+1] {
			body(cuts[p], cuts[p+1])
		}
	}
}
