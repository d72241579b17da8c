package classify

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/metrics"
)

// Embedding is what a set of codes says of their classes, for users who
// take the codes downstream: how well a 1-NN classifier and a clustering of
// the codes recover the classes.
type Embedding struct {
	// NN1 is the accuracy of 1-NN (Euclidean) in code space: of the query
	// codes against the reference codes (EmbeddingOf), or leave-one-out
	// among the codes (EmbeddingLOO). NaN if there is nothing to score.
	NN1 float64 `json:"code_1nn"`
	// NMI is the normalized mutual information (metrics.NMI) between the
	// classes and k-means clusters of the codes, k the number of classes
	// (the GNMF paper's clustering protocol, one seeded run). NaN with
	// fewer than two classes or samples than classes.
	NMI float64 `json:"code_nmi"`
	// N is the number of codes scored.
	N int `json:"code_n"`
}

// EmbeddingOf scores the query codes q (m×K) with classes y against the
// reference codes ref with classes yr (the labeled training codes): the
// 1-NN accuracy of q against ref, and the NMI of a k-means clustering of q.
// Rows whose class is negative are left out. It costs O(m·n·K) for n
// reference rows, plus k-means on q.
func EmbeddingOf(q *mat.Dense, y []int, ref *mat.Dense, yr []int) Embedding {
	q, y = labeledCodes(q, y)
	ref, yr = labeledCodes(ref, yr)
	e := Embedding{NN1: math.NaN(), NMI: nmiOf(q, y), N: len(y)}
	if len(y) == 0 || len(yr) == 0 {
		return e
	}
	nn := NearestNeighbor{K: 1}
	if err := nn.Fit(ref, yr); err != nil {
		return e
	}
	e.NN1 = metrics.Accuracy(nn.PredictTo(nil, q), y)
	return e
}

// EmbeddingLOO scores the codes v with classes y among themselves: the
// leave-one-out 1-NN accuracy and the NMI of a k-means clustering of v.
// Rows whose class is negative are left out. It costs O(n²·K).
func EmbeddingLOO(v *mat.Dense, y []int) Embedding {
	v, y = labeledCodes(v, y)
	e := Embedding{NN1: math.NaN(), NMI: nmiOf(v, y), N: len(y)}
	if len(y) < 2 {
		return e
	}
	nn := NearestNeighbor{K: 2}
	if err := nn.Fit(v, y); err != nil {
		return e
	}
	idx, _ := nn.NeighborsTo(nil, nil, v)
	right := 0
	for i := range y {
		// The nearest other row: the row itself comes first unless a
		// duplicate ties with it.
		j := idx[2*i]
		if j == i || j < 0 {
			j = idx[2*i+1]
		}
		if j >= 0 && y[j] == y[i] {
			right++
		}
	}
	e.NN1 = float64(right) / float64(len(y))
	return e
}

// labeledCodes returns the rows of v whose class in y is not negative, and
// their classes; v and y themselves if every row is labeled.
func labeledCodes(v *mat.Dense, y []int) (*mat.Dense, []int) {
	var keep []int
	for i, c := range y {
		if c >= 0 {
			keep = append(keep, i)
		}
	}
	if len(keep) == len(y) {
		return v, y
	}
	if len(keep) == 0 {
		return nil, nil
	}
	return metrics.TakeRows(v, keep), metrics.Take(y, keep)
}

// nmiOf returns the NMI between y and a k-means clustering of v into as
// many clusters as y has classes, or NaN if that is not defined.
func nmiOf(v *mat.Dense, y []int) float64 {
	seen := map[int]bool{}
	for _, c := range y {
		seen[c] = true
	}
	if len(seen) < 2 || len(y) <= len(seen) {
		return math.NaN()
	}
	km := KMeans{K: len(seen), NInit: 1, Src: rand.NewPCG(1, 1)}
	if err := km.Fit(v); err != nil {
		return math.NaN()
	}
	return metrics.NMI(km.LabelsTo(nil), y)
}
