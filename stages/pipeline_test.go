package stages_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/pipeline"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/stages"
)

// digitBatches returns the digits in input order as batches of size
// samples, every fifth one labeled.
func digitBatches(size int) []*record.Batch {
	x, y := datasets.Digits()
	n, d := x.Dims()
	var out []*record.Batch
	for lo := 0; lo < n; lo += size {
		hi := min(lo+size, n)
		b := &record.Batch{Form: record.FormDense, Dense: mat.NewDense(hi-lo, d, nil)}
		for i := lo; i < hi; i++ {
			b.Dense.SetRow(i-lo, x.RawRowView(i))
			b.IDs = append(b.IDs, fmt.Sprint(i))
			b.Labels = append(b.Labels, fmt.Sprint(y[i]))
			b.Labeled = append(b.Labeled, i%5 == 0)
			b.Offsets = append(b.Offsets, int64(i))
		}
		out = append(out, b)
	}
	return out
}

// stragglers returns the stacks of the live goroutines, other than the
// caller, that run code of package pipeline or of go-streams (the helper
// of pipeline/leak_test.go).
func stragglers() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n")[1:] {
		if strings.Contains(g, "nmfstream/pipeline.") || strings.Contains(g, "reugn/go-streams") {
			out = append(out, g)
		}
	}
	return out
}

// checkNoLeak fails t if pipeline goroutines are still alive a while after
// Run returned: a goroutine that closed its last channel needs a few
// scheduler ticks to vanish.
func checkNoLeak(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second) // generous: -race on 2 shared cores
	for {
		left := stragglers()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%d goroutines left:\n%s", len(left), strings.Join(left, "\n\n"))
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// chain builds the stages of a stream over bs (decode → featurize →
// learn → sink) around a fresh Learner. learned counts the records the
// learn stage applied; hook, if set, runs in each stage before its work,
// with the stage's name and the batch's first offset (featurize, which runs
// in parallel and keeps no count) or the call's number (learn), and may
// fail it.
func chain(bs []*record.Batch, sink func(*stages.Step) error, hook func(stage string, n int) error) (*pipeline.Pipeline, *stages.Learner, *int) {
	l := &stages.Learner{Model: &model.Online{Rank: 10, Graph: graph.KNN{K: 5, Window: 300}, Src: rand.NewPCG(1, 1)}}
	learned := new(int)
	nl := 0
	if hook == nil {
		hook = func(string, int) error { return nil }
	}
	p := pipeline.New(
		pipeline.FromSlice("batches", bs),
		[]pipeline.Stage{
			pipeline.Ordered(pipeline.Map("featurize", 2, func(_ context.Context, b *record.Batch) (*stages.Features, error) {
				if err := hook("featurize", int(b.Offsets[0])); err != nil {
					return nil, err
				}
				return stages.NewFeatures(b), nil
			})),
			pipeline.Map("learn", 1, func(_ context.Context, f *stages.Features) (*stages.Step, error) {
				nl++
				if err := hook("learn", nl); err != nil {
					return nil, err
				}
				st, err := l.LearnFeatures(f)
				if err == nil {
					*learned += f.Records()
				}
				return st, err
			}),
		},
		pipeline.To("steps", pipeline.WriteFunc[*stages.Step](func(_ context.Context, st *stages.Step) error { return sink(st) })),
	)
	return p, l, learned
}

// TestStagesCancel cancels a stream of the real stages mid-stream: Run
// returns context.Canceled, leaves no goroutine, and the Learner is
// consistent (its counters cover exactly the batches its stage finished).
func TestStagesCancel(t *testing.T) {
	bs := digitBatches(20)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	steps := 0
	p, l, learned := chain(bs, func(*stages.Step) error {
		if steps++; steps == 5 {
			cancel()
		}
		return nil
	}, nil)
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	checkNoLeak(t)
	c := l.Counters()
	if c.Records != int64(*learned) || c.Records < 5*20 || c.Records >= int64(20*len(bs)) {
		t.Errorf("learner counted %d records, its stage learned %d, of %d", c.Records, *learned, 20*len(bs))
	}
}

// TestStagesFail fails the featurize stage, then the learn stage, mid-
// stream: Run returns the error wrapped with the stage's name, and no
// goroutine is left blocked.
func TestStagesFail(t *testing.T) {
	bs := digitBatches(20)
	boom := errors.New("boom")
	for _, tc := range []struct {
		stage string
		at    int // the featurize stage's first offset, or the learn stage's call
	}{
		{"featurize", 200},
		{"learn", 12},
	} {
		p, _, learned := chain(bs, func(*stages.Step) error { return nil }, func(stage string, n int) error {
			if stage == tc.stage && n == tc.at {
				return boom
			}
			return nil
		})
		err := p.Run(context.Background())
		if want := fmt.Sprintf("pipeline: stage %q: boom", tc.stage); err == nil || err.Error() != want || !errors.Is(err, boom) {
			t.Errorf("%s fails: Run returned %v, want %s", tc.stage, err, want)
		}
		if *learned >= 20*len(bs) {
			t.Errorf("%s fails: the whole stream was learned", tc.stage)
		}
		checkNoLeak(t)
	}
}

// TestLearnFeaturesDirect feeds LearnFeatures batches featurized by the
// caller instead of NewFeatures: X's dimension stands for a zero Dim, a batch
// of another dimension is rejected sample by sample, and inconsistent
// lengths panic (misuse visible in the caller's code).
func TestLearnFeaturesDirect(t *testing.T) {
	l := &stages.Learner{Model: &model.Online{Rank: 2, Graph: graph.KNN{K: 2}, Src: rand.NewPCG(1, 1)}}
	rows := func(n, d, off int) *stages.Features {
		x := mat.NewDense(n, d, nil)
		f := &stages.Features{X: model.DenseRows(x)}
		for i := range n {
			for j := range d {
				x.Set(i, j, float64(1+(i+j)%3))
			}
			f.IDs = append(f.IDs, fmt.Sprint(off+i))
			f.Labels = append(f.Labels, "")
			f.Labeled = append(f.Labeled, false)
			f.Offsets = append(f.Offsets, int64(off+i))
		}
		return f
	}
	st, err := l.LearnFeatures(rows(6, 4, 0))
	if err != nil || len(st.Predictions) != 6 {
		t.Fatalf("first batch: %v, %d predictions", err, len(st.Predictions))
	}
	st, err = l.LearnFeatures(rows(3, 5, 6))
	if err != nil || len(st.Predictions) != 0 || len(st.Rejects) != 3 || !strings.Contains(st.Rejects[0].Reason.Error(), "5 features, the stream has 4") {
		t.Fatalf("other dimension: %v, %d predictions, rejects %v", err, len(st.Predictions), st.Rejects)
	}
	if c := l.Counters(); c.Records != 9 || c.Samples != 6 || c.Rejected != 3 || c.Offset != 9 {
		t.Errorf("counters %+v", c)
	}
	bad := rows(2, 4, 9)
	bad.IDs = bad.IDs[:1]
	func() {
		defer func() {
			if recover() == nil {
				t.Error("no panic for 2 samples and 1 id")
			}
		}()
		l.LearnFeatures(bad)
	}()
	if c := l.Counters(); c.Records != 9 {
		t.Errorf("the misuse changed the counters: %+v", c)
	}
}
