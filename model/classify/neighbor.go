package classify

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// NearestNeighbor is the k-nearest-neighbour classifier: a sample gets the
// majority label of its K nearest labeled training rows. The search is exact
// and blocked (one matrix product per tile of rows, see the package
// documentation).
//
// The zero value is a 1-NN classifier with the Euclidean metric. A
// NearestNeighbor is not safe for concurrent use: prediction reuses
// workspace held by the receiver.
type NearestNeighbor struct {
	// K is the number of neighbours that vote. If zero, it defaults to 1.
	// It must not be negative nor exceed the number of labeled samples.
	K int
	// Metric is the dissimilarity, Euclidean (the default) or Cosine.
	Metric Metric

	ix      knnIndex
	labels  []int // label of each reference row
	classes int
	d       int
	fitted  bool

	idx   []int
	dist  []float64
	votes []float64
}

func (nn *NearestNeighbor) k() int {
	if nn.K == 0 {
		return 1
	}
	return nn.K
}

// Fit stores a copy of the labeled rows of x (n×D, one sample per row) and
// their labels y (length n, in [0, C) or −1 for unlabeled, which Fit skips).
// It returns ErrNoLabels if no row is labeled, and an error if K is
// negative or exceeds the number of labeled rows, if len(y) ≠ n, or if x has
// a non-finite entry.
func (nn *NearestNeighbor) Fit(x mat.Matrix, y []int) error {
	nn.fitted = false
	n, d := x.Dims()
	if nn.K < 0 {
		return fmt.Errorf("classify: negative K %d", nn.K)
	}
	classes, labeled, err := checkLabels(n, y)
	if err != nil {
		return err
	}
	if nn.k() > labeled {
		return fmt.Errorf("classify: K = %d exceeds the %d labeled samples", nn.k(), labeled)
	}
	if err := checkFinite(x); err != nil {
		return err
	}
	var ref mat.Dense
	nn.labels = labeledRows(&ref, nn.labels, x, y, labeled)
	nn.ix.reset(&ref, nn.Metric)
	nn.classes, nn.d, nn.fitted = classes, d, true
	return nil
}

// Classes returns C, one more than the largest label seen by Fit.
func (nn *NearestNeighbor) Classes() int { return nn.classes }

// NeighborsTo stores, for each row i of x (m×D), the indices (into the
// labeled training rows, in the order Fit saw them) of its K nearest
// labeled rows in idx[i*K:(i+1)*K] and their distances (Euclidean, or
// cosine distance) in dist, nearest first; ties go to the earlier row. Nil
// slices are allocated; non-nil ones must have length m·K. Rows of x with a
// non-finite entry get index −1 and distance +Inf. It panics if nn is not
// fitted or if x does not have D columns.
func (nn *NearestNeighbor) NeighborsTo(idx []int, dist []float64, x mat.Matrix) ([]int, []float64) {
	nn.mustFit(x)
	m, _ := x.Dims()
	k := nn.k()
	idx = intsTo(idx, m*k)
	dist = floatsTo(dist, m*k)
	nn.ix.search(idx, dist, x, k, false)
	if nn.Metric == Euclidean {
		for i, v := range dist {
			dist[i] = math.Sqrt(v)
		}
	}
	return idx, dist
}

// PredictTo stores the predicted label of each row of x (m×D) in dst and
// returns it. A nil dst is allocated; a non-nil dst must have length m. A
// row with a non-finite entry is predicted −1. It panics if nn is not
// fitted or if x does not have D columns.
func (nn *NearestNeighbor) PredictTo(dst []int, x mat.Matrix) []int {
	dst, _ = nn.PredictScoresTo(dst, nil, x)
	return dst
}

// PredictScoresTo is PredictTo that also stores each prediction's vote
// share in score: the fraction of the K neighbours carrying the predicted
// label, in [1/K, 1] (always 1 when K = 1; use NeighborsTo for distances).
// A tie between labels goes to the one whose nearest member is nearest. A
// row with a non-finite entry gets label −1 and score 0. Nil slices are
// allocated; non-nil ones must have length m.
func (nn *NearestNeighbor) PredictScoresTo(dst []int, score []float64, x mat.Matrix) ([]int, []float64) {
	nn.mustFit(x)
	m, _ := x.Dims()
	dst = intsTo(dst, m)
	score = floatsTo(score, m)
	k := nn.k()
	nn.idx = resizeInts(nn.idx, m*k)
	nn.dist = resizeFloats(nn.dist, m*k)
	nn.ix.search(nn.idx, nn.dist, x, k, false)
	nn.votes = resizeFloats(nn.votes, nn.classes)
	for i := range m {
		nb := nn.idx[i*k : (i+1)*k]
		if nb[0] < 0 {
			dst[i], score[i] = -1, 0
			continue
		}
		if k == 1 {
			dst[i], score[i] = nn.labels[nb[0]], 1
			continue
		}
		clear(nn.votes)
		top := 0.0
		for _, j := range nb {
			c := nn.labels[j]
			nn.votes[c]++
			top = max(top, nn.votes[c])
		}
		// Neighbours come nearest first, so the first label met with the
		// top count is, among tied labels, the one with the nearest member.
		best := -1
		for _, j := range nb {
			if c := nn.labels[j]; nn.votes[c] == top {
				best = c
				break
			}
		}
		dst[i], score[i] = best, nn.votes[best]/float64(k)
	}
	return dst, score
}

func (nn *NearestNeighbor) mustFit(x mat.Matrix) {
	if !nn.fitted {
		panic(ErrNotFitted)
	}
	checkDims(x, nn.d)
}

func resizeInts(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n)
	}
	return s[:n]
}

func resizeFloats(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}
