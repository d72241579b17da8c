package classify

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// NearestCentroid assigns a sample the label of the nearest class mean
// (centroid) of the labeled training rows, like scikit-learn's
// NearestCentroid without shrinkage.
//
// The zero value uses the Euclidean metric. A NearestCentroid is not safe
// for concurrent use.
type NearestCentroid struct {
	// Metric is the dissimilarity between a sample and a centroid,
	// Euclidean (the default) or Cosine. Centroids are plain means either way.
	Metric Metric

	ix      knnIndex // over the centroids of the present classes
	present []int    // label of each centroid row
	classes int
	d       int
	fitted  bool

	idx  []int
	dist []float64
}

// Fit computes the mean of the labeled rows of x (n×D) for each label in y
// (length n, in [0, C) or −1 for unlabeled, which Fit skips). Labels in
// [0, C) that never occur get no centroid and are never predicted. It
// returns ErrNoLabels if no row is labeled, and an error if len(y) ≠ n or x
// has a non-finite entry.
func (nc *NearestCentroid) Fit(x mat.Matrix, y []int) error {
	nc.fitted = false
	n, d := x.Dims()
	classes, _, err := checkLabels(n, y)
	if err != nil {
		return err
	}
	if err := checkFinite(x); err != nil {
		return err
	}
	sum := mat.NewDense(classes, d, nil)
	count := make([]float64, classes)
	for i, c := range y {
		if c < 0 {
			continue
		}
		count[c]++
		row := sum.RawRowView(c)
		for j := range row {
			row[j] += x.At(i, j)
		}
	}
	nc.present = nc.present[:0]
	for c, m := range count {
		if m > 0 {
			nc.present = append(nc.present, c)
		}
	}
	cent := mat.NewDense(len(nc.present), d, nil)
	for r, c := range nc.present {
		row := cent.RawRowView(r)
		copy(row, sum.RawRowView(c))
		for j := range row {
			row[j] /= count[c]
		}
	}
	nc.ix.reset(cent, nc.Metric)
	nc.classes, nc.d, nc.fitted = classes, d, true
	return nil
}

// Classes returns C, one more than the largest label seen by Fit.
func (nc *NearestCentroid) Classes() int { return nc.classes }

// CentroidsTo stores the C×D class means into dst and returns it. Rows of
// classes without labeled samples are zero; for Cosine the rows are scaled
// to unit length. An empty dst is resized; a non-empty one must be C×D. It
// panics if nc is not fitted.
func (nc *NearestCentroid) CentroidsTo(dst *mat.Dense) *mat.Dense {
	if !nc.fitted {
		panic(ErrNotFitted)
	}
	if dst == nil {
		dst = &mat.Dense{}
	}
	if dst.IsEmpty() {
		dst.ReuseAs(nc.classes, nc.d)
	} else if r, c := dst.Dims(); r != nc.classes || c != nc.d {
		panic(mat.ErrShape)
	}
	dst.Zero()
	for r, c := range nc.present {
		copy(dst.RawRowView(c), nc.ix.ref.RawRowView(r))
	}
	return dst
}

// PredictTo stores the label of the nearest centroid of each row of x (m×D)
// in dst and returns it. A nil dst is allocated; a non-nil dst must have
// length m. A row with a non-finite entry is predicted −1. It panics if nc
// is not fitted or x does not have D columns.
func (nc *NearestCentroid) PredictTo(dst []int, x mat.Matrix) []int {
	dst, _ = nc.PredictScoresTo(dst, nil, x)
	return dst
}

// PredictScoresTo is PredictTo that also stores in score the distance from
// each row to its nearest centroid (Euclidean, or cosine distance); lower
// is closer. A row with a non-finite entry gets label −1 and score +Inf.
func (nc *NearestCentroid) PredictScoresTo(dst []int, score []float64, x mat.Matrix) ([]int, []float64) {
	if !nc.fitted {
		panic(ErrNotFitted)
	}
	checkDims(x, nc.d)
	m, _ := x.Dims()
	dst = intsTo(dst, m)
	score = floatsTo(score, m)
	nc.idx = resizeInts(nc.idx, m)
	nc.dist = resizeFloats(nc.dist, m)
	nc.ix.search(nc.idx, nc.dist, x, 1, false)
	for i, j := range nc.idx {
		if j < 0 {
			dst[i], score[i] = -1, math.Inf(1)
			continue
		}
		dst[i] = nc.present[j]
		score[i] = nc.dist[i]
		if nc.Metric == Euclidean {
			score[i] = math.Sqrt(score[i])
		}
	}
	return dst, score
}
