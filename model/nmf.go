package model

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime/trace"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/graph"
)

// Method is a factorization algorithm: it fits X ≈ UVᵀ to data, using the
// labels it can. Labels hold one class in [0, C) per sample, or -1 for an
// unlabeled sample; unsupervised methods accept nil.
//
// Fit returns an error wrapping ErrDiverged (a *DivergedError naming the
// method) if the objective becomes NaN or infinite or runs away to −∞, and
// the method is then not fitted: nothing non-finite is ever returned.
// After a successful Fit, Basis returns U (D×K) and Codes returns V (N×K).
// Both are owned by the method and valid until the next Fit: copy what you
// keep past it.
type Method interface {
	Fit(x Data, labels []int) error
	Basis() *mat.Dense
	Codes() *mat.Dense
}

// fitted holds the state common to all methods.
type fitted struct {
	u, v mat.Dense
	res  Result
	ok   bool
}

// Basis returns U (D×K). It panics with ErrNotFitted before a successful Fit.
func (f *fitted) Basis() *mat.Dense {
	if !f.ok {
		panic(ErrNotFitted)
	}
	return &f.u
}

// Codes returns V (N×K), one row per training sample. It panics with
// ErrNotFitted before a successful Fit.
func (f *fitted) Codes() *mat.Dense {
	if !f.ok {
		panic(ErrNotFitted)
	}
	return &f.v
}

// Result returns the summary of the last Fit.
func (f *fitted) Result() Result { return f.res }

// Common holds the settings shared by every factorization method.
type Common struct {
	// Rank is K, the number of latent factors. It must be in [1, min(D, N)].
	Rank int
	// MaxIter bounds the multiplicative updates. If zero, it defaults to 200.
	MaxIter int
	// Tol stops the updates when the relative objective change falls below
	// it. If zero, it defaults to 1e-5; negative disables the test.
	Tol float64
	// Init chooses the initialization. The zero value is InitNNDSVDa.
	Init Init
	// Src drives initialization. If nil, a fixed seed is used, so that
	// results are reproducible bit for bit.
	Src rand.Source
	// Callback, if non-nil, receives the statistics of every iteration;
	// returning false stops the fit.
	Callback func(Stats) bool
	// Split, if set, runs the parts of each iteration at once (see
	// Engine.Split; pipeline.Share provides one).
	Split func(n int, body func(lo, hi int))
	// Loss chooses the reconstruction loss: LossFrobenius (the zero
	// value), ‖X − UVᵀ‖²_F, or LossKL, the generalized KL divergence
	// D(X‖UVᵀ) (see KL for the scale of the graph weights with it). NMF,
	// GNMF, DGNMF, SSKNMF and N2S2L read it; NGE, whose row solve is
	// written for the Frobenius loss, returns an error for LossKL, and
	// DPCA and the kernel methods do not read it.
	Loss LossKind
	// Float32 runs the Frobenius loss's products with dense data in
	// float32 (Frobenius.Float32): about twice the speed on the kernels,
	// X's float32 copies in memory beside it, objectives and accuracies
	// unchanged within rounding (TestFloat32Fit). The k-NN search runs in
	// float32 either way. Other losses ignore it.
	Float32 bool
	// Metric is the distance of the method's k-NN graphs on the samples,
	// the label graphs included: graph.Euclidean (the zero value) or
	// graph.Cosine (ChooseMetric picks one from the labels). NMF and DPCA
	// build no graph, and the kernel methods search their kernel space;
	// they do not read it. GNMF searches by the cosine where either its
	// Graph.Metric or Metric says so.
	Metric graph.Metric

	// width, if positive, is the width of the X whose used columns the
	// fit's x holds (the others zero): initialization takes the mean
	// entry over it (initialize). Online's first fit on sparse rows sets it.
	width int
	// phantom, if positive, says that x's last column, zero, stands for
	// that many zero columns of the wider X (Online's first fit of SSKNMF
	// and N²S²L, whose U parts keep those rows alive): U's last row starts
	// at √phantom times the fill their rows start at. Their rows stay
	// equal, every update is row by row and homogeneous of degree one in
	// a row, and U enters every sum over its rows squared (UᵀU, the
	// column norms), so the row carries the phantom rows' weight: the fit
	// is the wider one's, up to rounding, with that row √phantom times
	// theirs.
	phantom float64
}

// loss returns the reconstruction loss c.Loss on x, with c.Float32.
func (c *Common) loss(x Data) (Loss, error) {
	l, err := NewLoss(c.Loss, x)
	if f, ok := l.(*Frobenius); ok {
		f.Float32 = c.Float32
	}
	return l, err
}

// start validates x and the rank and initializes U and V into f.
func (c *Common) start(f *fitted, x Data) error {
	f.ok = false
	if err := Validate(x); err != nil {
		return err
	}
	r := trace.StartRegion(context.Background(), "initialize") // for `stream --trace`
	u, v, err := initialize(x, c.Rank, c.Init, c.Src, c.width)
	r.End()
	if err != nil {
		return err
	}
	if c.phantom > 0 {
		d, _ := u.Dims()
		row := u.RawRowView(d - 1)
		for j := range row {
			row[j] *= math.Sqrt(c.phantom)
		}
	}
	f.u.CloneFrom(u)
	f.v.CloneFrom(v)
	return nil
}

// run runs an engine built from c's settings, and marks f fitted.
func (c *Common) run(f *fitted, e *Engine) error {
	e.MaxIter, e.Tol, e.Callback, e.Split = c.MaxIter, c.Tol, c.Callback, c.Split
	res, err := e.Run(&f.u, &f.v)
	if l, ok := e.Loss.(*Frobenius); ok {
		l.f32 = frob32{} // X's float32 copies, made again if ever needed
	}
	f.res = res
	if err != nil {
		return err
	}
	f.ok = true
	return nil
}

// NMF is plain non-negative matrix factorization, X ≈ UVᵀ minimizing
// ‖X − UVᵀ‖²_F by the multiplicative updates of Lee and Seung, "Algorithms
// for non-negative matrix factorization", NIPS 2001:
//
//	U ← U ⊙ (XV) / (UVᵀV),   V ← V ⊙ (XᵀU) / (VUᵀU),
//
// or, with Loss set to LossKL, the divergence D(X‖UVᵀ) by their
// divergence updates (see KL).
//
// NMF is not safe for concurrent use.
type NMF struct {
	Common
	// NormalizeU rescales U's columns to unit norm after fitting (V is
	// rescaled to keep UVᵀ). The zero value leaves them as fitted.
	NormalizeU bool
	// Inner is the engine's updates of each factor per product with the
	// data (Engine.Inner: accelerated multiplicative updates, the
	// Frobenius loss only); 0 or 1, one.
	Inner int

	fitted
	eng Engine
}

var _ Method = (*NMF)(nil)

// Fit factorizes x. labels is ignored.
func (m *NMF) Fit(x Data, labels []int) error {
	if err := m.start(&m.fitted, x); err != nil {
		return err
	}
	loss, err := m.loss(x)
	if err != nil {
		return err
	}
	m.eng = Engine{Loss: loss, Inner: m.Inner}
	if m.NormalizeU {
		m.eng.Normalize = NormalizeAtEnd
	}
	return diverged(m.run(&m.fitted, &m.eng), "NMF", "")
}

// checkLabels reports whether labels fits n samples.
func checkLabels(labels []int, n int) error {
	if labels != nil && len(labels) != n {
		return fmt.Errorf("model: %d labels for %d samples", len(labels), n)
	}
	for i, y := range labels {
		if y < -1 {
			return fmt.Errorf("model: label %d of sample %d is invalid (classes are ≥ 0, -1 means unlabeled)", y, i)
		}
	}
	return nil
}
