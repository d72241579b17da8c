package model

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestProjectKL projects count data on a basis fitted with the KL loss:
// with Loss set to LossKL the codes' KL divergence is below the one of the
// Frobenius codes (each projection minimizes its own loss) and close to the
// fit's own (the fit's codes minimize it for the same basis), and a
// snapshot that records the loss projects with it.
func TestProjectKL(t *testing.T) {
	x, _, _ := countData(80, 30, 4, 5)
	data := DenseRows(x)
	m := &NMF{Common: Common{Rank: 4, MaxIter: 500, Tol: -1, Loss: LossKL, Src: rand.NewPCG(2, 2)}}
	if err := m.Fit(data, nil); err != nil {
		t.Fatal(err)
	}
	u := m.Basis()
	kl := NewKL(data)
	fitted := kl.Value(u, m.Codes())
	codes := func(loss LossKind) *mat.Dense {
		p := &Projector{Method: ProjectNNLS, U: u, Loss: loss, MaxIter: 2000, Tol: -1}
		var v mat.Dense
		if err := p.ProjectTo(&v, data); err != nil {
			t.Fatal(err)
		}
		return &v
	}
	byKL, byFro := kl.Value(u, codes(LossKL)), kl.Value(u, codes(LossFrobenius))
	if byKL >= byFro {
		t.Errorf("KL divergence of the KL codes %.6g, not below the Frobenius codes' %.6g", byKL, byFro)
	}
	if byKL > fitted*1.01 {
		t.Errorf("KL divergence of the projected codes %.6g, more than 1%% above the fit's %.6g", byKL, fitted)
	}
	s := &Snapshot{Params: map[string]string{"loss": "kl"}, Method: "nmf", U: u, V: m.Codes()}
	p, err := s.Projector(ProjectNNLS)
	if err != nil {
		t.Fatal(err)
	}
	if p.Loss != LossKL {
		t.Errorf("snapshot with loss kl: projector loss %v", p.Loss)
	}
	s.Params["loss"] = "hinge"
	if _, err := s.Projector(ProjectNNLS); err == nil {
		t.Error("unknown loss in a snapshot: no error")
	}
}
