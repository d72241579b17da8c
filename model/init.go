package model

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Init selects how U and V are initialized.
type Init int

const (
	// InitNNDSVDa is NNDSVD with zeros filled by the mean of X: dense,
	// deterministic, and the default (scikit-learn's default too).
	InitNNDSVDa Init = iota
	// InitRandom draws entries from |N(0, 1)|·√(mean(X)/K), as scikit-learn
	// does (Cai's code draws U(0, 1); only the scale differs).
	InitRandom
	// InitNNDSVD is non-negative double SVD (Boutsidis and Gallopoulos,
	// "SVD based initialization: A head start for nonnegative matrix
	// factorization", Pattern Recognition 41(4), 2008). It leaves exact
	// zeros, which multiplicative updates cannot leave: prefer NNDSVDa.
	InitNNDSVD
	// InitNNDSVDar is NNDSVD with zeros filled by small random values.
	InitNNDSVDar
)

// String returns the name of the initialization.
func (m Init) String() string {
	switch m {
	case InitNNDSVDa:
		return "nndsvda"
	case InitRandom:
		return "random"
	case InitNNDSVD:
		return "nndsvd"
	case InitNNDSVDar:
		return "nndsvdar"
	}
	return fmt.Sprintf("Init(%d)", int(m))
}

// defaultSrc is the seed used when a caller gives no rand.Source.
func defaultSrc() rand.Source { return rand.NewPCG(1, 1) }

// Initialize returns U (D×K) and V (N×K) for X ≈ UVᵀ. src drives the
// randomness of InitRandom, InitNNDSVDar and the randomized SVD; if nil, a
// fixed seed is used. It returns an error if k is not in [1, min(D, N)].
func Initialize(x Data, k int, method Init, src rand.Source) (u, v *mat.Dense, err error) {
	return initialize(x, k, method, src, 0)
}

// initialize is Initialize with the mean entry of X taken over width
// columns when width > 0: x holds the used columns of a wider X whose
// other columns are zero (Online's first fit on sparse rows), and the mean
// that fills NNDSVDa's zeros and scales InitRandom is the wider X's.
func initialize(x Data, k int, method Init, src rand.Source, width int) (u, v *mat.Dense, err error) {
	d, n := x.Dims()
	if k <= 0 || k > min(d, n) {
		return nil, nil, fmt.Errorf("model: rank %d out of range [1, min(D=%d, N=%d)]", k, d, n)
	}
	if src == nil {
		src = defaultSrc()
	}
	rnd := rand.New(src)
	if width <= 0 {
		width = d
	}
	mean := dataSum(x) / float64(width*n)
	switch method {
	case InitRandom:
		scale := math.Sqrt(mean / float64(k))
		u, v = mat.NewDense(d, k, nil), mat.NewDense(n, k, nil)
		fillAbsNormal(u, rnd, scale)
		fillAbsNormal(v, rnd, scale)
		return u, v, nil
	case InitNNDSVD, InitNNDSVDa, InitNNDSVDar:
		u, v = nndsvd(x, k, rnd)
		fill := func(m *mat.Dense) {
			raw := m.RawMatrix()
			for i, val := range raw.Data {
				if val != 0 {
					continue
				}
				switch method {
				case InitNNDSVDa:
					raw.Data[i] = mean
				case InitNNDSVDar:
					raw.Data[i] = mean / 100 * math.Abs(rnd.NormFloat64())
				}
			}
		}
		fill(u)
		fill(v)
		return u, v, nil
	}
	return nil, nil, fmt.Errorf("model: unknown initialization %v", method)
}

func fillAbsNormal(m *mat.Dense, rnd *rand.Rand, scale float64) {
	raw := m.RawMatrix()
	for i := range raw.Data {
		raw.Data[i] = scale * math.Abs(rnd.NormFloat64())
	}
}

// dataSum returns the sum of X's entries, from Xᵀ·1.
func dataSum(x Data) float64 {
	d, _ := x.Dims()
	ones := mat.NewDense(d, 1, nil)
	for i := 0; i < d; i++ {
		ones.Set(i, 0, 1)
	}
	var colSums mat.Dense
	x.TMulTo(&colSums, ones)
	return mat.Sum(&colSums)
}

// nndsvd returns the NNDSVD factors of X from its leading k singular
// triplets (Boutsidis and Gallopoulos 2008, Table 1).
func nndsvd(x Data, k int, rnd *rand.Rand) (u, v *mat.Dense) {
	d, n := x.Dims()
	lu, sigma, rv := RandomizedSVD(x, k, rnd)
	u, v = mat.NewDense(d, k, nil), mat.NewDense(n, k, nil)
	for j := 0; j < k; j++ {
		a := mat.Col(nil, j, lu)
		b := mat.Col(nil, j, rv)
		if j == 0 {
			// The leading singular vectors of a non-negative matrix can be
			// chosen non-negative (Perron–Frobenius); take |·| against rounding.
			s := math.Sqrt(sigma[0])
			for i, x := range a {
				u.Set(i, 0, s*math.Abs(x))
			}
			for i, x := range b {
				v.Set(i, 0, s*math.Abs(x))
			}
			continue
		}
		ap, an := posNeg(a)
		bp, bn := posNeg(b)
		nap, nan := norm2(ap), norm2(an)
		nbp, nbn := norm2(bp), norm2(bn)
		mp, mn := nap*nbp, nan*nbn
		var su, sv []float64
		var m, nu, nv float64
		if mp > mn {
			su, sv, m, nu, nv = ap, bp, mp, nap, nbp
		} else {
			su, sv, m, nu, nv = an, bn, mn, nan, nbn
		}
		if m == 0 {
			continue
		}
		s := math.Sqrt(sigma[j] * m)
		for i, x := range su {
			u.Set(i, j, s*x/nu)
		}
		for i, x := range sv {
			v.Set(i, j, s*x/nv)
		}
	}
	return u, v
}

func posNeg(a []float64) (p, q []float64) {
	p, q = make([]float64, len(a)), make([]float64, len(a))
	for i, x := range a {
		if x > 0 {
			p[i] = x
		} else {
			q[i] = -x
		}
	}
	return p, q
}

func norm2(a []float64) float64 {
	var s float64
	for _, x := range a {
		s += x * x
	}
	return math.Sqrt(s)
}

// RandomizedSVD returns approximations of the k leading singular triplets
// of X: left vectors (D×k), singular values, right vectors (N×k). It uses
// 10 oversampling columns and 4 power iterations with re-orthonormalization
// (Halko, Martinsson and Tropp, "Finding structure with randomness", SIAM
// Review 53(2), 2011), touching X only through products, so it serves dense
// and sparse data alike.
func RandomizedSVD(x Data, k int, rnd *rand.Rand) (left *mat.Dense, sigma []float64, right *mat.Dense) {
	const (
		oversample = 10 // Halko et al. §4.2 recommend 5–10
		powerIters = 4
	)
	d, n := x.Dims()
	l := min(k+oversample, d, n)
	omega := mat.NewDense(n, l, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < l; j++ {
			omega.Set(i, j, rnd.NormFloat64())
		}
	}
	var y, z mat.Dense
	x.MulTo(&y, omega) // D×l
	q := orthonormalize(&y)
	for it := 0; it < powerIters; it++ {
		z.Reset()
		x.TMulTo(&z, q) // N×l
		qz := orthonormalize(&z)
		y.Reset()
		x.MulTo(&y, qz)
		q = orthonormalize(&y)
	}
	// B = Qᵀ X (l×N) = (XᵀQ)ᵀ.
	var bt mat.Dense
	x.TMulTo(&bt, q) // N×l
	var svd mat.SVD
	if !svd.Factorize(bt.T(), mat.SVDThin) {
		panic("model: SVD of a small dense matrix failed")
	}
	var ub, vb mat.Dense
	svd.UTo(&ub) // l×l
	svd.VTo(&vb) // N×l
	vals := svd.Values(nil)
	left = mat.NewDense(d, k, nil)
	left.Mul(q, ub.Slice(0, l, 0, k))
	right = mat.DenseCopyOf(vb.Slice(0, n, 0, k))
	return left, vals[:k], right
}

// orthonormalize returns an orthonormal basis of a's columns, by modified
// Gram–Schmidt applied twice ("twice is enough", Giraud et al. 2005). Unlike
// mat.QR.QTo it never forms the full r×r factor, which for N samples
// would be N×N. Columns that vanish are left zero.
//
// Each pass runs right-looking: once column i is normalized, it is taken
// out of every later column. Column j still takes out columns 0, …, j−1 in
// that order, each as it stands after its own normalization in this pass,
// with each inner product summed in increasing row order, so the result is
// the left-looking form's bit for bit; but the inner products of one
// column i with four later columns run as four independent sums in one
// loop (orthoDots4), which keeps the floating-point adder busy instead of
// waiting on one chain of additions, and each column is updated by
// floats.AddScaled (y + (−d)·x: the same bits as y − d·x, the product and
// the sum each rounded, in vector instructions).
func orthonormalize(a *mat.Dense) *mat.Dense {
	_, c := a.Dims()
	q := mat.DenseCopyOf(a)
	cols := make([][]float64, c)
	for j := range cols {
		cols[j] = mat.Col(nil, j, q)
	}
	for pass := 0; pass < 2; pass++ {
		for i := range cols {
			if nrm := norm2(cols[i]); nrm > 0 {
				for t := range cols[i] {
					cols[i][t] /= nrm
				}
			}
			ci := cols[i]
			j := i + 1
			for ; j+4 <= c; j += 4 {
				d0, d1, d2, d3 := orthoDots4(ci, cols[j], cols[j+1], cols[j+2], cols[j+3])
				floats.AddScaled(cols[j], -d0, ci)
				floats.AddScaled(cols[j+1], -d1, ci)
				floats.AddScaled(cols[j+2], -d2, ci)
				floats.AddScaled(cols[j+3], -d3, ci)
			}
			for ; j < c; j++ {
				var dot float64
				for t, x := range ci {
					dot += x * cols[j][t]
				}
				floats.AddScaled(cols[j], -dot, ci)
			}
		}
	}
	for j := range cols {
		q.SetCol(j, cols[j])
	}
	return q
}

// orthoDots4 returns the inner products of x with a, b, c and e (all of
// x's length), each summed in increasing index order.
func orthoDots4(x, a, b, c, e []float64) (da, db, dc, de float64) {
	a, b, c, e = a[:len(x)], b[:len(x)], c[:len(x)], e[:len(x)]
	for t, v := range x {
		da += v * a[t]
		db += v * b[t]
		dc += v * c[t]
		de += v * e[t]
	}
	return da, db, dc, de
}
