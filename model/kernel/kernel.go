package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
)

// Kernel is a positive semi-definite similarity k(x, y) = ⟨φ(x), φ(y)⟩ that
// depends on two samples only through xᵀy, ‖x‖² and ‖y‖², so that kernel
// matrices come from one matrix product of the data (see MatrixTo).
type Kernel interface {
	// Eval returns k(x, y) from dot = xᵀy, xx = ‖x‖² and yy = ‖y‖².
	Eval(dot, xx, yy float64) float64
	// Bind returns the kernel with its data-dependent parameters (the
	// Gaussian width) fixed from the training samples x, or an error if a
	// parameter is invalid. A kernel without such parameters returns itself
	// after checking its fields.
	Bind(x model.Data) (Kernel, error)
	// String names the kernel and its parameters.
	String() string
}

// Rule says which pairwise distance ρ a relative Gaussian width σ = Scale·ρ
// multiplies.
type Rule int

const (
	// MaxDistance is the largest distance between two training samples, as
	// in Wang and AbdulJabbar (the default).
	MaxDistance Rule = iota
	// MeanDistance is the mean distance between two distinct training samples.
	MeanDistance
)

// maxWidthSample bounds the samples over which ρ is computed: all pairs
// when N ≤ maxWidthSample, else the pairs of a seeded uniform sample of that
// many samples (ρ is then an estimate; the maximum can only be
// underestimated).
const maxWidthSample = 4096

// Gaussian is the radial basis function kernel k(x, y) = exp(−‖x − y‖²/(2σ²)).
//
// The width is Sigma if it is positive; otherwise it is Scale·ρ, where ρ is
// the Rule distance over the training samples, fixed by Bind. A kernel with
// neither a positive Sigma nor a positive Scale has width 0, which Bind
// reports as an error (a width of 0 makes K the identity).
type Gaussian struct {
	// Sigma is the width σ > 0. If zero, Scale·ρ is used.
	Sigma float64
	// Scale multiplies ρ when Sigma is zero. It must then be positive.
	Scale float64
	// Rule chooses ρ. The zero value is MaxDistance.
	Rule Rule
}

// Eval returns exp(−(xx + yy − 2·dot)/(2σ²)). It returns NaN for an unbound
// relative width.
func (g Gaussian) Eval(dot, xx, yy float64) float64 {
	if !(g.Sigma > 0) {
		return math.NaN()
	}
	d2 := xx + yy - 2*dot
	if d2 < 0 { // rounding between near-identical samples
		d2 = 0
	}
	return math.Exp(-d2 / (2 * g.Sigma * g.Sigma))
}

// Bind fixes σ = Scale·ρ from x when Sigma is zero.
func (g Gaussian) Bind(x model.Data) (Kernel, error) {
	return g.bind(func(r Rule) (float64, error) { return PairwiseDistance(x, r) })
}

// bind is Bind with ρ = dist(Rule), which newSpace computes once for the
// Gaussian kernels of a pool.
func (g Gaussian) bind(dist func(Rule) (float64, error)) (Kernel, error) {
	switch {
	case math.IsNaN(g.Sigma) || math.IsInf(g.Sigma, 0) || g.Sigma < 0:
		return nil, fmt.Errorf("kernel: Gaussian width σ = %v, want > 0", g.Sigma)
	case g.Sigma > 0:
		return g, nil
	case math.IsNaN(g.Scale) || math.IsInf(g.Scale, 0) || g.Scale < 0:
		return nil, fmt.Errorf("kernel: Gaussian width scale %v, want > 0", g.Scale)
	case g.Scale == 0:
		return nil, fmt.Errorf("kernel: Gaussian width σ = 0: set Sigma > 0, or Scale > 0 for σ = Scale·ρ")
	}
	rho, err := dist(g.Rule)
	if err != nil {
		return nil, err
	}
	if rho == 0 {
		return nil, fmt.Errorf("kernel: Gaussian width σ = %g·ρ = 0: all samples coincide", g.Scale)
	}
	return Gaussian{Sigma: g.Scale * rho, Rule: g.Rule}, nil
}

func (g Gaussian) String() string {
	if g.Sigma > 0 {
		return fmt.Sprintf("gaussian(σ=%.4g)", g.Sigma)
	}
	r := "max"
	if g.Rule == MeanDistance {
		r = "mean"
	}
	return fmt.Sprintf("gaussian(σ=%g·%s distance)", g.Scale, r)
}

// PairwiseDistance returns the largest (MaxDistance) or mean (MeanDistance)
// Euclidean distance between two distinct samples of x. Above 4096 samples
// it is computed on a uniform sample of 4096 of them drawn from
// rand.NewPCG(1, 1).
func PairwiseDistance(x model.Data, rule Rule) (float64, error) {
	_, n := x.Dims()
	if n < 2 {
		return 0, fmt.Errorf("kernel: a pairwise distance needs 2 samples, have %d", n)
	}
	if n > maxWidthSample {
		idx := rand.New(rand.NewPCG(1, 1)).Perm(n)[:maxWidthSample]
		var err error
		if x, err = subsetRows(x, idx); err != nil {
			return 0, err
		}
		n = maxWidthSample
	}
	var g mat.Dense
	if err := dotsTo(&g, x, x); err != nil {
		return 0, err
	}
	sq := sqNorms(x)
	var mx, sum float64
	raw := g.RawMatrix()
	for i := 0; i < n; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+n]
		for j := i + 1; j < n; j++ {
			d2 := max(sq[i]+sq[j]-2*row[j], 0)
			mx = max(mx, d2)
			sum += math.Sqrt(d2)
		}
	}
	if rule == MeanDistance {
		return sum / float64(n*(n-1)/2), nil
	}
	return math.Sqrt(mx), nil
}

// Polynomial is the inhomogeneous polynomial kernel k(x, y) = (c + xᵀy)^p.
type Polynomial struct {
	// Degree is p. If zero, it defaults to 2. It must not be negative.
	Degree int
	// Offset is c. If zero, it defaults to 1 (the kernel of Wang and
	// AbdulJabbar); set Homogeneous for c = 0. It must not be negative.
	Offset float64
	// Homogeneous uses c = 0: k(x, y) = (xᵀy)^p (Buciu et al.'s PNMF).
	Homogeneous bool
}

func (p Polynomial) params() (deg int, c float64) {
	deg, c = p.Degree, p.Offset
	if deg == 0 {
		deg = 2
	}
	if p.Homogeneous {
		c = 0
	} else if c == 0 {
		c = 1
	}
	return deg, c
}

// Eval returns (c + dot)^p.
func (p Polynomial) Eval(dot, _, _ float64) float64 {
	deg, c := p.params()
	return math.Pow(c+dot, float64(deg))
}

// Bind checks the degree and offset and returns p.
func (p Polynomial) Bind(model.Data) (Kernel, error) {
	if p.Degree < 0 {
		return nil, fmt.Errorf("kernel: polynomial degree %d, want ≥ 1", p.Degree)
	}
	if math.IsNaN(p.Offset) || math.IsInf(p.Offset, 0) || p.Offset < 0 {
		return nil, fmt.Errorf("kernel: polynomial offset %v, want ≥ 0", p.Offset)
	}
	return p, nil
}

func (p Polynomial) String() string {
	deg, c := p.params()
	return fmt.Sprintf("polynomial(p=%d, c=%g)", deg, c)
}

// Cosine is the cosine kernel k(x, y) = xᵀy / (‖x‖·‖y‖). A zero sample has
// similarity 0 to every sample, itself included.
type Cosine struct{}

// Eval returns dot/√(xx·yy), or 0 if either norm is 0.
func (Cosine) Eval(dot, xx, yy float64) float64 {
	if xx == 0 || yy == 0 {
		return 0
	}
	return dot / math.Sqrt(xx*yy)
}

// Bind returns the kernel unchanged.
func (c Cosine) Bind(model.Data) (Kernel, error) { return c, nil }

func (Cosine) String() string { return "cosine" }

// Linear is the linear kernel k(x, y) = xᵀy. With it, the kernel methods
// become convex NMF (basis vectors are combinations of the samples).
type Linear struct{}

// Eval returns dot.
func (Linear) Eval(dot, _, _ float64) float64 { return dot }

// Bind returns the kernel unchanged.
func (l Linear) Bind(model.Data) (Kernel, error) { return l, nil }

func (Linear) String() string { return "linear" }

// DefaultPool returns the ten base kernels of Wang and AbdulJabbar's
// document-clustering experiment (§4.1.1): seven Gaussian kernels with σ =
// c·ρ, ρ the maximum distance between samples and c ∈ {0.01, 0.05, 0.1, 1,
// 10, 50, 100}; polynomial kernels (1 + xᵀy)^p with p ∈ {2, 4}; and the
// cosine kernel.
func DefaultPool() []Kernel {
	pool := make([]Kernel, 0, 10)
	for _, c := range []float64{0.01, 0.05, 0.1, 1, 10, 50, 100} {
		pool = append(pool, Gaussian{Scale: c})
	}
	return append(pool, Polynomial{Degree: 2}, Polynomial{Degree: 4}, Cosine{})
}

var (
	_ Kernel = Gaussian{}
	_ Kernel = Polynomial{}
	_ Kernel = Cosine{}
	_ Kernel = Linear{}
)

// ScalePool returns a pool of kernels near the scale of the data: five
// Gaussian kernels with σ = c·ρ, ρ the mean distance between samples and
// c ∈ {0.1, 0.25, 0.5, 1, 2}, the polynomial kernel (1 + xᵀy)² and the
// cosine kernel. Unlike DefaultPool, whose widest Gaussians (σ ≥ 10 × the
// maximum distance) are nearly constant, every kernel of this pool varies
// across the samples, so whichever kernel a τ step picks carries structure.
func ScalePool() []Kernel {
	pool := make([]Kernel, 0, 7)
	for _, c := range []float64{0.1, 0.25, 0.5, 1, 2} {
		pool = append(pool, Gaussian{Scale: c, Rule: MeanDistance})
	}
	return append(pool, Polynomial{Degree: 2}, Cosine{})
}
