package model

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/graph"
)

func validSnapshot() *Snapshot {
	return &Snapshot{
		Version:    SnapshotVersion,
		Method:     "gnmf",
		U:          mat.NewDense(4, 2, []float64{1, 0, 0, 1, 1, 1, 0, 0}),
		V:          mat.NewDense(3, 2, []float64{1, 0, 0, 1, 1, 1}),
		TrainDense: mat.NewDense(3, 4, []float64{1, 0, 1, 0, 0, 1, 1, 0, 1, 1, 2, 0}),
		Graph:      graph.KNN{K: 1},
		Alpha:      1,
		Classes:    []string{"a", "b"},
		Labels:     []int{0, -1, 1},
		Form:       "dense",
	}
}

func TestSnapshotValidate(t *testing.T) {
	if err := validSnapshot().Validate(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		modify func(s *Snapshot)
		want   string
	}{
		{"version", func(s *Snapshot) { s.Version = 0 }, "version"},
		{"no method", func(s *Snapshot) { s.Method = "" }, "method"},
		{"no U", func(s *Snapshot) { s.U = nil }, "basis"},
		{"rank", func(s *Snapshot) { s.V = mat.NewDense(3, 3, nil) }, "ranks differ"},
		{"train shape", func(s *Snapshot) { s.TrainDense = mat.NewDense(3, 5, nil) }, "training rows"},
		{"labels length", func(s *Snapshot) { s.Labels = []int{0} }, "labels"},
		{"label range", func(s *Snapshot) { s.Labels = []int{0, 2, 1} }, "label 2"},
		{"classes unsorted", func(s *Snapshot) { s.Classes = []string{"b", "a"} }, "sorted"},
		{"negative U", func(s *Snapshot) { s.U.Set(1, 1, -1) }, "U has entry -1"},
		{"NaN alpha", func(s *Snapshot) { s.Alpha = -1 }, "α"},
		{"text without vectorizer", func(s *Snapshot) { s.Form = "text" }, "vectorizer"},
		{"image size", func(s *Snapshot) { s.Form, s.ImageWidth, s.ImageHeight = "image", 3, 3 }, "image size"},
	}
	for _, c := range cases {
		s := validSnapshot()
		c.modify(s)
		err := s.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
	s := validSnapshot()
	s.Version = SnapshotVersion + 1
	if err := s.Validate(); !errors.Is(err, ErrSnapshotVersion) {
		t.Errorf("version error %v does not wrap ErrSnapshotVersion", err)
	}
	// A linear model may have negative codes.
	s = validSnapshot()
	s.Linear = true
	s.V.Set(0, 0, -2)
	if err := s.Validate(); err != nil {
		t.Errorf("linear model with negative codes: %v", err)
	}
	if _, err := s.Projector(ProjectNNLS); err == nil {
		t.Error("linear model gave a Projector")
	}
}

func ExampleSnapshot_Projector() {
	// A snapshot as "nmfstream fit" saves it: basis, training codes and
	// rows, and the graph settings of graph-aware projection.
	s := validSnapshot()
	p, err := s.Projector(ProjectNNLS)
	if err != nil {
		fmt.Println(err)
		return
	}
	var codes mat.Dense
	x := mat.NewDense(1, 4, []float64{2, 0, 2, 0}) // = 2·u₁
	if err := p.ProjectTo(&codes, DenseRows(x)); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.2f\n", mat.Formatted(&codes))
	// Output:
	// [2.00  0.00]
}
