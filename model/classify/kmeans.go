package classify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// KMeans clusters rows by Lloyd's algorithm from greedy k-means++ seeds
// (Arthur and Vassilvitskii, 2007, with scikit-learn's 2 + ⌊ln K⌋ local
// trials per centre), keeping the best of NInit runs. The objective is the
// inertia Σᵢ ‖xᵢ − c_{label(i)}‖², which no Lloyd iteration increases.
//
// A cluster left empty by an assignment step takes, as its new centre, the
// row farthest from its own centre among clusters with two or more rows
// (scikit-learn's relocation); that row moves to it, so the objective still
// does not increase.
//
// The zero value needs K set. A KMeans is not safe for concurrent use.
type KMeans struct {
	// K is the number of clusters. It must be positive and at most the
	// number of rows.
	K int
	// NInit is the number of k-means++ restarts; the run with the lowest
	// inertia is kept. If zero, it defaults to 10 (scikit-learn's value
	// before version 1.4).
	NInit int
	// MaxIter bounds the Lloyd iterations per run. If zero, it defaults to
	// 300.
	MaxIter int
	// Tol stops a run once the centres move by Σ‖c_t − c_{t−1}‖² ≤
	// Tol·(mean per-feature variance of the data), scikit-learn's relative
	// tolerance. If zero, it defaults to 1e-4.
	Tol float64
	// Src drives the k-means++ draws. If nil, each Fit uses
	// rand.NewPCG(1, 1), so results are reproducible.
	Src rand.Source

	centers mat.Dense
	labels  []int
	inertia float64
	iter    int
	d       int
	fitted  bool

	ix   knnIndex
	idx  []int
	dist []float64
}

func (km *KMeans) params() (nInit, maxIter int, tol float64) {
	nInit, maxIter, tol = km.NInit, km.MaxIter, km.Tol
	if nInit == 0 {
		nInit = 10
	}
	if maxIter == 0 {
		maxIter = 300
	}
	if tol == 0 {
		tol = 1e-4
	}
	return
}

// Fit clusters the rows of x (n×D). It returns an error if K is not in
// [1, n], another parameter is out of range, or x has a non-finite entry.
func (km *KMeans) Fit(x mat.Matrix) error {
	km.fitted = false
	nInit, maxIter, tol := km.params()
	n, d := x.Dims()
	switch {
	case km.K < 1:
		return fmt.Errorf("classify: KMeans K = %d, must be positive", km.K)
	case km.K > n:
		return fmt.Errorf("classify: KMeans K = %d exceeds the %d samples", km.K, n)
	case nInit < 0 || maxIter < 0:
		return fmt.Errorf("classify: negative NInit %d or MaxIter %d", km.NInit, km.MaxIter)
	case !(tol >= 0):
		return fmt.Errorf("classify: negative Tol %v", km.Tol)
	}
	if err := checkFinite(x); err != nil {
		return err
	}
	xd := mat.DenseCopyOf(x)
	src := km.Src
	if src == nil {
		src = rand.NewPCG(1, 1)
	}
	r := rand.New(src)
	tolAbs := tol * meanVariance(xd)

	var cent mat.Dense
	labels := make([]int, n)
	for run := range nInit {
		km.seed(&cent, xd, r)
		inertia, iter := km.lloyd(&cent, labels, xd, maxIter, tolAbs, nil)
		if run == 0 || inertia < km.inertia {
			km.centers.Reset()
			km.centers.CloneFrom(&cent)
			km.labels = append(km.labels[:0], labels...)
			km.inertia, km.iter = inertia, iter
		}
	}
	km.ix.reset(&km.centers, Euclidean)
	km.d, km.fitted = d, true
	return nil
}

func meanVariance(x *mat.Dense) float64 {
	n, d := x.Dims()
	var s float64
	for j := range d {
		var m, q float64
		for i := range n {
			m += x.At(i, j)
		}
		m /= float64(n)
		for i := range n {
			v := x.At(i, j) - m
			q += v * v
		}
		s += q / float64(n)
	}
	return s / float64(d)
}

// seed sets cent (K×D) by greedy k-means++.
func (km *KMeans) seed(cent *mat.Dense, x *mat.Dense, r *rand.Rand) {
	n, d := x.Dims()
	k := km.K
	trials := 2 + int(math.Log(float64(k)))
	cent.Reset()
	cent.ReuseAs(k, d)
	cent.SetRow(0, x.RawRowView(r.IntN(n)))
	closest := make([]float64, n) // squared distance to the nearest chosen centre
	sqDistsTo(closest, x, cent.RawRowView(0))
	cum := make([]float64, n)
	cand := make([]float64, n)
	best := make([]float64, n)
	for c := 1; c < k; c++ {
		var total float64
		for i, v := range closest {
			total += v
			cum[i] = total
		}
		bestPot, bestRow := math.Inf(1), -1
		for range trials {
			var row int
			if total > 0 {
				// The first row with cum > u has closest > 0: a row at an
				// existing centre is never drawn while others are not.
				u := r.Float64() * total
				row = min(sort.Search(n, func(i int) bool { return cum[i] > u }), n-1)
			} else {
				row = r.IntN(n) // every row coincides with a centre
			}
			sqDistsTo(cand, x, x.RawRowView(row))
			var pot float64
			for i, v := range cand {
				pot += min(v, closest[i])
			}
			if pot < bestPot {
				bestPot, bestRow = pot, row
				copy(best, cand)
			}
		}
		cent.SetRow(c, x.RawRowView(bestRow))
		for i, v := range best {
			closest[i] = min(closest[i], v)
		}
	}
}

// sqDistsTo stores ‖xᵢ − c‖² for every row xᵢ of x in dst.
func sqDistsTo(dst []float64, x *mat.Dense, c []float64) {
	n, _ := x.Dims()
	for i := range n {
		var s float64
		for j, v := range x.RawRowView(i) {
			t := v - c[j]
			s += t * t
		}
		dst[i] = s
	}
}

// lloyd runs Lloyd iterations from cent, leaving the final centres in cent
// and the matching assignment in labels. It returns the final inertia and
// the number of iterations. If trace is not nil, it is called with the
// inertia after every assignment step, the last one included.
func (km *KMeans) lloyd(cent *mat.Dense, labels []int, x *mat.Dense, maxIter int, tolAbs float64, trace func(float64)) (float64, int) {
	n, d := x.Dims()
	k := km.K
	sum := mat.NewDense(k, d, nil)
	count := make([]int, k)
	dist := make([]float64, n)
	iter := 0
	for iter < maxIter {
		inertia := km.assign(labels, dist, cent, x)
		if trace != nil {
			trace(inertia)
		}
		iter++
		sum.Zero()
		clear(count)
		for i, c := range labels {
			count[c]++
			row := sum.RawRowView(c)
			for j, v := range x.RawRowView(i) {
				row[j] += v
			}
		}
		relocate(sum, count, labels, dist, x)
		var shift float64
		for c := range k {
			row := cent.RawRowView(c)
			s := sum.RawRowView(c)
			for j := range row {
				v := s[j] / float64(count[c])
				t := v - row[j]
				shift += t * t
				row[j] = v
			}
		}
		if shift <= tolAbs {
			break
		}
	}
	inertia := km.assign(labels, dist, cent, x)
	if trace != nil {
		trace(inertia)
	}
	return inertia, iter
}

// relocate gives every empty cluster the row farthest from its centre
// among clusters with at least two rows, moving that row's contribution
// from its old cluster's sum to the empty one.
func relocate(sum *mat.Dense, count []int, labels []int, dist []float64, x *mat.Dense) {
	for c, m := range count {
		if m > 0 {
			continue
		}
		far := -1
		for i, l := range labels {
			if count[l] >= 2 && (far < 0 || dist[i] > dist[far]) {
				far = i
			}
		}
		if far < 0 {
			continue // unreachable for K ≤ n: some cluster has two rows
		}
		old := labels[far]
		row := x.RawRowView(far)
		so := sum.RawRowView(old)
		for j, v := range row {
			so[j] -= v
		}
		count[old]--
		sum.SetRow(c, row)
		count[c] = 1
		labels[far] = c
		dist[far] = 0
	}
}

// assign sets labels to the nearest centre (ties to the lower index) and
// dist to the squared distances, and returns their sum.
func (km *KMeans) assign(labels []int, dist []float64, cent, x *mat.Dense) float64 {
	km.ix.reset(cent, Euclidean)
	km.ix.search(labels, dist, x, 1, false)
	var s float64
	for _, v := range dist {
		s += v
	}
	return s
}

// Inertia returns the objective Σᵢ ‖xᵢ − c_{label(i)}‖² of the kept run.
func (km *KMeans) Inertia() float64 { return km.inertia }

// Iterations returns the number of Lloyd iterations of the kept run.
func (km *KMeans) Iterations() int { return km.iter }

// CentersTo stores the K×D cluster centres into dst and returns it. An
// empty dst is resized; a non-empty one must be K×D. It panics if km is not
// fitted.
func (km *KMeans) CentersTo(dst *mat.Dense) *mat.Dense {
	if !km.fitted {
		panic(ErrNotFitted)
	}
	if dst == nil {
		dst = &mat.Dense{}
	}
	if dst.IsEmpty() {
		dst.ReuseAs(km.centers.Dims())
	}
	if r, c := dst.Dims(); r != km.K || c != km.d {
		panic(mat.ErrShape)
	}
	dst.Copy(&km.centers)
	return dst
}

// LabelsTo stores the cluster of each row given to Fit in dst and returns
// it. A nil dst is allocated; a non-nil one must have length n. It panics
// if km is not fitted.
func (km *KMeans) LabelsTo(dst []int) []int {
	if !km.fitted {
		panic(ErrNotFitted)
	}
	dst = intsTo(dst, len(km.labels))
	copy(dst, km.labels)
	return dst
}

// PredictTo stores the nearest centre of each row of x (m×D) in dst and
// returns it. A nil dst is allocated; a non-nil one must have length m. A
// row with a non-finite entry gets −1. It panics if km is not fitted or x
// does not have D columns.
func (km *KMeans) PredictTo(dst []int, x mat.Matrix) []int {
	dst, _ = km.PredictScoresTo(dst, nil, x)
	return dst
}

// PredictScoresTo is PredictTo that also stores each row's Euclidean
// distance to its centre in score (+Inf for rows predicted −1).
func (km *KMeans) PredictScoresTo(dst []int, score []float64, x mat.Matrix) ([]int, []float64) {
	if !km.fitted {
		panic(ErrNotFitted)
	}
	checkDims(x, km.d)
	m, _ := x.Dims()
	dst = intsTo(dst, m)
	score = floatsTo(score, m)
	km.ix.search(dst, score, x, 1, false)
	for i, v := range score {
		score[i] = math.Sqrt(v)
	}
	return dst, score
}
