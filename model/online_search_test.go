package model

import (
	"cmp"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/internal/gemm"
	"github.com/nmfstream/nmfstream/internal/splittest"
	"github.com/nmfstream/nmfstream/internal/testenv"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/pipeline"
)

// TestSearchBasisGraph checks Online.SearchBasis's rebuild on real data
// (the digits, rank 6 of 64 features, a window of 300 that has wrapped): the
// basis's columns are orthonormal; every live sample keeps its slot, the
// window its age order and the nodes their labels; and each node's list is
// exactly its k nearest live nodes by the distance of the samples'
// projections, found here by brute force.
func TestSearchBasisGraph(t *testing.T) {
	train, _, _, _, _ := digitsSplit(t, 10)
	n, d := train.Dims()
	o := &Online{Rank: 8, SearchBasis: 6, Graph: graph.KNN{K: 5, Window: 300}}
	for lo := 0; lo < min(n, 700); lo += 50 {
		ids, err := o.PartialFit(DenseRows(mat.DenseCopyOf(train.Slice(lo, min(lo+50, n), 0, d))))
		if err != nil {
			t.Fatal(err)
		}
		if err := o.SetLabel(ids[0], lo%3); err != nil {
			t.Fatal(err)
		}
	}
	g := o.KNN()
	if g.Dim() != 6 {
		t.Fatalf("the graph searches %d dimensions after 700 samples, want the basis's 6", g.Dim())
	}
	order := g.Order()
	if slices.IsSorted(order) {
		t.Fatal("test does not exercise a wrapped window")
	}
	labels := make([]int, g.Slots())
	for id := range labels {
		labels[id] = -1
		if g.Live(id) {
			labels[id] = g.Label(id)
		}
	}
	slots := g.Slots()
	r, err := o.fitSearchBasis()
	if err != nil {
		t.Fatal(err)
	}
	var gram mat.Dense
	gram.Mul(r.T(), r)
	for i := range 6 {
		for j := range 6 {
			if want := b2f(i == j); math.Abs(gram.At(i, j)-want) > 1e-9 {
				t.Fatalf("basis not orthonormal: (RᵀR)[%d,%d] = %g", i, j, gram.At(i, j))
			}
		}
	}
	if err := o.reembed(r); err != nil {
		t.Fatal(err)
	}
	g = o.KNN()
	if g.Slots() != slots || !slices.Equal(g.Order(), order) {
		t.Fatal("the rebuild moved slots or changed the age order")
	}
	var z mat.Dense
	z.Mul(&o.xd, r)
	checkExactLists(t, o, &z, labels)
}

// checkExactLists checks that every live node of o's graph has its label
// in labels (by slot) and, as its list, its k nearest live nodes by the
// Euclidean distance of the rows of z (by slot), found by brute force.
func checkExactLists(t *testing.T, o *Online, z *mat.Dense, labels []int) {
	t.Helper()
	g := o.KNN()
	order := g.Order()
	_, dims := z.Dims()
	for _, id := range order {
		if g.Label(id) != labels[id] {
			t.Fatalf("node %d: label %d, want %d", id, g.Label(id), labels[id])
		}
		type cand struct {
			id int
			d  float64
		}
		var all []cand
		for _, j := range order {
			if j != id {
				var s float64
				for c := range dims {
					e := z.At(id, c) - z.At(j, c)
					s += e * e
				}
				all = append(all, cand{j, s})
			}
		}
		slices.SortFunc(all, func(a, b cand) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.id, b.id)) })
		got, dist := g.Neighbors(id)
		for p, j := range got {
			// Equal up to rounding: a near tie may order two nodes the
			// other way.
			if j != all[p].id && math.Abs(dist[p]-math.Sqrt(all[p].d)) > 1e-6 {
				t.Fatalf("node %d: neighbour %d is %d at %g, brute force %d at %g", id, p, j, dist[p], all[p].id, math.Sqrt(all[p].d))
			}
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// TestSearchBasisRule checks that the search stays on the samples when they
// have fewer than 10·SearchBasis features (the digits' 64 at rank 8), and
// that SearchDim and SearchBasis together are refused.
func TestSearchBasisRule(t *testing.T) {
	train, _, _, _, _ := digitsSplit(t, 10)
	x := DenseRows(mat.DenseCopyOf(train.Slice(0, 600, 0, 64)))
	o := &Online{Rank: 8, SearchBasis: 8, Graph: graph.KNN{K: 5}}
	if _, err := o.PartialFit(x); err != nil {
		t.Fatal(err)
	}
	if o.KNN().Dim() != 64 {
		t.Fatalf("the graph searches %d dimensions, want the samples' 64", o.KNN().Dim())
	}
	both := &Online{Rank: 8, SearchBasis: 6, SearchDim: 16}
	if _, err := both.PartialFit(x); err == nil {
		t.Fatal("SearchDim and SearchBasis together were accepted")
	}
}

// TestSearchBasisGuard checks the search basis's guard (online_guard.go) on
// the digits, every sample labeled with its class, at rank 3 of 64 features
// (the rule of 10 features per rank lets the span in): the rank-3 span
// classifies the labeled samples far worse than their pixels, so the fit at
// 500 samples is refused and the graph searches the pixels; the samples'
// own space (an orthonormal basis of all 64 pixels) never loses; with fewer
// than spanGuardMinLabels labeled samples, of no more classes than the
// span's 3 columns (TestSpanTooNarrow), the guard keeps the span; and
// moving the search back from a span to the samples (reembed(nil)) keeps
// slots, age order and labels and gives every node its exact nearest
// neighbours among the pixels.
func TestSearchBasisGuard(t *testing.T) {
	x, y := datasets.Digits()
	_, d := x.Dims()
	stream := func(labelEvery, maxClass int) *Online {
		o := &Online{Rank: 8, SearchBasis: 3, Graph: graph.KNN{K: 5}}
		for lo := 0; lo < 600; lo += 50 {
			ids, err := o.PartialFit(DenseRows(mat.DenseCopyOf(x.Slice(lo, lo+50, 0, d))))
			if err != nil {
				t.Fatal(err)
			}
			for p, id := range ids {
				if (lo+p)%labelEvery == 0 && y[lo+p] <= maxClass {
					if err := o.SetLabel(id, y[lo+p]); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		return o
	}
	all := stream(1, 9)
	if got := all.KNN().Dim(); got != d {
		t.Errorf("every sample labeled: the graph searches %d dimensions, want the pixels' %d (the rank-3 span refused)", got, d)
	}
	r, err := all.fitSearchBasis()
	if err != nil {
		t.Fatal(err)
	}
	if !all.spanLoses(r) {
		t.Error("the rank-3 span of the digits does not lose against their pixels")
	}
	eye := mat.NewDense(d, d, nil)
	for i := range d {
		eye.Set(i, i, 1)
	}
	if all.spanLoses(eye) {
		t.Error("the pixels' own space (64 columns, 10 classes) loses against the pixels")
	}

	few := stream(10, 2) // about 18 labeled samples of three classes
	if got := few.KNN().Dim(); got != 3 {
		t.Fatalf("18 labeled samples of 3 classes: the graph searches %d dimensions, want the span's 3 (the guard abstains)", got)
	}
	g := few.KNN()
	slots, order := g.Slots(), g.Order()
	labels := make([]int, slots)
	for id := range labels {
		labels[id] = -1
		if g.Live(id) {
			labels[id] = g.Label(id)
		}
	}
	if err := few.reembed(nil); err != nil {
		t.Fatal(err)
	}
	g = few.KNN()
	if g.Dim() != d || g.Slots() != slots || !slices.Equal(g.Order(), order) {
		t.Fatalf("back to the samples: %d dimensions, %d slots, order kept %v; want %d, %d, true", g.Dim(), g.Slots(), slices.Equal(g.Order(), order), d, slots)
	}
	checkExactLists(t, few, &few.xd, labels)
}

// TestSpanLosesVote checks that the guard refuses a span in which every
// labeled sample's nearest neighbour is of its class but its 5-NN vote is
// not, where the nearest neighbour alone would keep it: 30 pairs of twins,
// classes 0, 1, 2 in turn along a line in the span (each sample's twin is
// nearest, then the two pairs of the other classes beside it), in three
// far clusters by class among the samples. Its own samples as the span
// are not refused.
func TestSpanLosesVote(t *testing.T) {
	const pairs = 30
	x := mat.NewDense(2*pairs, 4, nil)
	proj := mat.NewDense(2*pairs, 1, nil)
	labels := make([]int, 2*pairs)
	for p := range pairs {
		for twin := range 2 {
			i := 2*p + twin
			labels[i] = p % 3
			x.Set(i, p%3, 100)
			x.Set(i, 3, float64(p)+0.001*float64(twin))
			proj.Set(i, 0, float64(p)+0.001*float64(twin))
		}
	}
	spanNN := nearestK(proj, false, 5)
	if nn := voteLabeled(spanNN, 1, labels); !slices.Equal(nn, labels) {
		t.Fatalf("the span's nearest neighbours vote %v, want every sample's own class %v", nn, labels)
	}
	if !spanLosesOn(x, proj, labels, false, 5) {
		t.Error("a span whose 5-NN vote loses every sample is kept")
	}
	if spanLosesOn(x, x, labels, false, 5) {
		t.Error("the samples' own space loses against them")
	}
}

// TestEngineInner checks the engine's inner updates (Engine.Inner, through
// NMF.Inner) against the accelerated multiplicative updates written out
// (Gillis and Glineur): per outer iteration U ← U ⊙ XV / (U·VᵀV) Inner
// times with XV and VᵀV computed once, then V alike with XᵀU and UᵀU, bit
// for bit, serial and in parts; and that Run refuses it with a term.
func TestEngineInner(t *testing.T) {
	x, _ := datasets.Digits()
	x = mat.DenseCopyOf(x.Slice(0, 600, 0, 64))
	const k, outer, inner = 12, 20, 3
	for _, split := range []func(int, func(int, int)){nil, pipeline.Split(2), splittest.Reverse} {
		nm := &NMF{Common: Common{Rank: k, MaxIter: outer, Tol: -1, Split: split, Float32: true}, Inner: inner}
		if err := nm.Fit(DenseRows(x), nil); err != nil {
			t.Fatal(err)
		}
		// The updates written out, on the engine's pieces.
		data := DenseRows(x)
		u, v, err := Initialize(data, k, InitNNDSVDa, nil)
		if err != nil {
			t.Fatal(err)
		}
		loss := NewFrobenius(data)
		loss.Float32 = true
		loss.setSplit(split)
		e := &Engine{Split: split}
		uNeg, uPos := mat.NewDense(64, k, nil), mat.NewDense(64, k, nil)
		vNeg, vPos := mat.NewDense(600, k, nil), mat.NewDense(600, k, nil)
		for range outer {
			loss.UGradTo(uNeg, uPos, u, v) // XV, U·VᵀV
			for i := range inner {
				if i > 0 {
					gemm.MulTo(uPos, u, &loss.vtv, split != nil)
				}
				e.mulUpdate(u, uNeg, uPos, nil)
			}
			loss.VGradTo(vNeg, vPos, u, v) // XᵀU, V·UᵀU
			for i := range inner {
				if i > 0 {
					gemm.MulTo(vPos, v, &loss.utu, split != nil)
				}
				e.mulUpdate(v, vNeg, vPos, nil)
			}
		}
		if !mat.Equal(u, nm.Basis()) || !mat.Equal(v, nm.Codes()) {
			t.Fatalf("split %v: the engine's inner updates differ from the written-out ones", split != nil)
		}
	}
	e := &Engine{Loss: NewFrobenius(DenseRows(x)), Terms: []Term{&GraphTerm{Weight: 1, S: sparse.Zeros(600, 600)}}, Inner: 2, MaxIter: 1}
	if _, err := e.Run(mat.NewDense(64, k, nil), mat.NewDense(600, k, nil)); err == nil {
		t.Error("Engine.Inner with a term: no error")
	}
}

// TestSearchNMFAccelerated checks the property the search basis's
// schedule relies on: searchBasisIter products with searchBasisInner
// updates each (NMF.Inner) reach the objective of the plain fit of
// searchBasisIter·searchBasisInner updates (within 1%), well below that of
// a plain fit of as many products, on the digits.
func TestSearchNMFAccelerated(t *testing.T) {
	x, _ := datasets.Digits()
	obj := func(u *mat.Dense) float64 {
		// The samples' best non-negative codes on U: what the fit's span
		// leaves of them, independent of the fit's own V.
		p := &Projector{Method: ProjectNNLS, U: u, MaxIter: 200}
		var v mat.Dense
		if err := p.ProjectTo(&v, DenseRows(x)); err != nil {
			t.Fatal(err)
		}
		return NewFrobenius(DenseRows(x)).Value(u, &v)
	}
	fit := func(outer, inner int) float64 {
		nm := &NMF{Common: Common{Rank: 16, MaxIter: outer, Tol: -1, Float32: true}, Inner: inner}
		if err := nm.Fit(DenseRows(x), nil); err != nil {
			t.Fatal(err)
		}
		return obj(nm.Basis())
	}
	plain := fit(searchBasisIter*searchBasisInner, 1)
	acc := fit(searchBasisIter, searchBasisInner)
	short := fit(searchBasisIter, 1)
	t.Logf("objective: plain %d updates %.6g, %d×%d %.6g, plain %d %.6g", searchBasisIter*searchBasisInner, plain, searchBasisIter, searchBasisInner, acc, searchBasisIter, short)
	if acc > 1.01*plain {
		t.Errorf("accelerated fit's objective %g, more than 1%% above the plain fit's %g", acc, plain)
	}
	if short-plain < 2*(acc-plain) {
		t.Errorf("a plain fit of %d products (%g) is as close to %g as the accelerated one (%g): the inner updates add nothing", searchBasisIter, short, plain, acc)
	}
}

// TestNearestKBrute checks the guard's nearest neighbours (their inner
// products through internal/gemm) against a plain sort of every row's
// distances summed plainly (Euclidean and cosine, k from 1 to more than the
// rows): each row's q-th neighbour is at the q-th distance, up to
// rounding; and voteLabeled on a case worked by hand.
func TestNearestKBrute(t *testing.T) {
	x, _ := datasets.Digits()
	x = mat.DenseCopyOf(x.Slice(0, 400, 0, 64))
	n, _ := x.Dims()
	for _, cosine := range []bool{false, true} {
		for _, k := range []int{1, 5, 399, 1000} {
			nn := nearestK(x, cosine, k)
			for i := range n {
				dist := func(j int) float64 {
					a, b := x.RawRowView(i), x.RawRowView(j)
					var d, ab, aa, bb float64
					for c := range a {
						d += (a[c] - b[c]) * (a[c] - b[c])
						ab, aa, bb = ab+a[c]*b[c], aa+a[c]*a[c], bb+b[c]*b[c]
					}
					if cosine {
						return -ab / math.Sqrt(aa*bb)
					}
					return d
				}
				var all []int
				for j := range n {
					if j != i {
						all = append(all, j)
					}
				}
				slices.SortStableFunc(all, func(a, b int) int { return cmp.Compare(dist(a), dist(b)) })
				want := all[:min(k, n-1)]
				if len(nn[i]) != len(want) {
					t.Fatalf("cosine %v, k %d: row %d has %d neighbours, want %d", cosine, k, i, len(nn[i]), len(want))
				}
				for q, j := range nn[i] {
					if got, w := dist(j), dist(want[q]); j == i || math.Abs(got-w) > 1e-9*math.Max(1, math.Abs(w)) {
						t.Fatalf("cosine %v, k %d: row %d's neighbour %d is %d at %g, want %d at %g", cosine, k, i, q, j, got, want[q], w)
					}
				}
			}
		}
	}
	// The vote, worked by hand on the line: points 0, 1 (class 0) and 3,
	// 4, 10 (class 1). With 3 neighbours the majority outvotes the
	// nearest (3's neighbours 4, 1, 0: class 0); with 2 a tie goes to the
	// nearer class (0's neighbours 1 and 3: class 0).
	labels := []int{0, 0, 1, 1, 1}
	pts := mat.NewDense(5, 1, []float64{0, 1, 3, 4, 10})
	if got := voteLabeled(nearestK(pts, false, 3), 3, labels); !slices.Equal(got, []int{1, 1, 0, 0, 1}) {
		t.Errorf("3-NN votes %v, want [1 1 0 0 1]", got)
	}
	if got := voteLabeled(nearestK(pts, false, 3), 2, labels); !slices.Equal(got, []int{0, 0, 1, 1, 1}) {
		t.Errorf("2-NN votes %v, want [0 0 1 1 1] (ties to the nearer class)", got)
	}
}

// TestSearchFitSVD checks SearchFitSVD's basis on the digits (rank 12 of
// 64 features): its columns are orthonormal and the samples' projections
// on their span keep, within 1e-4, the energy (squared Frobenius norm) of
// their projections on the 12 leading right singular vectors gonum's exact
// SVD finds, the most any rank-12 span keeps; it is
// the same bits fitted twice, serially or in parts (a function of the rows
// alone, as SearchBases requires); and a rank above the rows' count is an error.
// ParseSearchFit reads what String writes and refuses other names.
func TestSearchFitSVD(t *testing.T) {
	x, _ := datasets.Digits()
	x = mat.DenseCopyOf(x.Slice(0, 600, 0, 64))
	const k = 12
	o := &Online{SearchBasis: k}
	r, err := o.fitSearchBasisOn(x)
	if err != nil {
		t.Fatal(err)
	}
	if d, c := r.Dims(); d != 64 || c != k {
		t.Fatalf("basis %d×%d, want 64×%d", d, c, k)
	}
	var gram mat.Dense
	gram.Mul(r.T(), r)
	for i := range k {
		for j := range k {
			want := 0.0
			if i == j {
				want = 1
			}
			if math.Abs(gram.At(i, j)-want) > 1e-10 {
				t.Fatalf("the basis's columns are not orthonormal: (RᵀR)[%d][%d] = %g", i, j, gram.At(i, j))
			}
		}
	}
	var svd mat.SVD
	if !svd.Factorize(x, mat.SVDThin) {
		t.Fatal("SVD failed")
	}
	var vt mat.Dense
	svd.VTo(&vt)
	// The energy of the samples' projections on a span: the best rank-k
	// span (the leading singular vectors') keeps the most.
	kept := func(b mat.Matrix) float64 {
		var p mat.Dense
		p.Mul(x, b)
		return mat.Norm(&p, 2) * mat.Norm(&p, 2)
	}
	got, best := kept(r), kept(vt.Slice(0, 64, 0, k))
	if got < (1-1e-4)*best || got > (1+1e-12)*best {
		t.Errorf("the fitted span keeps %.8g of the samples' energy, the %d leading singular vectors' %.8g (want within 1e-4 below it)", got, k, best)
	}
	for _, split := range []func(int, func(int, int)){nil, pipeline.Split(2), splittest.Reverse} {
		again, err := (&Online{SearchBasis: k, Split: split}).fitSearchBasisOn(x)
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(r, again) {
			t.Errorf("split %v: a second fit on the same rows differs", split != nil)
		}
	}
	few := &Online{SearchBasis: 700}
	if _, err := few.fitSearchBasisOn(x); err == nil {
		t.Error("a rank of 700 on 600 rows of 64 features fitted")
	}
	for _, f := range []SearchFit{SearchFitSVD, SearchFitNMF} {
		if got, err := ParseSearchFit(f.String()); err != nil || got != f {
			t.Errorf("ParseSearchFit(%q) = %v, %v; want %v", f.String(), got, err, f)
		}
	}
	if _, err := ParseSearchFit("pca"); err == nil {
		t.Error(`ParseSearchFit("pca") accepted`)
	}
	if _, err := (&Online{SearchBasis: k, SearchFit: 7}).fitSearchBasisOn(x); err == nil {
		t.Error("an unknown SearchFit fitted")
	}
}

// BenchmarkSearchFit times one search basis fit of each SearchFit as the
// stream runs it: rank 40 on the 2,000 newest samples (here the first
// 2,000 MNIST training images), in parts on every core. It reports the
// fitted span's energy gap: 1 − the samples' squared norm kept by their
// projection on it over that kept by the 40 leading right singular vectors
// (gonum's exact SVD), 0 for the best rank-40 span.
func BenchmarkSearchFit(b *testing.B) {
	dir := filepath.Dir(testenv.Data(b, "mnist", "train-images-idx3-ubyte"))
	x, _, err := readMNIST(dir, searchBasisRows)
	if err != nil {
		b.Fatal(err)
	}
	_, d := x.Dims()
	kept := func(r mat.Matrix) float64 {
		var p mat.Dense
		p.Mul(x, r)
		return mat.Norm(&p, 2) * mat.Norm(&p, 2)
	}
	var svd mat.SVD
	if !svd.Factorize(x, mat.SVDThin) {
		b.Fatal("SVD failed")
	}
	var vt mat.Dense
	svd.VTo(&vt)
	best := kept(vt.Slice(0, d, 0, DefaultSearchBasis))
	for _, f := range []SearchFit{SearchFitSVD, SearchFitNMF} {
		b.Run(f.String(), func(b *testing.B) {
			o := &Online{SearchBasis: DefaultSearchBasis, SearchFit: f, Split: pipeline.Split(runtime.GOMAXPROCS(0))}
			var r *mat.Dense
			for b.Loop() {
				if r, err = o.fitSearchBasisOn(x); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(1-kept(r)/best, "energy-gap")
		})
	}
}

// TestJudgedAt checks the judgement points of the span between fits,
// ⌈500·√2^m⌉ = 708, 1,000, 1,415, 2,000, 2,829, 4,000, …, worked by hand.
func TestJudgedAt(t *testing.T) {
	for _, c := range []struct {
		prev, seen int
		want       bool
	}{
		{0, 500, false}, {500, 707, false}, {707, 708, true}, {700, 750, true}, {708, 999, false},
		{999, 1000, true}, {1000, 1414, false}, {1414, 1415, true}, {1900, 2000, true},
		{2000, 2828, false}, {2828, 2829, true}, {3999, 4000, true}, {4000, 5656, false},
		{5656, 5657, true}, {0, 100000, true},
	} {
		if got := judgedAt(c.prev, c.seen); got != c.want {
			t.Errorf("judgedAt(%d, %d) = %v, want %v", c.prev, c.seen, got, c.want)
		}
	}
}

// TestChao1 checks the classes estimate of spanTooNarrow on counts worked
// by hand: three classes named once, 3 + 3·2/2 = 6; two named twice, 2;
// one once and one twice, 2 + 0; four once and one twice, 5 + 4·3/4 = 8;
// none, 0.
func TestChao1(t *testing.T) {
	for _, c := range []struct {
		counts map[int]int
		want   float64
	}{
		{map[int]int{1: 1, 2: 1, 3: 1}, 6},
		{map[int]int{1: 2, 2: 2}, 2},
		{map[int]int{1: 1, 2: 2}, 2},
		{map[int]int{0: 1, 1: 1, 2: 1, 3: 1, 4: 2}, 8},
		{map[int]int{}, 0},
	} {
		if got := chao1(c.counts); got != c.want {
			t.Errorf("chao1(%v) = %v, want %v", c.counts, got, c.want)
		}
	}
}

// TestSpanTooNarrow streams 600 digits at a search basis of rank 6 (64
// features: the rule of 10 features per rank lets the span in) with 60 of
// them labeled, too few for the guard's sign test: labels of five classes
// keep the span, labels of all ten classes (more than its 6 columns) move
// the search back to the pixels.
func TestSpanTooNarrow(t *testing.T) {
	x, y := datasets.Digits()
	_, d := x.Dims()
	stream := func(keep func(class int) bool) *Online {
		o := &Online{Rank: 8, SearchBasis: 6, Graph: graph.KNN{K: 5}}
		labeled := 0
		for lo := 0; lo < 600; lo += 50 {
			ids, err := o.PartialFit(DenseRows(mat.DenseCopyOf(x.Slice(lo, lo+50, 0, d))))
			if err != nil {
				t.Fatal(err)
			}
			for p, id := range ids {
				if c := y[lo+p]; keep(c) && labeled < 60 {
					labeled++
					if err := o.SetLabel(id, c); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		return o
	}
	if got := stream(func(c int) bool { return c < 5 }).KNN().Dim(); got != 6 {
		t.Errorf("60 labels of 5 classes: the graph searches %d dimensions, want the span's 6", got)
	}
	if got := stream(func(int) bool { return true }).KNN().Dim(); got != d {
		t.Errorf("60 labels of 10 classes: the graph searches %d dimensions, want the pixels' %d", got, d)
	}
}

// TestSpanJudgedBetweenFits streams the digits at a search basis of rank 3,
// labeling the samples of classes 0–2 (no more classes than the span's
// columns) from the 450th on: the fit at 500 samples has too few labels
// for the guard, which keeps the span; at the judgement point of 1,000
// samples the labels that arrived since show it losing those classes
// against the pixels, and the search moves back to them before the next
// fit at 2,000.
func TestSpanJudgedBetweenFits(t *testing.T) {
	x, y := datasets.Digits()
	_, d := x.Dims()
	o := &Online{Rank: 8, SearchBasis: 3, Graph: graph.KNN{K: 5}}
	for lo := 0; lo < 1050; lo += 50 {
		ids, err := o.PartialFit(DenseRows(mat.DenseCopyOf(x.Slice(lo, lo+50, 0, d))))
		if err != nil {
			t.Fatal(err)
		}
		if lo+50 == 550 {
			if got := o.KNN().Dim(); got != 3 {
				t.Fatalf("after the fit at 500 samples: the graph searches %d dimensions, want the span's 3", got)
			}
		}
		if lo+50 == 1000 {
			if got := o.KNN().Dim(); got != d {
				t.Errorf("after the judgement at 1,000 samples: the graph searches %d dimensions, want the pixels' %d", got, d)
			}
		}
		for p, id := range ids {
			if i := lo + p; i >= 450 && y[i] <= 2 {
				if err := o.SetLabel(id, y[i]); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// metricStream returns 1,100 samples of 20 features in 20 classes: with
// scaled, each class a non-negative direction of its own near a shared
// one, each sample its class's direction plus a little noise times a
// brightness drawn from e^U(−3, 3), so the cosine finds a sample's class
// and the distance mostly its brightness; otherwise the classes share one
// direction at the brightness levels 1, 2, …, 20, which the cosine cannot
// tell apart.
func metricStream(scaled bool) (*mat.Dense, []int) {
	const n, d, c = 1100, 20, 20
	rng := rand.New(rand.NewPCG(7, 7))
	base := make([]float64, d)
	for j := range base {
		base[j] = rng.Float64()
	}
	dirs := mat.NewDense(c, d, nil)
	for i := range c {
		for j := range d {
			dirs.Set(i, j, base[j]+0.2*rng.Float64())
		}
	}
	x := mat.NewDense(n, d, nil)
	y := make([]int, n)
	for i := range n {
		y[i] = i % c
		dir, scale := y[i], math.Exp(6*rng.Float64()-3)
		if !scaled {
			dir, scale = 0, float64(y[i]+1)
		}
		for j := range d {
			x.Set(i, j, scale*(dirs.At(dir, j)+0.02*rng.Float64()))
		}
	}
	return x, y
}

// TestChooseMetric checks Online.ChooseMetric on metricStream's samples,
// every one labeled: where the cosine finds the classes and the distance
// does not, the graph moves from the Euclidean distance to the cosine at a
// judgement point; where only the distance finds them, from the cosine to
// the distance; without ChooseMetric it keeps the metric it was given. A
// zero sample, which has no direction, is then learned like any other, and
// a model restored from the state keeps the chosen metric.
func TestChooseMetric(t *testing.T) {
	run := func(scaled, choose bool, start graph.Metric) *Online {
		x, y := metricStream(scaled)
		n, d := x.Dims()
		o := &Online{Rank: 8, Graph: graph.KNN{K: 5, Metric: start}, ChooseMetric: choose}
		for lo := 0; lo < n; lo += 50 {
			ids, err := o.PartialFit(DenseRows(mat.DenseCopyOf(x.Slice(lo, lo+50, 0, d))))
			if err != nil {
				t.Fatal(err)
			}
			for p, id := range ids {
				if err := o.SetLabel(id, y[lo+p]); err != nil {
					t.Fatal(err)
				}
			}
		}
		return o
	}
	for _, c := range []struct {
		scaled, choose bool
		start, want    graph.Metric
	}{
		{true, true, graph.Euclidean, graph.Cosine},
		{true, false, graph.Euclidean, graph.Euclidean},
		{false, true, graph.Cosine, graph.Euclidean},
		{false, true, graph.Euclidean, graph.Euclidean},
	} {
		o := run(c.scaled, c.choose, c.start)
		if got := o.KNN().Config().Metric; got != c.want {
			t.Errorf("scaled %v, ChooseMetric %v, from %v: the graph searches by %v, want %v", c.scaled, c.choose, c.start, got, c.want)
		}
		if !c.scaled || !c.choose {
			continue
		}
		if _, err := o.PartialFit(DenseRows(mat.NewDense(1, 20, nil))); err != nil {
			t.Errorf("a zero sample under the cosine: %v", err)
		}
		s, err := o.State(nil)
		if err != nil {
			t.Fatal(err)
		}
		back := &Online{Rank: 8, Graph: graph.KNN{K: 5}, ChooseMetric: true}
		if err := back.Restore(s); err != nil {
			t.Fatal(err)
		}
		if got := back.KNN().Config().Metric; got != graph.Cosine {
			t.Errorf("restored: the graph searches by %v, want the cosine chosen", got)
		}
	}
}

// TestChooseMetricBatch checks ChooseMetric on metricStream's samples:
// from either start, the cosine where it finds the classes and the
// distance does not, and the Euclidean distance where only the distance
// finds them; the start with fewer than 100 labeled samples (the others
// −1); the Euclidean distance on sparse rows.
func TestChooseMetricBatch(t *testing.T) {
	scaled, y := metricStream(true)
	plain, yPlain := metricStream(false)
	few := slices.Clone(y)
	for i := 99; i < len(few); i++ {
		few[i] = -1
	}
	for _, c := range []struct {
		name        string
		x           Data
		labels      []int
		start, want graph.Metric
	}{
		{"classes by direction", DenseRows(scaled), y, graph.Euclidean, graph.Cosine},
		{"classes by direction, from the cosine", DenseRows(scaled), y, graph.Cosine, graph.Cosine},
		{"classes by brightness", DenseRows(plain), yPlain, graph.Cosine, graph.Euclidean},
		{"classes by brightness, from the distance", DenseRows(plain), yPlain, graph.Euclidean, graph.Euclidean},
		{"99 labeled", DenseRows(plain), few, graph.Cosine, graph.Cosine},
		{"99 labeled, from the distance", DenseRows(scaled), few, graph.Euclidean, graph.Euclidean},
		{"sparse rows", SparseRows(sparse.FromDense(scaled)), y, graph.Cosine, graph.Euclidean},
	} {
		if got := ChooseMetric(c.x, c.labels, 0, c.start); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestMethodsSearchByCommonMetric checks that every method with a graph of
// the samples builds it by Common.Metric: on metricStream's samples,
// whose classes only the cosine finds, each method's fit with the cosine
// gives other codes than with the Euclidean distance, and GNMF's codes
// classify the samples better leave-one-out by their nearest code.
func TestMethodsSearchByCommonMetric(t *testing.T) {
	all, ally := metricStream(true)
	var rows []int
	for i, c := range ally {
		if c < 10 && len(rows) < 400 { // ten classes: rank 12 leaves NGE and N²S²L a column
			rows = append(rows, i)
		}
	}
	x := mat.NewDense(len(rows), 20, nil)
	y := make([]int, len(rows))
	for p, i := range rows {
		x.SetRow(p, all.RawRowView(i))
		y[p] = ally[i]
	}
	labels := slices.Clone(y)
	for i := range labels {
		if i%4 != 0 {
			labels[i] = -1
		}
	}
	methods := []struct {
		name string
		make func(Common) Method
	}{
		{"gnmf", func(c Common) Method { return &GNMF{Common: c} }},
		{"dgnmf", func(c Common) Method { return &DGNMF{Common: c} }},
		{"ssknmf", func(c Common) Method { return &SSKNMF{Common: c} }},
		{"n2s2l", func(c Common) Method { return &N2S2L{Common: c} }},
		{"nge", func(c Common) Method { return &NGE{Common: c} }},
		{"ssnmf", func(c Common) Method { return &SSNMF{Common: c} }},
	}
	for _, mm := range methods {
		name := mm.name
		fit := func(metric graph.Metric) *mat.Dense {
			m := mm.make(Common{Rank: 12, MaxIter: 60, Metric: metric})
			if err := m.Fit(DenseRows(x), labels); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return mat.DenseCopyOf(m.Codes())
		}
		euc, cos := fit(graph.Euclidean), fit(graph.Cosine)
		if mat.Equal(euc, cos) {
			t.Errorf("%s: the same codes with the cosine as with the Euclidean distance", name)
		}
		if name != "gnmf" {
			continue
		}
		right := func(v *mat.Dense) int {
			nn := nearestK(v, false, 1)
			var n int
			for i, js := range nn {
				if y[js[0]] == y[i] {
					n++
				}
			}
			return n
		}
		if e, c := right(euc), right(cos); c <= e {
			t.Errorf("gnmf: %d of 400 codes nearest a code of their class with the cosine, %d with the distance; want more", c, e)
		}
	}
}
