package stages

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
)

// TestConsolidate checks Learner.Consolidate on the digits stream: the
// refit lowers the method's objective from the online state, the report's
// objectives and codes' change agree with the model before and after, the
// codes stay non-negative, and the learner goes on learning.
func TestConsolidate(t *testing.T) {
	recs, _ := digitsStream(0.1, 100)
	bs := batches(recs, 10)
	for _, method := range []string{"gnmf", "ssknmf"} {
		l := &Learner{Model: &model.Online{Method: method, Rank: 20, Graph: graph.KNN{K: 5, Window: 400}, Src: rand.NewPCG(1, 1)}}
		if _, err := l.Consolidate(10); !errors.Is(err, model.ErrNotFitted) {
			t.Fatalf("%s: before the first fit: %v, want ErrNotFitted", method, err)
		}
		for _, b := range bs[:90] {
			if _, err := l.Learn(b); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := l.Consolidate(0); err == nil {
			t.Fatalf("%s: zero iterations accepted", method)
		}
		l.Model.Settle()
		obj, emb := l.Model.Objective(), l.Embedding()
		live := l.Model.KNN().IDs()
		before := l.codesOf(live)
		c, err := l.Consolidate(30)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		if c.Iterations < 1 || c.Iterations > 30 {
			t.Errorf("%s: %d iterations, want 1–30", method, c.Iterations)
		}
		if c.ObjectiveOnline != obj || c.Online.NN1 != emb.NN1 || c.Online.NMI != emb.NMI {
			t.Errorf("%s: online objective %g, embedding %+v; the model had %g, %+v", method, c.ObjectiveOnline, c.Online, obj, emb)
		}
		if got := l.Model.Objective(); c.ObjectiveBatch != got {
			t.Errorf("%s: batch objective %g, the refitted model's %g", method, c.ObjectiveBatch, got)
		}
		// The multiplicative updates do not raise the objective, and the
		// online state is not a stationary point of the window's batch fit.
		if !(c.ObjectiveBatch < c.ObjectiveOnline) || !(c.Gap() > 0) {
			t.Errorf("%s: objective online %g, batch %g (gap %g): want the batch fit lower", method, c.ObjectiveOnline, c.ObjectiveBatch, c.Gap())
		}
		after := l.codesOf(live)
		var d, n float64
		for i, x := range after.RawMatrix().Data {
			if x < 0 {
				t.Fatalf("%s: negative code entry %g after the refit", method, x)
			}
			b := before.RawMatrix().Data[i]
			d += (x - b) * (x - b)
			n += b * b
		}
		if want := math.Sqrt(d / n); math.Abs(c.CodesChange-want) > 1e-12*want || !(want > 0) {
			t.Errorf("%s: codes change %g, want %g > 0", method, c.CodesChange, want)
		}
		if b := l.Embedding(); c.Batch.NN1 != b.NN1 || c.Batch.NMI != b.NMI || c.Batch.N == 0 {
			t.Errorf("%s: batch embedding %+v, the refitted model's %+v", method, c.Batch, b)
		}
		for _, b := range bs[90:120] {
			if _, err := l.Learn(b); err != nil {
				t.Fatalf("%s: learning after the refit: %v", method, err)
			}
		}
	}
}
