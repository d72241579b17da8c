package graph

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestFloat32BatchMatchesBrute checks the batch build with float32 dots
// (dense Euclidean rows of dimension ≥ 64) against a plain double loop:
// exact ties, near-duplicates closer than float32 can tell apart, and
// random rows, with blocks that do not divide N.
func TestFloat32BatchMatchesBrute(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	near := nearDuplicates(rng)
	for _, tc := range []struct {
		name string
		x    *mat.Dense
		k    int
		bs   int
	}{
		{"rings", rings(10, 14, 80, rng), 5, 48},
		{"ties", tieData(300, 100, rng), 6, 64},
		{"near-duplicates", near, 3, 40},
		{"random", randData(257, 96, rng), 5, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, d := tc.x.Dims()
			g, err := KNN{K: tc.k, BlockSize: tc.bs}.NewDense(d)
			if err != nil {
				t.Fatal(err)
			}
			ids, err := g.addDense(tc.x)
			if err != nil {
				t.Fatal(err)
			}
			if !g.st.beginFast32(ids) {
				t.Fatal("float32 dots not enabled: the test would not exercise them")
			}
			g.st.endFast32()
			g, err = KNN{K: tc.k, BlockSize: tc.bs}.Dense(tc.x)
			if err != nil {
				t.Fatal(err)
			}
			checkLists(t, g, seq(n), brute(tc.x, tc.k, Euclidean))
			if g.st.fast32 || g.st.data32 != nil {
				t.Error("float32 mode left on after the build")
			}
		})
	}
}

// rings returns c random centers in [0, 1)ᵈ, each followed by m points at
// distances 1 + j·10⁻⁷ (j = 0…m−1) in random directions: the centers' lists
// rank gaps far below float32's rounding of ‖a‖² + ‖b‖² − 2aᵀb.
func rings(c, m, d int, rng *rand.Rand) *mat.Dense {
	x := mat.NewDense(c*(m+1), d, nil)
	dir := make([]float64, d)
	for a := 0; a < c; a++ {
		ctr := x.RawRowView(a * (m + 1))
		for l := range ctr {
			ctr[l] = rng.Float64()
		}
		for j := 0; j < m; j++ {
			var nrm float64
			for l := range dir {
				dir[l] = rng.NormFloat64()
				nrm += dir[l] * dir[l]
			}
			r := (1 + float64(j)*1e-7) / math.Sqrt(nrm)
			row := x.RawRowView(a*(m+1) + 1 + j)
			for l := range row {
				row[l] = ctr[l] + r*dir[l]
			}
		}
	}
	return x
}

// TestFloat32Declines checks that points far from the origin and close
// together, where float32 keeps no digit of their differences, stay in
// float64 (else every pair would need refinement).
func TestFloat32Declines(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := mat.NewDense(100, 64, nil)
	for i := 0; i < 100; i++ {
		for j := 0; j < 64; j++ {
			x.Set(i, j, 1e4+1e-4*rng.Float64())
		}
	}
	g, err := KNN{K: 5}.NewDense(64)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := g.addDense(x)
	if err != nil {
		t.Fatal(err)
	}
	if g.st.beginFast32(ids) {
		t.Fatal("float32 dots enabled on data they cannot resolve")
	}
	g2, err := KNN{K: 5, BlockSize: 32}.Dense(x)
	if err != nil {
		t.Fatal(err)
	}
	checkLists(t, g2, seq(100), brute(x, 5, Euclidean))
}

// TestFloat32InsertMatchesFresh grows graphs by insertion through a window
// with float32 dots kept on (store.enable32) and compares the lists with a
// fresh float64 build on the live rows: exact ties, near-duplicates closer
// than float32 can tell apart, rings and random rows.
func TestFloat32InsertMatchesFresh(t *testing.T) {
	defer func(m int) { min32Nodes = m }(min32Nodes)
	min32Nodes = 16
	rng := rand.New(rand.NewPCG(2, 2))
	near := nearDuplicates(rng)
	for _, tc := range []struct {
		name string
		x    *mat.Dense
		k    int
	}{
		{"rings", rings(10, 14, 80, rng), 5},
		{"ties", tieData(300, 100, rng), 6},
		{"near-duplicates", near, 3},
		{"random", randData(257, 96, rng), 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, d := tc.x.Dims()
			cfg := KNN{K: tc.k, BlockSize: 32, Window: 3 * n / 4}
			g, err := cfg.NewDense(d)
			if err != nil {
				t.Fatal(err)
			}
			rowOf := map[int]int{}
			for lo := 0; lo < n; lo += 7 {
				hi := min(lo+7, n)
				ch, err := g.InsertDense(rowsOf(tc.x, seq(hi)[lo:]))
				if err != nil {
					t.Fatal(err)
				}
				for a, id := range ch.Added {
					rowOf[id] = lo + a
				}
			}
			if !g.st.keep32 {
				t.Fatal("float32 dots not kept on: the test would not exercise them")
			}
			ids := g.IDs()
			rows := make([]int, len(ids))
			for a, id := range ids {
				rows[a] = rowOf[id]
			}
			ref, err := KNN{K: tc.k}.Dense(rowsOf(tc.x, rows))
			if err != nil {
				t.Fatal(err)
			}
			sameLists(t, g, ref, ids)
		})
	}
}

// nearDuplicates returns 150 random rows of dimension 80 in pairs 1e-9
// apart: below float32's resolution of values near 0.5.
func nearDuplicates(rng *rand.Rand) *mat.Dense {
	near := randData(150, 80, rng)
	for i := 1; i < 150; i += 2 {
		for j := 0; j < 80; j++ {
			near.Set(i, j, near.At(i-1, j)+1e-9*rng.Float64())
		}
	}
	return near
}

// TestEvictingAndDenseRows checks the two views an online model takes of a
// windowed dense graph: Evicting announces exactly the slots the next
// insertion removes (and changes nothing), and DenseRows holds every live
// slot's row as inserted, zeros for free slots and past Slots(), and
// follows the graph's writes while its storage stays put.
func TestEvictingAndDenseRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	const d, window = 8, 50
	g, err := KNN{K: 3, Window: window}.NewDense(d)
	if err != nil {
		t.Fatal(err)
	}
	rowOf := map[int][]float64{} // slot → the row last inserted there
	for b, n := range []int{20, 20, 20, 7, 50, 1, 13, 33} {
		x := randData(n, d, rng)
		before := g.IDs()
		ev := g.Evicting(n)
		if again := g.Evicting(n); !slices.Equal(ev, again) || !slices.Equal(before, g.IDs()) {
			t.Fatalf("batch %d: Evicting changed the graph", b)
		}
		ch, err := g.InsertDense(x)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ev, ch.Removed) {
			t.Fatalf("batch %d: Evicting(%d) = %v, the insertion removed %v", b, n, ev, ch.Removed)
		}
		for _, s := range ch.Removed {
			delete(rowOf, s)
		}
		for p, s := range ch.Added {
			rowOf[s] = x.RawRowView(p)
		}
		rows := g.Slots() + 5
		all := g.DenseRows(rows)
		if len(all) != rows*d {
			t.Fatalf("batch %d: DenseRows(%d) has %d values, want %d", b, rows, len(all), rows*d)
		}
		for s := range rows {
			got := all[s*d : (s+1)*d]
			want, live := rowOf[s]
			if live != g.Live(s) {
				t.Fatalf("batch %d: slot %d live %v, the test expects %v", b, s, g.Live(s), live)
			}
			if !live {
				want = make([]float64, d)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("batch %d: DenseRows slot %d = %v, want %v", b, s, got, want)
			}
		}
	}
	if ev := g.Evicting(window + 1); ev != nil {
		t.Errorf("Evicting of more than the window = %v, want nil (that insertion fails)", ev)
	}
	// A removal writes through to a view taken before it.
	view := g.DenseRows(g.Slots())
	s := g.IDs()[0]
	if _, err := g.Remove(s); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(view[s*d:(s+1)*d], make([]float64, d)) {
		t.Error("a removed slot's row is not zero in a view taken before the removal")
	}
	sp, err := KNN{K: 3}.NewSparse(d)
	if err != nil {
		t.Fatal(err)
	}
	if sp.DenseRows(1) != nil {
		t.Error("DenseRows of a sparse graph is not nil")
	}
}
