//go:build nats

package distributed

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/stages"
)

// benchClasses are the classes of the confusion benchmarks: up to
// --max-classes' default (1000).
var benchClasses = []int{10, 100, 1000}

// benchConfusion returns a confusion of k classes named names (k rows of
// k + 1 counts) holding 2·k scored samples: sample s of class s mod k,
// predicted right except every 10th (as the next class) and every 25th
// (no prediction), so its nonzero cells are the diagonal and about k/3
// others.
func benchConfusion(k int) [][]int64 {
	n := make([][]int64, k)
	for i := range n {
		n[i] = make([]int64, k+1)
	}
	for s := range 2 * k {
		truth, pred := s%k, s%k
		switch {
		case s%25 == 0:
			pred = k
		case s%10 == 0:
			pred = (truth + 1) % k
		}
		n[truth][pred]++
	}
	return n
}

// scoredLearner returns an owner's Learner whose scorer holds the counts
// n of the classes names (len(names) ≥ len(n)), restored from the state
// of a Learner that learned a few unlabeled samples, with those counts and
// classes put in.
func scoredLearner(tb testing.TB, names []string, n [][]int64) *stages.Learner {
	tb.Helper()
	mk := func() *stages.Learner {
		return &stages.Learner{Model: &model.Online{Rank: 3, Graph: graph.KNN{K: 5, Window: 200}, Src: rand.NewPCG(1, 1)}}
	}
	l := mk()
	if _, err := l.LearnFeatures(routeFeatures(clusteredSamples(20, 8, 2, 3), 0)); err != nil {
		tb.Fatal(err)
	}
	s, err := l.State()
	if err != nil {
		tb.Fatal(err)
	}
	s.Classes, s.Confusion = names, n
	out := mk()
	if err := out.Restore(s); err != nil {
		tb.Fatal(err)
	}
	return out
}

// classNames returns k class names, "c0" to "c<k−1>", reversed if rev.
func classNames(k int, rev bool) []string {
	out := make([]string, k)
	for i := range out {
		j := i
		if rev {
			j = k - 1 - i
		}
		out[i] = fmt.Sprintf("c%d", j)
	}
	return out
}

// ownerAnswer is learnBatch's answer of a batch st: the Learner's scores
// and confusion, encoded with st, as learnBatch encodes them (chain.go).
func ownerAnswer(l *stages.Learner, st *stages.Step) ([]byte, error) {
	return encodeStepLabels(st, l.Counters(), l.Scores(), l.ConfusionCells(), l.Pending(), labelCounts{})
}

// BenchmarkOwnerAnswer is one owner's per-batch scoring cost: its scores,
// its confusion and their encoding in its answer (the batch's own
// predictions left out), with k classes and 2·k scored samples.
func BenchmarkOwnerAnswer(b *testing.B) {
	for _, k := range benchClasses {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			l := scoredLearner(b, classNames(k, false), benchConfusion(k))
			st := &stages.Step{}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ownerAnswer(l, st); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDriverMerge is the driver's per-batch scoring cost: merging
// two partitions' decoded answers (their classes in opposite orders), each
// with k classes and 2·k scored samples, and scoring their sum.
func BenchmarkDriverMerge(b *testing.B) {
	for _, k := range benchClasses {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			parts := map[int]*wireStep{}
			for p := range 2 {
				l := scoredLearner(b, classNames(k, p == 1), benchConfusion(k))
				raw, err := ownerAnswer(l, &stages.Step{})
				if err != nil {
					b.Fatal(err)
				}
				if parts[p], err = decodeStep(raw); err != nil {
					b.Fatal(err)
				}
			}
			d := &ChainDriver{last: map[int]*wireStep{}, late: map[int64]int64{}}
			b.ReportAllocs()
			for b.Loop() {
				d.merge(1, parts)
			}
		})
	}
}

// BenchmarkDriverDecode is the driver's cost of reading one owner's
// answer (decodeStep) with k classes and 2·k scored samples: its reader
// makes the dense confusion, k rows of k + 1 counts.
func BenchmarkDriverDecode(b *testing.B) {
	for _, k := range benchClasses {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			raw, err := ownerAnswer(scoredLearner(b, classNames(k, false), benchConfusion(k)), &stages.Step{})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := decodeStep(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
