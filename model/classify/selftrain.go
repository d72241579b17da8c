package classify

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/vec"
	"github.com/nmfstream/nmfstream/model/metrics"
)

// SelfTraining labels the unlabeled training rows by self-training in the
// rows' space, then classifies new rows by 1-NN against all training rows
// with their given or inferred labels.
//
// Each of Rounds rounds gives every unlabeled row the class of its nearest
// labeled row (labeled so far), ranks the rows of each class by confidence,
// the ratio of the distance to the second-nearest class over the distance
// to the nearest, and keeps the most confident: after round r, a share
// Share·r/Rounds of the unlabeled rows, spread equally over the classes.
// Rows never kept stay unlabeled and do not vote.
//
// On codes from the label-aware methods (digits, K = 40, 10 labels per
// class) this adds 0.5–1 point of held-out accuracy over 1-NN on the
// labeled codes alone, and 1.8 points on MNIST (see model.Auto).
//
// A SelfTraining is not safe for concurrent use.
type SelfTraining struct {
	// Rounds is the number of self-labeling rounds. If zero, it defaults to 5.
	Rounds int
	// Share is the fraction of unlabeled rows labeled after the last round,
	// in (0, 1]. If zero, it defaults to 0.8.
	Share float64
	// ScoreK is the number of nearest labeled rows whose agreement with a
	// prediction gives its score (PredictScoresTo). If zero, it defaults to 5.
	ScoreK int

	labels []int
	nn     NearestNeighbor
	votes  NearestNeighbor
}

// selfTrainBlock is the number of unlabeled rows per distance product.
const selfTrainBlock = 512

// Fit labels x's unlabeled rows (y = −1) and fits the 1-NN classifier on all
// rows that have a label then. It returns an error if no row is labeled,
// if y does not match x, or if x has a non-finite entry.
func (s *SelfTraining) Fit(x mat.Matrix, y []int) error {
	n, _ := x.Dims()
	if len(y) != n {
		return fmt.Errorf("classify: self-training: %d labels for %d rows", len(y), n)
	}
	rounds, share := s.Rounds, s.Share
	if rounds == 0 {
		rounds = 5
	}
	if share == 0 {
		share = 0.8
	}
	if rounds < 0 || share < 0 || share > 1 || math.IsNaN(share) {
		return fmt.Errorf("classify: self-training: invalid rounds %d or share %g", rounds, share)
	}
	xd := mat.DenseCopyOf(x)
	for _, v := range xd.RawMatrix().Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("classify: self-training: non-finite entry in the training rows")
		}
	}
	c := 0
	for i, v := range y {
		if v < -1 {
			return fmt.Errorf("classify: self-training: label %d of row %d is invalid", v, i)
		}
		c = max(c, v+1)
	}
	if c == 0 {
		return ErrNoLabels
	}
	sq := make([]float64, n)
	for i := range sq {
		r := xd.RawRowView(i)
		sq[i] = vec.Dot(r, r)
	}
	out := slices.Clone(y)
	type cand struct {
		i    int
		conf float64
	}
	best := make([]float64, c)
	var g mat.Dense
	for r := 1; r <= rounds; r++ {
		var lab, unl []int
		for i, v := range out {
			if v >= 0 {
				lab = append(lab, i)
			} else {
				unl = append(unl, i)
			}
		}
		if len(unl) == 0 {
			break
		}
		lc := metrics.TakeRows(xd, lab)
		per := make([][]cand, c)
		for lo := 0; lo < len(unl); lo += selfTrainBlock {
			hi := min(lo+selfTrainBlock, len(unl))
			g.Reset()
			g.Mul(metrics.TakeRows(xd, unl[lo:hi]), lc.T())
			for a := lo; a < hi; a++ {
				i := unl[a]
				for cl := range best {
					best[cl] = math.Inf(1)
				}
				for b, j := range lab {
					d := sq[i] + sq[j] - 2*g.At(a-lo, b)
					best[out[j]] = min(best[out[j]], d)
				}
				b1, b2 := 0, -1
				for cl := 1; cl < c; cl++ {
					if best[cl] < best[b1] {
						b1, b2 = cl, b1
					} else if b2 < 0 || best[cl] < best[b2] {
						b2 = cl
					}
				}
				if b2 < 0 {
					b2 = b1
				}
				per[b1] = append(per[b1], cand{i, best[b2] / max(best[b1], 1e-300)})
			}
		}
		take := int(share * float64(r) / float64(rounds) * float64(len(unl)) / float64(c))
		for cl, ps := range per {
			slices.SortStableFunc(ps, func(a, b cand) int { return cmp.Compare(b.conf, a.conf) })
			for _, p := range ps[:min(take, len(ps))] {
				out[p.i] = cl
			}
		}
	}
	s.labels = out
	if err := s.nn.Fit(xd, out); err != nil {
		return err
	}
	labeled := 0
	for _, v := range out {
		if v >= 0 {
			labeled++
		}
	}
	s.votes.K = s.ScoreK
	if s.votes.K == 0 {
		s.votes.K = 5
	}
	s.votes.K = min(s.votes.K, labeled)
	return s.votes.Fit(xd, out)
}

// Labels returns the label of every training row after self-training (−1
// for rows left unlabeled). The slice belongs to s; it is valid until the
// next Fit.
func (s *SelfTraining) Labels() []int {
	if s.labels == nil {
		panic(ErrNotFitted)
	}
	return s.labels
}

// PredictTo stores the predicted class of each row of x into dst and
// returns it. A nil dst is allocated; otherwise it must have one entry per
// row. It panics if s is not fitted.
func (s *SelfTraining) PredictTo(dst []int, x mat.Matrix) []int { return s.nn.PredictTo(dst, x) }

// PredictScoresTo stores the predicted class of each row of x into dst and
// its score into score: the share of the ScoreK nearest labeled rows that
// carry the predicted class, in [0, 1]. Nil slices are allocated. It panics
// if s is not fitted.
func (s *SelfTraining) PredictScoresTo(dst []int, score []float64, x mat.Matrix) ([]int, []float64) {
	dst = s.nn.PredictTo(dst, x)
	r, _ := x.Dims()
	k := s.votes.K
	idx, _ := s.votes.NeighborsTo(nil, nil, x)
	if score == nil {
		score = make([]float64, r)
	} else if len(score) != r {
		panic(mat.ErrShape)
	}
	for i, p := range dst {
		agree := 0
		for _, j := range idx[i*k : (i+1)*k] {
			if j >= 0 && s.votes.labelOf(j) == p {
				agree++
			}
		}
		score[i] = float64(agree) / float64(k)
	}
	return dst, score
}

// labelOf returns the label of the j-th labeled row, in the order that
// NeighborsTo indexes.
func (nn *NearestNeighbor) labelOf(j int) int { return nn.labels[j] }
