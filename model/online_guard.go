package model

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/gemm"
	"github.com/nmfstream/nmfstream/model/graph"
)

// The search basis's guard (Online.SearchBasis): before the graph moves to
// the span of a new basis, the labeled samples of the window are classified
// leave-one-out among their samples and among their projections on the
// span (the graph's metric), twice each: by their nearest labeled
// neighbour, and by the majority of their k nearest labeled neighbours (k
// the graph's K; a tie goes to the class of the nearest of the tied). The
// span is refused, and the graph searches the samples until the next fit,
// when by either classifier the samples win significantly more of the
// samples on which the two spaces disagree than the span does: a sign test
// on the discordant samples, b − a > spanGuardZ·√(a + b), where b counts
// the samples only the samples' classifier gets right and a those only the
// span's does.
//
// Both classifiers, because the predictions spread the labels over k-NN
// edges and each test misses a span the other catches: on three MNIST
// streams at rank 10, whose principal span, where kept, leaves the stream
// 6.3–6.6 points below the pixels, each test alone missed one stream
// (BENCHMARKS.md, "The guard by the k-NN vote too"). At the default rank
// the span wins or ties by both on eight MNIST streams.
//
// The guard is for image data the rule of searchBasisMinRatio was not
// measured on: on the MNIST streams the two spaces differ by less than the
// test can see at the labels a window holds, or the span wins, so it keeps
// the span there, and it moves the search back to the samples where the
// span loses the classes (TestSearchBasisGuard).
const (
	// spanGuardLabels bounds the labeled samples compared: the newest ones.
	// 1,000 samples of D = 784 take two Gram matrices of 10⁶ entries and
	// about 0.8 GFLOP, once per fit of the basis.
	spanGuardLabels = 1000
	// spanGuardMinLabels is the fewest labeled samples the guard judges
	// on; with fewer it keeps the span. At the first fit of the MNIST
	// streams (500 samples, 31–43 labeled) it refused the span once in five
	// streams by chance, costing 0.1 point (BENCHMARKS.md).
	spanGuardMinLabels = 100
	// spanGuardZ is the sign test's threshold in standard deviations.
	spanGuardZ = 2
	// metricGuardLabels bounds the labeled samples metricLoses compares:
	// the newest ones. Its one Gram matrix of 500 samples of D = 784 takes
	// 0.4 GFLOP; the test is for a metric that wins by far, which 500
	// samples show.
	metricGuardLabels = 500
	// metricGuardZ is metricLoses's threshold in standard deviations,
	// stricter than the span's, so that a metric within a point of the
	// other (MNIST) keeps its graph (BENCHMARKS.md, "Sets from the GNMF
	// papers").
	metricGuardZ = 3
)

// spanLoses reports whether the span of r (D×K, orthonormal columns) is too
// narrow for the labeled classes (spanTooNarrow(K)) or loses the labeled
// samples' leave-one-out nearest neighbour or k-NN vote against their
// samples, by the sign test above. With fewer than spanGuardMinLabels
// labeled samples the sign test abstains.
func (o *Online) spanLoses(r *mat.Dense) bool {
	if _, k := r.Dims(); o.spanTooNarrow(k) {
		return true
	}
	x, labels := o.guardRows(spanGuardLabels)
	if x == nil {
		return false
	}
	var proj mat.Dense
	gemm.MulTo(&proj, x, r, false)
	cosine := o.graphConfig().Metric == graph.Cosine
	k := o.guardK()
	return spanLosesOn(x, &proj, labels, cosine, k)
}

// guardRows returns the newest labeled samples of the window, at most most
// of them (rows), and their labels, or nil with fewer than
// spanGuardMinLabels of them.
func (o *Online) guardRows(most int) (*mat.Dense, []int) {
	var ids []int
	order := o.g.Order()
	for i := len(order) - 1; i >= 0 && len(ids) < most; i-- {
		if o.g.Label(order[i]) >= 0 {
			ids = append(ids, order[i])
		}
	}
	if len(ids) < spanGuardMinLabels {
		return nil, nil
	}
	x := mat.NewDense(len(ids), o.dim, nil)
	labels := make([]int, len(ids))
	for p, id := range ids {
		copy(x.RawRowView(p), o.xd.RawRowView(id))
		labels[p] = o.g.Label(id)
	}
	return x, labels
}

// guardK is the k of the guards' k-NN vote: the graph's K.
func (o *Online) guardK() int {
	if k := o.Graph.K; k > 0 {
		return k
	}
	return 5 // graph.KNN's default
}

// metricLoses reports whether the graph's metric loses the window's
// labeled samples against the other one (Euclidean distance against
// cosine) in the graph's search space (the samples, or their projections
// on the search basis in use): by the sign test of spanLoses at
// metricGuardZ, with both the nearest labeled neighbour and the k-NN vote,
// so that the metric moves only where the labels show it by both. With
// fewer than spanGuardMinLabels labeled samples it reports false. On 68 people's
// faces under varying light (PIE), where light scales a face and the
// cosine ignores it, the cosine searched the stream 17.7 points above the
// Euclidean distance; on the digits, MNIST and Fashion-MNIST the two are
// within half a point and the test keeps the Euclidean distance
// (BENCHMARKS.md, "Sets from the GNMF papers").
func (o *Online) metricLoses() bool {
	x, labels := o.guardRows(metricGuardLabels)
	if x == nil {
		return false
	}
	if o.r != nil {
		var proj mat.Dense
		gemm.MulTo(&proj, x, o.r, false)
		x = &proj
	}
	return metricLosesOn(x, labels, o.graphConfig().Metric == graph.Cosine, o.guardK())
}

// metricLosesOn is metricLoses's test on the labeled samples x (n×D, n ≥
// 2) and their labels: whether the metric cosine says (the cosine, or the
// Euclidean distance) loses against the other one by the nearest labeled
// neighbour and by the vote of k neighbours.
func metricLosesOn(x *mat.Dense, labels []int, cosine bool, k int) bool {
	gram := gramOf(x)
	now, other := nearestKGram(gram, cosine, k), nearestKGram(gram, !cosine, k)
	for _, kk := range []int{1, k} {
		a, b := discordant(voteLabeled(now, kk, labels), voteLabeled(other, kk, labels), labels)
		if !(float64(b-a) > metricGuardZ*math.Sqrt(float64(a+b))) {
			return false
		}
	}
	return true
}

// discordant counts the samples that only the first votes classify right
// (a) and those only the second do (b).
func discordant(first, second, labels []int) (a, b int) {
	for p, want := range labels {
		ok1, ok2 := first[p] == want, second[p] == want
		switch {
		case ok1 && !ok2:
			a++
		case ok2 && !ok1:
			b++
		}
	}
	return a, b
}

// spanTooNarrow reports whether the classes of the window's labeled
// samples outnumber k, the columns of a search basis. The means of C
// classes span up to C dimensions, so a span of rank k < C cannot keep
// every class's mean apart from the others' directions, and a principal
// span keeps the directions of largest variance, which need not be those:
// on 68 people's faces under varying light (PIE) the rank-40 span searched
// the stream 4.9 points below the pixels (BENCHMARKS.md, "Sets from the
// GNMF papers"). The classes are counted as the labels so far let one
// estimate them, not only those named yet: with C_obs classes named, f₁ of
// them once and f₂ twice, the bias-corrected Chao1 estimate C_obs +
// f₁(f₁−1)/(2(f₂+1)) (Chao 1984; Chiu et al. 2014), so that about 40
// labels at a first fit that name some 30 of 68 people, most of them once,
// count for more than 40, where ten classes named several times each count
// for ten. It costs one pass over the window's labels.
func (o *Online) spanTooNarrow(k int) bool {
	counts := make(map[int]int)
	for _, id := range o.g.Order() {
		if c := o.g.Label(id); c >= 0 {
			counts[c]++
		}
	}
	return chao1(counts) > float64(k)
}

// chao1 returns the bias-corrected Chao1 estimate of the number of classes
// from counts (labels per class named): C_obs + f₁(f₁−1)/(2(f₂+1)), with
// f₁ and f₂ the classes named once and twice.
func chao1(counts map[int]int) float64 {
	var f1, f2 float64
	for _, n := range counts {
		switch n {
		case 1:
			f1++
		case 2:
			f2++
		}
	}
	return float64(len(counts)) + f1*(f1-1)/(2*(f2+1))
}

// spanLosesOn is spanLoses's test on the labeled samples x (n×D), their
// projections proj (n×K) and their labels, by the metric cosine says and
// the vote of k neighbours.
func spanLosesOn(x, proj *mat.Dense, labels []int, cosine bool, k int) bool {
	rawNN, spanNN := nearestK(x, cosine, k), nearestK(proj, cosine, k)
	for _, kk := range []int{1, k} {
		// a: right only in the span; b: right only among the samples.
		a, b := discordant(voteLabeled(spanNN, kk, labels), voteLabeled(rawNN, kk, labels), labels)
		if float64(b-a) > spanGuardZ*math.Sqrt(float64(a+b)) {
			return true
		}
	}
	return false
}

// voteLabeled returns, for each row i of nn (its neighbours, nearest
// first: nearestK), the class the majority of its first k neighbours hold
// (labels by row); a tie goes to the class of the nearest of the tied.
func voteLabeled(nn [][]int, k int, labels []int) []int {
	out := make([]int, len(nn))
	votes := map[int]int{}
	for i, js := range nn {
		js = js[:min(k, len(js))]
		clear(votes)
		best, bv := -1, 0
		for _, j := range js {
			votes[labels[j]]++
		}
		for _, j := range js { // nearest first: ties to the nearer class
			if c := labels[j]; votes[c] > bv {
				best, bv = c, votes[c]
			}
		}
		out[i] = best
	}
	return out
}

// nearestK returns, for each row of x (n×d, n ≥ 2), its min(k, n−1)
// nearest other rows, nearest first, by the Euclidean distance or, with
// cosine, by the cosine of the two rows (a zero row is nearest to nothing
// in particular: its cosines are zero); ties go to the lower index.
func nearestK(x *mat.Dense, cosine bool, k int) [][]int {
	return nearestKGram(gramOf(x), cosine, k)
}

// gramOf returns x·xᵀ.
func gramOf(x *mat.Dense) *mat.Dense {
	n, _ := x.Dims()
	gram := mat.NewDense(n, n, nil)
	var ws gemm.ABTWorkspace
	gemm.ABT(gram.RawMatrix(), x.RawMatrix(), x.RawMatrix(), &ws, false)
	return gram
}

// nearestKGram is nearestK from the rows' Gram matrix x·xᵀ (n×n).
func nearestKGram(gram *mat.Dense, cosine bool, k int) [][]int {
	n, _ := gram.Dims()
	k = min(k, n-1)
	sq := make([]float64, n)
	for i := range n {
		sq[i] = gram.At(i, i)
	}
	out := make([][]int, n)
	dist := make([]float64, k) // the kept rows' distances, ascending
	for i := range n {
		row := gram.RawRowView(i)
		js := make([]int, 0, k)
		dist = dist[:0]
		for j, g := range row {
			if j == i {
				continue
			}
			var d float64
			if cosine {
				if den := math.Sqrt(sq[i] * sq[j]); den > 0 {
					d = -g / den
				}
			} else {
				d = sq[i] + sq[j] - 2*g
			}
			if len(js) == k && d >= dist[k-1] {
				continue // j comes after every kept row: not nearer, higher index
			}
			// Insert j after every kept row at most as far (ties: lower index first).
			q := len(js)
			for q > 0 && dist[q-1] > d {
				q--
			}
			if len(js) < k {
				js, dist = append(js, 0), append(dist, 0)
			}
			copy(js[q+1:], js[q:len(js)-1])
			copy(dist[q+1:], dist[q:len(dist)-1])
			js[q], dist[q] = j, d
		}
		out[i] = js
	}
	return out
}
