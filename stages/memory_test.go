package stages

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/testenv"
	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/record"
)

// synthStream makes batches of an endless labeled stream: each sample is
// one of 10 random non-negative prototypes (dimension d) plus noise, 10% of
// the samples get their label 100 records later (as a late-label record),
// and every id is new.
type synthStream struct {
	rnd    *rand.Rand
	protos *mat.Dense
	off    int64
	due    map[int64][]record.LateLabel
}

func newSynthStream(d int) *synthStream {
	rnd := rand.New(rand.NewPCG(7, 7))
	p := mat.NewDense(10, d, nil)
	for i := range p.RawMatrix().Data {
		p.RawMatrix().Data[i] = rnd.Float64()
	}
	return &synthStream{rnd: rnd, protos: p, due: map[int64][]record.LateLabel{}}
}

// next returns the next batch of n samples (plus the late labels due).
func (s *synthStream) next(n int) *record.Batch {
	_, d := s.protos.Dims()
	b := &record.Batch{Form: record.FormDense, Dense: mat.NewDense(n, d, nil)}
	for i := 0; i < n; i++ {
		c := s.rnd.IntN(10)
		row := b.Dense.RawRowView(i)
		for j := range row {
			row[j] = s.protos.At(c, j) + 0.3*s.rnd.Float64()
		}
		id := strconv.FormatInt(s.off, 10)
		b.IDs = append(b.IDs, id)
		b.Labels = append(b.Labels, "")
		b.Labeled = append(b.Labeled, false)
		b.Offsets = append(b.Offsets, s.off)
		if s.rnd.IntN(10) == 0 {
			s.due[s.off+100] = append(s.due[s.off+100], record.LateLabel{ID: id, Label: strconv.Itoa(c)})
		}
		s.off++
		due := s.due[s.off]
		delete(s.due, s.off)
		for _, ll := range due {
			ll.Offset = s.off
			s.off++
			b.LateLabels = append(b.LateLabels, ll)
		}
	}
	return b
}

// heapInUse returns the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestMemoryFlat streams records through a Learner with a bounded window
// and checks that the live heap stops growing once the window and the
// label horizon are full: it may not grow by more than 10% (plus 256 KiB
// for allocator noise) between the end of the first fifth of the stream
// and its end. The default run streams 50,000 records; NMFSTREAM_LONG=1
// streams 1,000,000 with the default horizon.
func TestMemoryFlat(t *testing.T) {
	total, horizon := 50_000, 5_000
	if testenv.Long() {
		total, horizon = 1_000_000, 0
	} else if testing.Short() || testenv.Race {
		t.Skip("streams 50,000 records on one goroutine")
	}
	l := &Learner{
		Model:   &model.Online{Rank: 5, Graph: graph.KNN{K: 5, Window: 1000}, Src: rand.NewPCG(1, 1)},
		Horizon: horizon,
	}
	s := newSynthStream(16)
	const bs = 100
	var early uint64
	for done := 0; done < total; done += bs {
		if _, err := l.Learn(s.next(bs)); err != nil {
			t.Fatal(err)
		}
		if done+bs == total/5 {
			early = heapInUse()
		}
	}
	late := heapInUse()
	c := l.Counters()
	t.Logf("live heap %d KiB after %d samples, %d KiB after %d (%.3f×); counters %+v",
		early>>10, total/5, late>>10, total, float64(late)/float64(early), c)
	if c.Samples != int64(total) {
		t.Fatalf("%d samples applied, want %d", c.Samples, total)
	}
	if late > early+early/10+256<<10 {
		t.Errorf("live heap grew from %d KiB to %d KiB over the stream", early>>10, late>>10)
	}
}
