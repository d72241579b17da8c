package sources_test

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/sinks"
	"github.com/nmfstream/nmfstream/sources"
)

// modelSeed returns a small fitted model file, as nmfstream fit writes it.
func modelSeed(f *testing.F) []byte {
	rnd := rand.New(rand.NewPCG(1, 1))
	x := mat.NewDense(20, 6, nil)
	for i := range x.RawMatrix().Data {
		x.RawMatrix().Data[i] = rnd.Float64()
	}
	labels := make([]int, 20)
	for i := range labels {
		labels[i] = i%4 - 1 // −1 (unlabeled), 0, 1, 2
	}
	g := &model.GNMF{Common: model.Common{Rank: 3, MaxIter: 5, Src: rand.NewPCG(1, 1)}}
	if err := g.Fit(model.DenseRows(x), labels); err != nil {
		f.Fatal(err)
	}
	s := &model.Snapshot{
		Version: model.SnapshotVersion, Method: "gnmf", Params: map[string]string{"rank": "3"},
		U: mat.DenseCopyOf(g.Basis()), V: mat.DenseCopyOf(g.Codes()), TrainDense: x,
		Graph: graph.KNN{K: graph.DefaultK}, Alpha: g.Projector(model.ProjectGraph).Alpha,
		Classes: []string{"a", "b", "c"}, Labels: labels, Form: "dense",
	}
	var buf bytes.Buffer
	if err := sinks.WriteModel(&buf, s, nil); err != nil {
		f.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzModel checks that no model file, however corrupt, crashes, hangs or
// exhausts memory in sources.ReadModel: it reads a valid snapshot or fails.
func FuzzModel(f *testing.F) {
	f.Add(modelSeed(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		tm := time.AfterFunc(10*time.Second, func() { panic("FuzzModel: input took over 10 s") })
		defer tm.Stop()
		s, err := sources.ReadModel(bytes.NewReader(data), nil)
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("ReadModel returned an invalid snapshot: %v", err)
		}
	})
}
