package graph

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/splittest"
	"github.com/nmfstream/nmfstream/pipeline"
)

// dupData returns n rows of dimension d drawn from a few distinct
// integer-valued rows, each repeated many times, shuffled, with a few
// other rows between them: far more exact duplicates than the side lists
// hold (4k+16), so that qstate.compact and the tie rules run.
func dupData(n, d, distinct int, rng *rand.Rand) *mat.Dense {
	base := make([][]float64, distinct)
	for i := range base {
		base[i] = make([]float64, d)
		for j := range base[i] {
			base[i][j] = float64(rng.IntN(4))
		}
	}
	x := mat.NewDense(n, d, nil)
	for i := range n {
		if rng.IntN(8) == 0 {
			for j := range d {
				x.Set(i, j, float64(rng.IntN(4)))
			}
			continue
		}
		x.SetRow(i, base[rng.IntN(distinct)])
	}
	return x
}

// TestDuplicatesMatchBrute checks batch builds (serial and in parts),
// insertions one batch at a time and a sliding window on data made mostly
// of exact duplicates against the brute-force lists, for both metrics.
func TestDuplicatesMatchBrute(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	x := dupData(400, 6, 3, rng)
	for _, m := range []Metric{Euclidean, Cosine} {
		t.Run(m.String(), func(t *testing.T) {
			cfg := KNN{K: 5, Metric: m, BlockSize: 16}
			want := brute(x, 5, m)
			batch, err := cfg.Dense(x)
			if err != nil {
				t.Fatal(err)
			}
			checkLists(t, batch, seq(400), want)
			for name, split := range map[string]func(int, func(int, int)){"reverse": splittest.Reverse, "2 goroutines": pipeline.Split(2)} {
				got, err := cfg.DenseSplit(x, split)
				if err != nil {
					t.Fatal(err)
				}
				for _, id := range batch.IDs() {
					gn, _ := got.Neighbors(id)
					wn, _ := batch.Neighbors(id)
					if !slices.Equal(gn, wn) {
						t.Fatalf("%s: node %d: %v, serial %v", name, id, gn, wn)
					}
				}
			}
			for _, split := range []func(int, func(int, int)){nil, splittest.Reverse} {
				g, err := cfg.NewDense(6)
				if err != nil {
					t.Fatal(err)
				}
				g.SetSplit(split)
				for lo, step := 0, 1; lo < 400; lo, step = lo+step, min(step*2, 64) {
					hi := min(lo+step, 400)
					if _, err := g.InsertDense(rowsOf(x, seq(hi)[lo:])); err != nil {
						t.Fatal(err)
					}
				}
				sameLists(t, g, batch, seq(400))
			}
			// A window of 150: the live rows' lists equal a fresh build
			// of the last 150.
			w := KNN{K: 5, Metric: m, BlockSize: 16, Window: 150}
			g, err := w.NewDense(6)
			if err != nil {
				t.Fatal(err)
			}
			rowOf := map[int]int{} // slot → input row
			for lo := 0; lo < 400; lo += 25 {
				ch, err := g.InsertDense(rowsOf(x, seq(lo + 25)[lo:]))
				if err != nil {
					t.Fatal(err)
				}
				for p, slot := range ch.Added {
					rowOf[slot] = lo + p
				}
			}
			if g.Len() != 150 {
				t.Fatalf("%d live nodes, want 150", g.Len())
			}
			// Ties go to the smaller id, and slots are reused: the
			// reference is built on the live rows in slot order.
			ids := g.IDs()
			rows := make([]int, len(ids))
			for p, id := range ids {
				rows[p] = rowOf[id]
			}
			ref, err := cfg.Dense(rowsOf(x, rows))
			if err != nil {
				t.Fatal(err)
			}
			sameLists(t, g, ref, ids)
		})
	}
}

// BenchmarkKNNDuplicates builds the k-NN graph (k = 10) of 3,000 rows of
// 784 values, all identical, and of 3,000 distinct rows, and reports the
// ratio of the two times: with ties pruned, duplicates cost about what
// distinct rows do (before, 2,000 identical rows of 64 values took 5.5 s
// to insert against 0.13 s now).
func BenchmarkKNNDuplicates(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const n, d = 3000, 784
	same, distinct := mat.NewDense(n, d, nil), mat.NewDense(n, d, nil)
	row := make([]float64, d)
	for j := range row {
		row[j] = float64(rng.IntN(256))
	}
	for i := range n {
		same.SetRow(i, row)
		for j := range d {
			distinct.Set(i, j, float64(rng.IntN(256)))
		}
	}
	build := func(x *mat.Dense) float64 {
		start := time.Now()
		g, err := KNN{K: 10}.NewDense(d)
		if err != nil {
			b.Fatal(err)
		}
		for lo := 0; lo < n; lo += 100 {
			if _, err := g.InsertDense(rowsOf(x, seq(lo + 100)[lo:])); err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(start).Seconds()
	}
	var ratio float64
	for range b.N {
		ratio = build(same) / build(distinct)
	}
	b.ReportMetric(ratio, "duplicates/distinct")
}
