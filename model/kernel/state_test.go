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
// from its state through a snapshot, under every projection, and requires
// equal codes with ==: the rebuilt method must run the same arithmetic.
func checkRoundTrip(t *testing.T, name string, m stateful, setProj func(kernel.Projection), test model.Data) {
	t.Helper()
	for _, p := range []kernel.Projection{kernel.ProjectGraph, kernel.ProjectNNLS, kernel.ProjectPaper} {
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
	checkRoundTrip(t, "flexible", f, func(p kernel.Projection) { f.Projection = p }, model.DenseRows(test))

	// MultiK on sparse rows, with the default pool (relative widths to
	// resolve, several kernels with weights) and the graph term.
	xs, ts := sparse.FromDense(x), sparse.FromDense(test)
	mk := &kernel.MultiK{Common: model.Common{Rank: 4, MaxIter: 60}, Alpha: 0.5, Step: kernel.TauEntropy}
	if err := mk.Fit(model.SparseRows(xs), nil); err != nil {
		t.Fatal(err)
	}
	checkRoundTrip(t, "multik", mk, func(p kernel.Projection) { mk.Projection = p }, model.SparseRows(ts))
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
	if _, err := ny.State(); err == nil {
		t.Error("State of a Nyström fit: no error")
	}
	snap := &model.Snapshot{Method: "multik"}
	if _, err := kernel.StateFromSnapshot(snap); err == nil {
		t.Error("StateFromSnapshot of an empty snapshot: no error")
	}
}
