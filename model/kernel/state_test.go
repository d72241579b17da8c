package kernel_test

import (
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/kernel"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// stateful is a fitted kernel method that exports its state.
type stateful interface {
	kernel.Projector
	State() (*kernel.State, error)
}

// checkRoundTrip projects test samples with m and with the method rebuilt
// from its state through a snapshot, under every projection (but the
// paper's where nystrom is set: it needs the exact kernel), and requires
// equal codes with ==: the rebuilt method must run the same arithmetic.
func checkRoundTrip(t *testing.T, name string, m stateful, setProj func(kernel.Projection), test model.Data, nystrom bool) {
	t.Helper()
	projs := []kernel.Projection{kernel.ProjectGraph, kernel.ProjectNNLS, kernel.ProjectPaper}
	if nystrom {
		projs = projs[:2]
	}
	for _, p := range projs {
		setProj(p)
		var want mat.Dense
		if err := m.ProjectTo(&want, test); err != nil {
			t.Fatalf("%s %v: %v", name, p, err)
		}
		st, err := m.State()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		snap := &model.Snapshot{Version: model.SnapshotVersion, Method: name}
		if err := st.MarshalSnapshot(snap); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d, _ := snap.U.Dims(); d != 8 {
			t.Fatalf("%s: U has %d rows, want D = 8", name, d)
		}
		nonNegative(t, name+" U", snap.U)
		back, err := kernel.StateFromSnapshot(snap)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		pr, err := kernel.NewProjector(back)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got mat.Dense
		if err := pr.ProjectTo(&got, test); err != nil {
			t.Fatalf("%s %v: loaded: %v", name, p, err)
		}
		r, c := want.Dims()
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				if got.At(i, j) != want.At(i, j) {
					t.Fatalf("%s %v: code (%d, %d) = %v after loading, %v before", name, p, i, j, got.At(i, j), want.At(i, j))
				}
			}
		}
	}
}

func TestStateRoundTrip(t *testing.T) {
	x, _ := clusters(60, 8, 3, 1)
	test, _ := clusters(20, 8, 3, 2)
	f := &kernel.Flexible{Common: model.Common{Rank: 4, MaxIter: 50}, Neighbors: 3}
	if err := f.Fit(model.DenseRows(x), nil); err != nil {
		t.Fatal(err)
	}
	checkRoundTrip(t, "flexible", f, func(p kernel.Projection) { f.Projection = p }, model.DenseRows(test), false)

	// MultiK on sparse rows, with the default pool (relative widths to
	// resolve, several kernels with weights) and the graph term.
	xs, ts := sparse.FromDense(x), sparse.FromDense(test)
	mk := &kernel.MultiK{Common: model.Common{Rank: 4, MaxIter: 60}, Alpha: 0.5, Step: kernel.TauEntropy}
	if err := mk.Fit(model.SparseRows(xs), nil); err != nil {
		t.Fatal(err)
	}
	checkRoundTrip(t, "multik", mk, func(p kernel.Projection) { mk.Projection = p }, model.SparseRows(ts), false)
}

// TestStateRoundTripNystrom checks the same of fits with Nyström landmarks:
// the loaded model recomputes the training samples' features from the
// stored landmarks and maps, and must project bit for bit as the fit did.
func TestStateRoundTripNystrom(t *testing.T) {
	x, _ := clusters(60, 8, 3, 1)
	test, _ := clusters(20, 8, 3, 2)
	f := &kernel.Flexible{Common: model.Common{Rank: 4, MaxIter: 50}, Neighbors: 3, Nystrom: &kernel.Nystrom{Landmarks: 15}}
	if err := f.Fit(model.DenseRows(x), nil); err != nil {
		t.Fatal(err)
	}
	st, err := f.State()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Landmarks) != 15 || len(st.Maps) != 1 || st.A != nil {
		t.Fatalf("Nyström flexible state: %d landmarks, %d maps, A %v; want 15, 1, nil", len(st.Landmarks), len(st.Maps), st.A)
	}
	checkRoundTrip(t, "flexible", f, func(p kernel.Projection) { f.Projection = p }, model.DenseRows(test), true)

	// MultiK on sparse rows: several kernels, some of weight zero, whose
	// features the loaded model does not recompute.
	xs, ts := sparse.FromDense(x), sparse.FromDense(test)
	mk := &kernel.MultiK{Common: model.Common{Rank: 4, MaxIter: 60}, Alpha: 0.5, Nystrom: &kernel.Nystrom{Landmarks: 12}}
	if err := mk.Fit(model.SparseRows(xs), nil); err != nil {
		t.Fatal(err)
	}
	checkRoundTrip(t, "multik", mk, func(p kernel.Projection) { mk.Projection = p }, model.SparseRows(ts), true)

	// The kernels scaled by their variance, which rescales the features
	// after they are computed.
	mv := &kernel.MultiK{Common: model.Common{Rank: 4, MaxIter: 60}, Alpha: 0.5, Scaling: kernel.ScaleVariance, Nystrom: &kernel.Nystrom{Landmarks: 12}}
	if err := mv.Fit(model.DenseRows(x), nil); err != nil {
		t.Fatal(err)
	}
	checkRoundTrip(t, "multik", mv, func(p kernel.Projection) { mv.Projection = p }, model.DenseRows(test), true)
}

func TestStateErrors(t *testing.T) {
	var f kernel.Flexible
	if _, err := f.State(); err == nil {
		t.Error("State before Fit: no error")
	}
	x, _ := clusters(40, 8, 2, 3)
	ny := &kernel.MultiK{Common: model.Common{Rank: 2, MaxIter: 10}, Nystrom: &kernel.Nystrom{Landmarks: 10}}
	if err := ny.Fit(model.DenseRows(x), nil); err != nil {
		t.Fatal(err)
	}
	st, err := ny.State()
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		name string
		edit func(s *kernel.State)
	}{
		{"a landmark out of range", func(s *kernel.State) { s.Landmarks = append([]int{40}, s.Landmarks[1:]...) }},
		{"a repeated landmark", func(s *kernel.State) { s.Landmarks = append([]int{s.Landmarks[1]}, s.Landmarks[1:]...) }},
		{"a map missing", func(s *kernel.State) { s.Maps = s.Maps[1:] }},
		{"a map of the wrong size", func(s *kernel.State) {
			s.Maps = append([]*mat.Dense{mat.NewDense(9, 9, nil)}, s.Maps[1:]...)
		}},
	} {
		c := *st
		bad.edit(&c)
		if _, err := kernel.NewProjector(&c); err == nil {
			t.Errorf("NewProjector with %s: no error", bad.name)
		}
	}
	snap := &model.Snapshot{Method: "multik"}
	if _, err := kernel.StateFromSnapshot(snap); err == nil {
		t.Error("StateFromSnapshot of an empty snapshot: no error")
	}
}
