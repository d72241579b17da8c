package classify

import (
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/vec"
)

// Joint classifies samples from their features and their codes together.
// Fit labels the unlabeled training samples by kernel self-training
// (KernelSelfTraining) in the joint space [x/s_x, w·v/s_v], where s_x and
// s_v are the mean row norms of the training features and codes (so each
// block weighs about the same) and w is CodeWeight; it then fits a
// Gaussian kernel least-squares classifier (KernelRidge) on the features of
// the self-labeled samples (and their codes, weighted by FinalCodeWeight).
// Unless JointOnly is set, Fit also self-trains on the features alone and
// fits a second such classifier on those labels, and PredictTo averages
// the two classifiers' outputs (the pair). With Vote it self-trains by
// 1-NN in code space (SelfTraining) and predicts by a K-NN vote in the
// joint space instead.
//
// The pair is there because the codes do not help every image set alike
// (BENCHMARKS.md, "The joint classifier's pair"): in the joint space they
// label MNIST's pool better than the pixels alone do, and Fashion-MNIST's
// worse. The features' own self-training keeps half the vote, so where
// the codes mislabel the pool the pixels' labels hold the prediction
// back, and where the two agree nothing changes.
//
// It is the classifier of "nmfstream classify" for dense features; its
// defaults were chosen on docs/DESIGN.md §7's digits protocol (BENCHMARKS.md,
// "Joint classifier").
//
// Features are rows (n×D), codes are rows (n×K, one per feature row); the
// features of sparse data must be densified by the caller, so use it for
// dense data of moderate dimension. Fit costs Rounds + 1 kernel fits for
// each self-training (12 with the pair at the defaults), each O(n·m²) for
// n training samples and m = min(n, MaxRows) centres.
// A Joint is not safe for concurrent use.
type Joint struct {
	// CodeWeight is w, the weight of the codes against the features after
	// both are scaled to unit mean row norm, in self-training (and in the
	// K-NN vote with Vote). If zero, it defaults to 1. A negative value
	// leaves the codes out of the kernel self-training (the features
	// alone: the ablation of the codes); with Vote it is an error.
	CodeWeight float64
	// FinalCodeWeight is the weight of the codes in the final kernel
	// classifier, as CodeWeight. If zero, the codes are left out: the
	// classifier sees the features only. It must not be negative.
	FinalCodeWeight float64
	// Rounds and Share configure the self-training (see
	// KernelSelfTraining, or SelfTraining with Vote). If zero, they default
	// to 5 and 1 (with Vote: 5 and 0.8).
	Rounds int
	Share  float64
	// Gamma and Lambda are the kernel width and ridge of the kernel
	// classifiers (KernelRidge), for rows scaled as above. If zero, they
	// default to 2 and 0.01.
	Gamma, Lambda float64
	// MaxRows bounds the kernel centres m (KernelRidge). If zero, it
	// defaults to 3000. Fit costs O(n·m²) time: lower it for speed, at
	// some cost in accuracy (BENCHMARKS.md, "Joint classifier").
	MaxRows int

	// Vote selects 1-NN self-training in code space, then a vote of the K
	// nearest training samples in the joint space, instead of the kernel
	// classifiers.
	Vote bool
	// K is the number of neighbours that vote with Vote. If zero, it
	// defaults to 5.
	K int
	// JointOnly leaves out the pair's second half, the self-training on
	// the features alone: the final classifier learns the joint
	// self-training's labels only (the rule before the pair, for the
	// ablation). Without codes in the self-training (CodeWeight < 0) there
	// is one self-training either way, and with Vote the pair is not used.
	JointOnly bool
	// Progress, if set, is called after each kernel fit of Fit with the
	// number of fits done and the number Fit makes at most (Rounds + 1
	// for each self-training: 12 with the pair at the defaults), for a
	// progress report. Vote makes none. With Split the calls may come
	// from the goroutines it starts, one at a time, done rising by one
	// each call.
	Progress func(done, total int)
	// Split, if set, runs parts of Fit at once, as model.Online.Split
	// does (pipeline.Split provides one): Fit gives it the pair's two
	// self-trainings, which share nothing they write (their Progress
	// calls are serialized), and each kernel classifier the parts of its
	// products (KernelRidge.Split). Side by side the pair holds up to
	// twice one member's peak memory (BENCHMARKS.md, "The joint
	// classifier's pair"). The fits are the same either way. If nil, Fit
	// runs everything one after the other; this package starts no
	// goroutines (ARCHITECTURE.md, "Goroutines and I/O").
	Split func(n int, body func(lo, hi int))

	sx, sv float64
	labels []int
	nn     NearestNeighbor
	kr     KernelRidge
	// featKR is the pair's second classifier, fitted on the features'
	// own self-labels; pair reports that it was fitted.
	featKR KernelRidge
	pair   bool
}

// Fit self-labels the training samples from their features x (n×D), codes
// (n×K) and labels (n, −1 = unlabeled), and fits the final classifier. It
// returns ErrNoLabels when no sample is labeled, and an error for rows
// that do not match or a negative weight. Fit keeps no reference to its
// arguments.
func (j *Joint) Fit(x, codes *mat.Dense, labels []int) error {
	j.labels = nil
	n, _ := x.Dims()
	if r, _ := codes.Dims(); r != n {
		return fmt.Errorf("classify: joint classifier: %d codes for %d samples", r, n)
	}
	if j.FinalCodeWeight < 0 || (j.Vote && j.CodeWeight < 0) {
		return fmt.Errorf("classify: joint classifier: negative FinalCodeWeight %g, or negative CodeWeight %g with Vote", j.FinalCodeWeight, j.CodeWeight)
	}
	j.sx, j.sv = meanRowNorm(x), meanRowNorm(codes)
	w := orDefault(j.CodeWeight, 1)
	if j.Vote {
		st := SelfTraining{Rounds: j.Rounds, Share: j.Share}
		if err := st.Fit(codes, labels); err != nil {
			return fmt.Errorf("classify: joint classifier: %w", err)
		}
		j.nn = NearestNeighbor{K: orDefaultInt(j.K, 5)}
		if err := j.nn.Fit(j.joint(x, codes, w), st.Labels()); err != nil {
			return fmt.Errorf("classify: joint classifier: %w", err)
		}
		j.labels = append(j.labels[:0:0], st.Labels()...)
		return nil
	}
	kr := KernelRidge{Gamma: orDefault(j.Gamma, 2), Lambda: orDefault(j.Lambda, 0.01), MaxRows: j.MaxRows, Split: j.Split}
	j.pair = w >= 0 && !j.JointOnly
	members := 1
	if j.pair {
		members = 2
	}
	total := members * ((&KernelSelfTraining{Rounds: j.Rounds}).rounds() + 1)
	var (
		mu   sync.Mutex
		done int
	)
	report := func() {
		mu.Lock()
		defer mu.Unlock()
		done++
		if j.Progress != nil {
			j.Progress(done, total)
		}
	}
	var (
		self         []int
		err, featErr error
	)
	fits := []func(){func() { self, err = j.selfTrain(&j.kr, kr, x, codes, labels, w, report) }}
	if j.pair {
		fits = append(fits, func() { _, featErr = j.selfTrain(&j.featKR, kr, x, codes, labels, -1, report) })
	}
	run := func(lo, hi int) {
		for _, f := range fits[lo:hi] {
			f()
		}
	}
	if j.Split != nil {
		j.Split(len(fits), run)
	} else {
		run(0, len(fits))
	}
	if err == nil {
		err = featErr
	}
	if err != nil {
		return err
	}
	j.labels = append(j.labels[:0:0], self...)
	return nil
}

// selfTrain runs the kernel self-training on the rows selfTrainingRows
// gives for weight w, fits dst (a copy of kr) on the final rows with its
// labels, and returns them. It calls report after each kernel fit. It
// reads j's settings and scales and writes only dst, so the pair's two
// members may run at once.
func (j *Joint) selfTrain(dst *KernelRidge, kr KernelRidge, x, codes *mat.Dense, labels []int, w float64, report func()) ([]int, error) {
	st := KernelSelfTraining{Rounds: j.Rounds, Share: j.Share, Kernel: kr, LabelsOnly: true}
	st.Progress = func(int, int) { report() }
	if err := st.Fit(j.selfTrainingRows(x, codes, w), labels); err != nil {
		return nil, fmt.Errorf("classify: joint classifier: %w", err)
	}
	*dst = kr
	if err := dst.Fit(j.final(x, codes), st.Labels()); err != nil {
		return nil, fmt.Errorf("classify: joint classifier: %w", err)
	}
	report()
	return st.Labels(), nil
}

// selfTrainingRows returns the rows of the kernel self-training: the joint
// rows, or the scaled features alone if w is negative.
func (j *Joint) selfTrainingRows(x, v *mat.Dense, w float64) *mat.Dense {
	if w >= 0 {
		return j.joint(x, v, w)
	}
	n, d := x.Dims()
	out := mat.NewDense(n, d, nil)
	out.Scale(1/j.sx, x)
	return out
}

// final returns the rows the final kernel classifier sees: the features,
// or the joint rows if FinalCodeWeight is set.
func (j *Joint) final(x, v *mat.Dense) *mat.Dense {
	if j.FinalCodeWeight == 0 {
		return x
	}
	return j.joint(x, v, j.FinalCodeWeight)
}

// Labels returns the label of every training sample after the joint
// self-training (−1 for those left unlabeled; with CodeWeight < 0, the
// features' self-training). The slice belongs to j and is valid until
// the next Fit.
func (j *Joint) Labels() []int { return j.labels }

// PredictTo stores the predicted class of each sample of x, whose codes
// (on the same basis as the training codes) are given, into dst and returns
// it. A nil dst is allocated. It panics if j is not fitted or the shapes do
// not match the training data.
func (j *Joint) PredictTo(dst []int, x, codes *mat.Dense) []int {
	dst, _ = j.PredictScoresTo(dst, nil, x, codes)
	return dst
}

// PredictScoresTo is PredictTo that also stores a score per sample in
// score: the kernel classifier's output for the predicted class (about 1
// for a sample like the training samples of that class, near 0 far from
// all; with the pair, the mean of the two classifiers'), or with Vote the
// share of the K neighbours that carry the predicted class. Nil slices
// are allocated.
func (j *Joint) PredictScoresTo(dst []int, score []float64, x, codes *mat.Dense) ([]int, []float64) {
	if j.labels == nil {
		panic(ErrNotFitted)
	}
	if j.Vote {
		return j.nn.PredictScoresTo(dst, score, j.joint(x, codes, orDefault(j.CodeWeight, 1)))
	}
	if !j.pair {
		return j.kr.PredictScoresTo(dst, score, j.final(x, codes))
	}
	rows := j.final(x, codes)
	var f, g mat.Dense
	j.kr.DecisionTo(&f, rows)
	j.featKR.DecisionTo(&g, rows)
	f.Add(&f, &g)
	f.Scale(0.5, &f)
	r, _ := f.Dims()
	dst, score = intsTo(dst, r), floatsTo(score, r)
	pickMax(dst, score, &f)
	return dst, score
}

// joint returns the rows [x/s_x, w·v/s_v].
func (j *Joint) joint(x, v *mat.Dense, w float64) *mat.Dense {
	n, d := x.Dims()
	vn, k := v.Dims()
	if vn != n {
		panic(mat.ErrShape)
	}
	a := 1 / j.sx
	b := w / j.sv
	out := mat.NewDense(n, d+k, nil)
	for i := 0; i < n; i++ {
		row := out.RawRowView(i)
		for c, x := range x.RawRowView(i) {
			row[c] = a * x
		}
		for c, x := range v.RawRowView(i) {
			row[d+c] = b * x
		}
	}
	return out
}

// meanRowNorm returns the mean Euclidean norm of a's rows, or 1 if it is
// zero (so that scaling by its inverse stays finite).
func meanRowNorm(a *mat.Dense) float64 {
	r, _ := a.Dims()
	var s float64
	for i := 0; i < r; i++ {
		row := a.RawRowView(i)
		s += math.Sqrt(vec.Dot(row, row))
	}
	if s == 0 || r == 0 {
		return 1
	}
	return s / float64(r)
}

// orDefault returns v, or def if v is zero.

func orDefault(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}

// orDefaultInt returns v, or def if v is zero.
func orDefaultInt(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
