package stages

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/internal/testenv"
	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/record"
)

// TestLongMemoryFlat streams the digits over and over (new ids each pass,
// 10% labeled, labels 100 samples late) through a window of 1,000 and
// checks that the live heap after 10N records is about what it was after
// N. Run with NMFSTREAM_LONG=1 (about a minute).
func TestLongMemoryFlat(t *testing.T) {
	testenv.SkipUnlessLong(t, "about a minute")
	x, y := datasets.Digits()
	n, d := x.Dims()
	const window, horizon, bs = 1000, 5000, 50
	l := &Learner{Model: &model.Online{Rank: 20, Graph: graph.KNN{K: 5, Window: window}, Src: rand.NewPCG(1, 1)}, Horizon: horizon}
	rnd := rand.New(rand.NewPCG(1, 1))
	seq := 0
	var off int64
	var late []record.LateLabel
	step := func() {
		b := &record.Batch{Form: record.FormDense, Dense: mat.NewDense(bs, d, nil)}
		for i := range bs {
			r := rnd.IntN(n)
			b.Dense.SetRow(i, x.RawRowView(r))
			id := strconv.Itoa(seq)
			b.IDs = append(b.IDs, id)
			b.Labels = append(b.Labels, "")
			b.Labeled = append(b.Labeled, false)
			b.Offsets = append(b.Offsets, off)
			off++
			if seq%10 == 0 {
				late = append(late, record.LateLabel{ID: id, Label: strconv.Itoa(y[r])})
			}
			seq++
		}
		for len(late) > 0 && len(late)*10 > 100 { // labels 100 samples late
			ll := late[0]
			ll.Offset = off
			off++
			b.LateLabels = append(b.LateLabels, ll)
			late = late[1:]
		}
		if _, err := l.Learn(b); err != nil {
			t.Fatal(err)
		}
	}
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	const first = 10000
	for seq < first {
		step()
	}
	h1 := heap()
	for seq < 10*first {
		step()
	}
	h2 := heap()
	c := l.Counters()
	t.Logf("heap after %d records %.1f MiB, after %d %.1f MiB (ratio %.3f); accuracy %.4f", first, float64(h1)/(1<<20), 10*first, float64(h2)/(1<<20), float64(h2)/float64(h1), c.Accuracy())
	// A flat footprint: the window, the id maps and the horizon are
	// bounded; 25% covers allocator and map-bucket noise.
	if float64(h2) > 1.25*float64(h1) {
		t.Errorf("heap grew from %d to %d bytes", h1, h2)
	}
}
