// Command codespace measures how good a k-NN space the factorization's codes
// are, against the raw samples, on the first n MNIST training images: for
// each space it builds the exact k-NN graph (cosine), and prints the
// leave-one-out 1-NN accuracy and the accuracy of the labels of a random
// tenth of the images spread over the graph (the harmonic function, edge
// weights cos^p, class mass normalization: the stream's default predictor,
// docs/DESIGN.md §3, run to convergence on the whole set). The spaces are
// the raw pixels, the codes V of a batch GNMF fit (or NMF, SSKNMF or SSNMF:
// --method), the reconstructions UVᵀ, the orthogonal projection of the
// pixels on the span of U, and their projection on the span of their K
// leading right singular vectors (the principal span, uncentered: the
// stream's default search basis, model.SearchFitSVD). It is the diagnostic
// behind BENCHMARKS.md, "What the codes add" and "The principal span".
//
//	go run ./bench/codespace --mnist ~/.cache/nmfstream-data/mnist --n 10000 --rank 40
package main

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/sources"
)

func main() {
	dir := flag.String("mnist", filepath.Join(os.Getenv("HOME"), ".cache/nmfstream-data/mnist"), "directory of the MNIST IDX files")
	n := flag.Int("n", 10000, "number of training images (the first n)")
	rank := flag.Int("rank", 40, "rank K of the GNMF fit")
	k := flag.Int("k", 10, "neighbours per node of each k-NN graph")
	frac := flag.Float64("labeled", 0.1, "fraction of labeled images for the spreading")
	seed := flag.Uint64("seed", 1, "seed of the labeled draw")
	noise := flag.Float64("noise", 0, "standard deviation of Gaussian noise added to each pixel (in [0, 1] units; negative results clipped to 0)")
	method := flag.String("method", "gnmf", "the batch fit: gnmf (100 updates, the stream's default method), nmf (200 updates, no graph term), or a label-aware fit given the labeled tenth: ssknmf (100 updates, its defaults) or ssnmf (200 updates, no graph term)")
	flag.Parse()
	if err := run(*dir, *method, *n, *rank, *k, *frac, *seed, *noise); err != nil {
		fmt.Fprintln(os.Stderr, "codespace:", err)
		os.Exit(1)
	}
}

// fitter is the part of a batch method codespace reads.
type fitter interface {
	Fit(model.Data, []int) error
	Basis() *mat.Dense
	Codes() *mat.Dense
}

// newFitter returns the batch fit named by method at rank K.
func newFitter(method string, rank int) (fitter, error) {
	switch method {
	case "gnmf":
		g := &model.GNMF{}
		g.Rank, g.MaxIter = rank, 100
		return g, nil
	case "nmf":
		m := &model.NMF{}
		m.Rank, m.MaxIter = rank, 200
		return m, nil
	case "ssknmf":
		m := &model.SSKNMF{}
		m.Rank, m.MaxIter = rank, 100
		return m, nil
	case "ssnmf":
		m := &model.SSNMF{Alpha: -1}
		m.Rank, m.MaxIter = rank, 200
		return m, nil
	}
	return nil, fmt.Errorf("unknown --method %q (want gnmf, nmf, ssknmf or ssnmf)", method)
}

func run(dir, method string, n, rank, k int, frac float64, seed uint64, noise float64) error {
	g, err := newFitter(method, rank)
	if err != nil {
		return err
	}
	x, y, err := sources.ReadMNIST(dir, n)
	if err != nil {
		return err
	}
	if noise > 0 {
		nr := rand.New(rand.NewPCG(seed, 3))
		raw := x.RawMatrix().Data
		for i := range raw {
			raw[i] = max(raw[i]+noise*nr.NormFloat64(), 0)
		}
	}
	r := rand.New(rand.NewPCG(seed, 2))
	labeled := make([]bool, len(y))
	for i := range labeled {
		labeled[i] = r.Float64() < frac
	}
	// The label-aware fits see the labeled tenth's labels (−1: unlabeled);
	// gnmf and nmf ignore them.
	labels := make([]int, len(y))
	for i := range labels {
		labels[i] = -1
		if labeled[i] {
			labels[i] = y[i]
		}
	}
	if err := g.Fit(model.DenseRows(x), labels); err != nil {
		return err
	}
	u, v := g.Basis(), g.Codes()
	// With UᵀU = LLᵀ: ‖U(vᵢ − vⱼ)‖ = ‖Lᵀ(vᵢ − vⱼ)‖, so the rows of V·L are
	// the reconstructions' coordinates; the projection of x on span(U) has
	// the coordinates x·U·L⁻ᵀ.
	var gram mat.SymDense
	gram.SymOuterK(1, u.T())
	var ch mat.Cholesky
	if !ch.Factorize(&gram) {
		return errors.New("UᵀU is not positive definite")
	}
	var l, linv mat.TriDense
	ch.LTo(&l)
	if err := linv.InverseTri(&l); err != nil {
		return err
	}
	var recon, xu, span mat.Dense
	recon.Mul(v, &l)
	xu.Mul(x, u)
	span.Mul(&xu, linv.T())
	// The principal span: x's coordinates on its top K right singular
	// vectors (uncentered, as the projection on span(U) is).
	var svd mat.SVD
	if !svd.Factorize(x, mat.SVDThin) {
		return errors.New("the SVD of the pixels did not converge")
	}
	var vt, pcs mat.Dense
	svd.VTo(&vt)
	pcs.Mul(x, vt.Slice(0, x.RawMatrix().Cols, 0, rank))
	fmt.Printf("MNIST, first %d training images (noise σ = %g); %s K = %d; k = %d, cosine; %.0f%% labeled (seed %d)\n\n", len(y), noise, method, rank, k, 100*frac, seed)
	fmt.Println("| space | 1-NN (leave one out) | spreading, binary weights | spreading, cos^20 |")
	fmt.Println("|---|---|---|---|")
	for _, sp := range []struct {
		name string
		z    *mat.Dense
	}{{"pixels", x}, {"codes V", v}, {"reconstructions UVᵀ", &recon}, {"projection on span(U)", &span}, {"projection on the top K singular vectors", &pcs}} {
		nb, err := neighbours(sp.z, k)
		if err != nil {
			return fmt.Errorf("%s: %w", sp.name, err)
		}
		fmt.Printf("| %s | %.4f | %.4f | %.4f |\n", sp.name, nearest(nb, y), spread(nb, y, labeled, 0), spread(nb, y, labeled, 20))
	}
	return nil
}

// edge is a k-NN graph edge and the cosine of its two rows.
type edge struct {
	to  int
	cos float64
}

// neighbours returns each row's k nearest rows of z by cosine, nearest first.
func neighbours(z *mat.Dense, k int) ([][]edge, error) {
	g, err := graph.KNN{K: k, Metric: graph.Cosine}.Dense(z)
	if err != nil {
		return nil, err
	}
	n, _ := z.Dims()
	nb := make([][]edge, n)
	for i := range nb {
		ids, d := g.Neighbors(i)
		for j, m := range ids {
			nb[i] = append(nb[i], edge{m, max(1-d[j], 1e-3)})
		}
	}
	return nb, nil
}

// nearest returns the leave-one-out 1-NN accuracy.
func nearest(nb [][]edge, y []int) float64 {
	ok := 0
	for i, e := range nb {
		if y[e[0].to] == y[i] {
			ok++
		}
	}
	return float64(ok) / float64(len(y))
}

// spread returns the accuracy over the unlabeled rows of the harmonic
// function on the symmetrized graph (weights cos^p, binary for p = 0),
// labeled rows clamped, 100 Gauss–Seidel sweeps, class mass normalized.
func spread(nb [][]edge, y []int, labeled []bool, p float64) float64 {
	const classes = 10
	adj := make([][]edge, len(nb))
	for i, es := range nb {
		for _, e := range es {
			w := 1.0
			for range int(p) {
				w *= e.cos
			}
			adj[i] = append(adj[i], edge{e.to, w})
			adj[e.to] = append(adj[e.to], edge{i, w})
		}
	}
	f := make([]float64, len(nb)*classes)
	for range 100 {
		for i := range adj {
			fi := f[i*classes : (i+1)*classes]
			clear(fi)
			if labeled[i] {
				fi[y[i]] = 1
				continue
			}
			var deg float64
			for _, e := range adj[i] {
				deg += e.cos
			}
			for _, e := range adj[i] {
				for c, v := range f[e.to*classes : (e.to+1)*classes] {
					fi[c] += e.cos / deg * v
				}
			}
		}
	}
	var mass [classes]float64
	for i := range adj {
		for c := range classes {
			mass[c] += f[i*classes+c]
		}
	}
	ok, tot := 0, 0
	for i := range adj {
		if labeled[i] {
			continue
		}
		best := 0
		for c := range classes {
			if f[i*classes+c]/mass[c] > f[i*classes+best]/mass[best] {
				best = c
			}
		}
		tot++
		if best == y[i] {
			ok++
		}
	}
	return float64(ok) / float64(tot)
}
