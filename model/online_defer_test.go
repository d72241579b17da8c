package model

import (
	"slices"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/graph"
)

// TestPartialFitDeferredSame streams the digits through two models with a
// window of 500, one by PartialFit and one by PartialFitDeferred, whose
// step runs on another goroutine while this one reads the graph and labels
// nodes, as stages.Learner does: U, V and the statistics must be equal bit
// for bit after every batch, for GNMF (step deferred), NMF (deferred) and
// SSKNMF (nothing deferred). Under -race it also checks that the step and
// the graph's readers share nothing they write.
func TestPartialFitDeferredSame(t *testing.T) {
	train, _, trainY, _, _ := digitsSplit(t, 10)
	n, d := train.Dims()
	for _, method := range []string{"gnmf", "nmf", "ssknmf"} {
		mk := func() *Online {
			return &Online{Rank: 10, Method: method, Graph: graph.KNN{K: 5, Window: 500}, Sweeps: 5}
		}
		a, b := mk(), mk()
		for lo, batch := 0, 0; lo < n; lo, batch = lo+37, batch+1 {
			hi := min(lo+37, n)
			x := DenseRows(mat.DenseCopyOf(train.Slice(lo, hi, 0, d)))
			ida, err := a.PartialFit(x)
			if err != nil {
				t.Fatal(err)
			}
			idb, step, err := b.PartialFitDeferred(x)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			wg.Go(step)
			// The graph and its labels meanwhile: every third sample of
			// the batch is labeled, in both models.
			var lists int
			for p, id := range idb {
				nb, _ := b.KNN().Neighbors(id)
				lists += len(nb)
				if p%3 == 0 {
					if err := b.SetLabel(id, trainY[lo+p]); err != nil {
						t.Fatal(err)
					}
				}
			}
			b.TakeGraphEdits()
			wg.Wait()
			for p, id := range ida {
				if p%3 == 0 {
					if err := a.SetLabel(id, trainY[lo+p]); err != nil {
						t.Fatal(err)
					}
				}
			}
			if !slices.Equal(ida, idb) || lists == 0 {
				t.Fatalf("%s, batch %d: nodes %v and %v, %d neighbours read", method, batch, ida, idb, lists)
			}
			if !a.started {
				continue
			}
			for _, m := range []struct {
				name string
				x, y *mat.Dense
			}{{"U", &a.u, b.Basis()}, {"V", &a.v, b.Codes()}, {"A", &a.a, &b.a}, {"B", &a.b, &b.b}} {
				if !mat.Equal(m.x, m.y) {
					t.Fatalf("%s, batch %d: %s differs between PartialFit and PartialFitDeferred", method, batch, m.name)
				}
			}
		}
	}
}

// TestPartialFitDeferredSettles checks that a deferred step that nobody
// runs is run by the next method that reads the codes, once: Codes equals
// PartialFit's, and running step afterwards changes nothing.
func TestPartialFitDeferredSettles(t *testing.T) {
	train, _, _, _, _ := digitsSplit(t, 10)
	_, d := train.Dims()
	a := &Online{Rank: 10, Graph: graph.KNN{K: 5}}
	b := &Online{Rank: 10, Graph: graph.KNN{K: 5}}
	var steps []func()
	for lo := 0; lo < 400; lo += 50 {
		x := DenseRows(mat.DenseCopyOf(train.Slice(lo, lo+50, 0, d)))
		if _, err := a.PartialFit(x); err != nil {
			t.Fatal(err)
		}
		_, step, err := b.PartialFitDeferred(x) // step left to the next call
		if err != nil {
			t.Fatal(err)
		}
		steps = append(steps, step)
	}
	v := mat.DenseCopyOf(b.Codes())
	if !mat.Equal(v, a.Codes()) || !mat.Equal(b.Basis(), a.Basis()) {
		t.Fatal("codes or basis after deferred steps differ from PartialFit's")
	}
	for _, s := range steps {
		s()
	}
	if !mat.Equal(v, b.Codes()) {
		t.Fatal("running a step again changed the codes")
	}
}

// TestLastCodes streams the digits through a model with KeepLastCodes and
// a window of 300, reading LastCodes beside each batch's deferred step as
// the stream's spreading does: its rows must be the codes of the nodes
// kept from before the batch, as they stood after the previous batch's
// step, bit for bit, and zero for the batch's new nodes (a reused slot
// held another sample); before the first fit and without KeepLastCodes it
// is nil. Under -race it also checks that the step does not write it.
func TestLastCodes(t *testing.T) {
	train, _, _, _, _ := digitsSplit(t, 10)
	n, d := train.Dims()
	m := &Online{Rank: 10, Graph: graph.KNN{K: 5, Window: 300}, KeepLastCodes: true}
	var before *mat.Dense // the codes after the previous batch's step
	checked := 0
	for lo := 0; lo < n; lo += 50 {
		hi := min(lo+50, n)
		ids, step, err := m.PartialFitDeferred(DenseRows(mat.DenseCopyOf(train.Slice(lo, hi, 0, d))))
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Go(step)
		last := m.LastCodes()
		switch {
		case before == nil && last != nil:
			t.Fatalf("batch at %d: LastCodes before the model had codes", lo)
		case before != nil && last == nil:
			t.Fatalf("batch at %d: no LastCodes", lo)
		case last != nil:
			rows, k := last.Dims()
			for _, id := range m.KNN().IDs() {
				want := make([]float64, k)
				if !slices.Contains(ids, id) {
					want = before.RawRowView(id)
				}
				if id >= rows {
					t.Fatalf("node %d past LastCodes's %d rows", id, rows)
				}
				if got := last.RawRowView(id); !slices.Equal(got, want) {
					t.Fatalf("batch at %d, node %d (new %v): LastCodes row %v, want %v", lo, id, slices.Contains(ids, id), got[:3], want[:3])
				}
				checked++
			}
		}
		wg.Wait()
		if m.Started() {
			before = mat.DenseCopyOf(m.Codes())
		}
	}
	if checked == 0 {
		t.Fatal("no batch checked")
	}
	m.KeepLastCodes = false
	if _, err := m.PartialFit(DenseRows(mat.DenseCopyOf(train.Slice(0, 10, 0, d)))); err != nil {
		t.Fatal(err)
	}
	if m.LastCodes() != nil {
		t.Error("LastCodes without KeepLastCodes: want nil")
	}
}
