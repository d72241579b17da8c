package pipeline

import (
	"slices"
	"sync"
	"testing"
)

// TestSplit checks, for Split and Share, that the parts of a call cover
// [0, n) exactly once, that the same n is cut the same way every time,
// into no more parts than promised, and that no part is still running
// when the call returns (run it with -race).
func TestSplit(t *testing.T) {
	for _, c := range []struct {
		name      string
		make      func(int) func(int, func(int, int))
		perWorker int
	}{{"Split", Split, 1}, {"Share", Share, sharePieces}} {
		for _, workers := range []int{0, 1, 2, 3, 8} {
			testSplit(t, c.name, c.make(workers), workers, c.perWorker)
		}
	}
}

func testSplit(t *testing.T, name string, split func(int, func(int, int)), workers, perWorker int) {
	t.Helper()
	for _, n := range []int{0, 1, 2, 5, 7, 100} {
		var first [][2]int
		for round := range 2 {
			var mu sync.Mutex
			var parts [][2]int
			seen := make([]int, n)
			split(n, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					seen[i]++ // disjoint parts: no race
				}
				mu.Lock()
				parts = append(parts, [2]int{lo, hi})
				mu.Unlock()
			})
			for i, c := range seen {
				if c != 1 {
					t.Fatalf("%s, workers %d, n %d: index %d visited %d times", name, workers, n, i, c)
				}
			}
			slices.SortFunc(parts, func(a, b [2]int) int { return a[0] - b[0] })
			if len(parts) > max(workers*perWorker, 1) {
				t.Errorf("%s, workers %d, n %d: %d parts", name, workers, n, len(parts))
			}
			if round == 0 {
				first = parts
			} else if !slices.Equal(parts, first) {
				t.Errorf("%s, workers %d, n %d: cut %v, then %v", name, workers, n, first, parts)
			}
		}
	}
}

// TestSpare checks Spare.Split as TestSplit checks Split, with no one
// lending and with a lender inside Lend, and that a lender takes pieces
// when the caller is slow (a piece that waits for the lender's first one
// would hang otherwise), and that Lend returns once done is closed.
func TestSpare(t *testing.T) {
	var s Spare
	testSplit(t, "Spare alone", s.Split, 8, 1)

	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { s.Lend(done) })
	testSplit(t, "Spare lent", s.Split, 8, 1)

	// The caller's first piece waits until another piece has run on the
	// lender: with no lender the call would never return.
	lender := make(chan struct{})
	s.Split(2, func(lo, hi int) {
		if lo == 0 {
			<-lender
			return
		}
		close(lender)
	})
	close(done)
	wg.Wait()

	// Pieces: at most Pieces, and one body call for n = 1.
	s2 := Spare{Pieces: 3}
	testSplit(t, "Spare 3 pieces", s2.Split, 3, 1)
}
