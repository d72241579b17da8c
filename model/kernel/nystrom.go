package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/gemm"
	"github.com/nmfstream/nmfstream/model"
)

// Selection chooses the Nyström landmarks.
type Selection int

const (
	// KMeansPP draws landmarks by k-means++ seeding (D² sampling in the
	// input space, Arthur and Vassilvitskii 2007): spread-out landmarks
	// approximate K better than uniform ones for the same m. The default.
	KMeansPP Selection = iota
	// Uniform draws landmarks uniformly without replacement.
	Uniform
)

// Nystrom configures the landmark (Nyström) approximation of a kernel
// matrix: with m landmarks, K ≈ Φ_m Φ_mᵀ where Φ_m = K_nm K_mm^{-½} (N×m),
// K_nm the kernel between all samples and the landmarks. K_mm^{-½} is
// computed from the eigendecomposition of K_mm with eigenvalues below
// 1e-10·λ_max dropped (eigen-clipping), so a rank-deficient K_mm (duplicate
// landmarks) is handled as a pseudo-inverse.
//
// The kernel methods then use the non-negative features Φ₊ = max(Φ_m, 0)
// and K ≈ Φ₊Φ₊ᵀ, which is positive semi-definite and entrywise non-negative,
// so the multiplicative updates keep their monotonicity proof; the cost of a
// product K·F drops from N²K to 2NmK, and memory from N² to Nm. When every
// sample is a landmark, Φ_m is the symmetric square root K^{½}, and Φ₊ is
// exactly the clipped K^{½} of Zhang and Liu: Flexible runs its updates on
// Φ₊ as data, which is the same algorithm on m coordinates instead of N.
// Clipping is exact for the default kernels on non-negative data up to a
// small loss (Zhang and Liu report that few entries are negative), which
// NystromError lets you measure.
type Nystrom struct {
	// Landmarks is m. If zero, it defaults to min(N, 500). It must not
	// exceed N.
	Landmarks int
	// Select chooses the landmarks. The zero value is KMeansPP.
	Select Selection
	// Src drives the selection. If nil, rand.NewPCG(1, 1) is used.
	Src rand.Source
}

// eigCut is the relative eigenvalue below which K^{-½} treats a direction
// as null: above float64 rounding of an N×N kernel (N·ε ≈ 1e-12 for
// N = 5000), and small enough to keep the directions that carry signal.
const eigCut = 1e-10

// invSqrtTo stores the pseudo-inverse square root of the symmetric PSD
// matrix k (m×m) into dst, and k's clipped square root into sq if non-nil.
func invSqrtTo(dst, sq *mat.Dense, k *mat.Dense) error {
	n, _ := k.Dims()
	sym := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			sym.SetSym(i, j, k.At(i, j))
		}
	}
	var es mat.EigenSym
	if !es.Factorize(sym, true) {
		return fmt.Errorf("kernel: eigendecomposition of the %d×%d kernel matrix failed", n, n)
	}
	vals := es.Values(nil)
	var q mat.Dense
	es.VectorsTo(&q)
	lmax := 0.0
	for _, l := range vals {
		lmax = max(lmax, l)
	}
	if !(lmax > 0) {
		return fmt.Errorf("kernel: the kernel matrix is zero")
	}
	pow := func(dst *mat.Dense, f func(l float64) float64) {
		var qs mat.Dense
		qs.CloneFrom(&q)
		for j, l := range vals {
			s := f(l)
			for i := 0; i < n; i++ {
				qs.Set(i, j, qs.At(i, j)*s)
			}
		}
		dst.Reset()
		dst.ReuseAs(n, n)
		var ws gemm.ABTWorkspace
		gemm.ABT(dst.RawMatrix(), qs.RawMatrix(), q.RawMatrix(), &ws, false) // Q·f(Λ)·Qᵀ
	}
	pow(dst, func(l float64) float64 {
		if l <= eigCut*lmax {
			return 0
		}
		return 1 / math.Sqrt(l)
	})
	if sq != nil {
		pow(sq, func(l float64) float64 { return math.Sqrt(max(l, 0)) })
	}
	return nil
}

// selectLandmarks returns m distinct sample indices.
func (ny *Nystrom) selectLandmarks(x model.Data, m int) []int {
	_, n := x.Dims()
	src := ny.Src
	if src == nil {
		src = rand.NewPCG(1, 1)
	}
	rnd := rand.New(src)
	if ny.Select == Uniform || m == n {
		idx := rnd.Perm(n)[:m]
		return idx
	}
	// k-means++: the next landmark is drawn with probability ∝ d², the
	// squared distance to the nearest landmark so far.
	sq := sqNorms(x)
	d2 := make([]float64, n)
	for i := range d2 {
		d2[i] = math.Inf(1)
	}
	idx := []int{rnd.IntN(n)}
	chosen := map[int]bool{idx[0]: true}
	var dots mat.Dense
	for len(idx) < m {
		last := idx[len(idx)-1]
		one, _ := subsetRows(x, []int{last})
		dots.Reset()
		_ = dotsTo(&dots, x, one) // same features: cannot fail
		var total float64
		for i := range d2 {
			d := max(sq[i]+sq[last]-2*dots.At(i, 0), 0)
			d2[i] = min(d2[i], d)
			if chosen[i] {
				d2[i] = 0
			}
			total += d2[i]
		}
		next := -1
		if total > 0 {
			r := rnd.Float64() * total
			for i, d := range d2 {
				if r < d {
					next = i
					break
				}
				r -= d
			}
		}
		if next < 0 || chosen[next] { // all remaining samples coincide with landmarks
			for _, i := range rnd.Perm(n) {
				if !chosen[i] {
					next = i
					break
				}
			}
		}
		chosen[next] = true
		idx = append(idx, next)
	}
	return idx
}

// nystromMap maps samples to the non-negative Nyström features of one kernel.
type nystromMap struct {
	k     Kernel
	scale float64 // features are divided by √scale
	lm    model.Data
	w     *mat.Dense // K_mm^{-½}, m×m
}

// featuresTo stores max(k(x, landmarks)·K_mm^{-½}, 0)/√scale (M×m) into dst.
func (nm *nystromMap) featuresTo(dst *mat.Dense, x model.Data) error {
	var knm mat.Dense
	if err := CrossTo(&knm, nm.k, x, nm.lm); err != nil {
		return err
	}
	nm.fromCross(dst, &knm)
	return nil
}

// featuresFrom is featuresTo from p, the products of x with the landmarks
// (shared by the kernels of a pool).
func (nm *nystromMap) featuresFrom(dst *mat.Dense, p *products) error {
	var knm mat.Dense
	if err := p.crossTo(&knm, nm.k); err != nil {
		return err
	}
	nm.fromCross(dst, &knm)
	return nil
}

// fromCross stores the features of the samples whose kernel with the
// landmarks is knm (M×m) into dst.
func (nm *nystromMap) fromCross(dst, knm *mat.Dense) {
	dst.Reset()
	gemm.MulTo(dst, knm, nm.w, false)
	s := 1 / math.Sqrt(nm.scale)
	dst.Apply(func(_, _ int, v float64) float64 { return max(v, 0) * s }, dst)
}

// build computes the map of kernel k (bound) on landmarks lm.
func newNystromMap(k Kernel, scale float64, lm model.Data) (*nystromMap, error) {
	var kmm mat.Dense
	if err := MatrixTo(&kmm, k, lm); err != nil {
		return nil, err
	}
	w := new(mat.Dense)
	if err := invSqrtTo(w, nil, &kmm); err != nil {
		return nil, err
	}
	return &nystromMap{k: k, scale: scale, lm: lm, w: w}, nil
}

// NystromError returns ‖K − Φ₊Φ₊ᵀ‖_F / ‖K‖_F for the kernel k on the samples
// of x, with the landmarks that ny selects: the relative error of the
// approximation the kernel methods use. It forms K, so keep x small.
func NystromError(ny Nystrom, k Kernel, x model.Data) (float64, error) {
	k, err := k.Bind(x)
	if err != nil {
		return 0, err
	}
	_, n := x.Dims()
	m := ny.Landmarks
	if m == 0 {
		m = min(n, 500)
	}
	if m < 1 || m > n {
		return 0, fmt.Errorf("kernel: %d landmarks for %d samples", m, n)
	}
	lm, err := subsetRows(x, ny.selectLandmarks(x, m))
	if err != nil {
		return 0, err
	}
	nm, err := newNystromMap(k, 1, lm)
	if err != nil {
		return 0, err
	}
	var phi, kk, approx mat.Dense
	if err := nm.featuresTo(&phi, x); err != nil {
		return 0, err
	}
	if err := MatrixTo(&kk, k, x); err != nil {
		return 0, err
	}
	approx.Mul(&phi, phi.T())
	approx.Sub(&kk, &approx)
	return mat.Norm(&approx, 2) / mat.Norm(&kk, 2), nil
}
