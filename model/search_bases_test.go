package model

import (
	"slices"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/graph"
)

// TestSearchBasesSame checks that models sharing a SearchBases learn what
// a model alone learns, bit for bit (basis U, codes, search projection),
// while the second of two models fed the same stream takes every search
// basis from the first: the shared basis is the basis it would have fit.
// A model fed other rows takes none. The models run at once (-race).
func TestSearchBasesSame(t *testing.T) {
	train, _, _, _, _ := digitsSplit(t, 10)
	n, d := train.Dims()
	feed := func(o *Online, from int) error {
		for lo := from; lo < min(n, from+700); lo += 50 {
			ids, err := o.PartialFit(DenseRows(mat.DenseCopyOf(train.Slice(lo, min(lo+50, n), 0, d))))
			if err != nil {
				return err
			}
			if err := o.SetLabel(ids[0], lo%3); err != nil {
				return err
			}
		}
		return nil
	}
	newModel := func(s *SearchBases) *Online {
		return &Online{Rank: 8, SearchBasis: 6, Graph: graph.KNN{K: 5, Window: 300}, SearchBases: s}
	}
	alone := newModel(nil)
	if err := feed(alone, 0); err != nil {
		t.Fatal(err)
	}
	shared := NewSearchBases(1 << 20)
	a, b := newModel(shared), newModel(shared)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, o := range []*Online{a, b} {
		wg.Go(func() { errs[i] = feed(o, 0) })
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	if alone.KNN().Dim() != 6 {
		t.Fatalf("the graph searches %d dimensions, want the basis's 6: the test fits no basis", alone.KNN().Dim())
	}
	fits := 0
	for s := searchBasisFirst; s <= alone.Seen(); s *= searchBasisGrowth {
		fits++
	}
	if got := shared.Hits(); got != fits {
		t.Fatalf("%d fits taken from the other model, want %d", got, fits)
	}
	for _, o := range []*Online{a, b} {
		if !slices.Equal(o.Basis().RawMatrix().Data, alone.Basis().RawMatrix().Data) ||
			!slices.Equal(o.Codes().RawMatrix().Data, alone.Codes().RawMatrix().Data) ||
			!slices.Equal(o.r.RawMatrix().Data, alone.r.RawMatrix().Data) {
			t.Fatal("a model sharing its search bases learned other bits than one alone")
		}
	}
	other := newModel(shared)
	if err := feed(other, 50); err != nil {
		t.Fatal(err)
	}
	if got := shared.Hits(); got != fits {
		t.Fatalf("a model fed other rows took %d shared fits", got-fits)
	}
}

// TestSearchBasesKeep checks that SearchBases keeps the newest fits up to
// its bytes, and at least the newest one: an evicted fit runs again.
func TestSearchBasesKeep(t *testing.T) {
	fits := 0
	fit := func() (*mat.Dense, error) { fits++; return mat.NewDense(4, 2, nil), nil } // 64 bytes
	key := func(v float64) [32]byte {
		return searchBasisKey(mat.NewDense(1, 1, []float64{v}), 2, SearchFitSVD, false)
	}
	s := NewSearchBases(100) // one fit of 64 bytes
	for _, v := range []float64{1, 2, 2, 1, 1} {
		if _, err := s.get(key(v), fit); err != nil {
			t.Fatal(err)
		}
	}
	if fits != 3 || s.Hits() != 2 {
		t.Fatalf("%d fits and %d hits, want 3 and 2 (1, 2, hit, 1 again, hit)", fits, s.Hits())
	}
}
