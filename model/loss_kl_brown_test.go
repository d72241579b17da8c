package model_test

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/metrics"
	"github.com/nmfstream/nmfstream/stages"
)

// TestBrownLoss compares the Frobenius loss with the KL divergence for the
// quality of document codes: NMF and GNMF (cosine 5-NN graph) of rank 15
// (one factor per genre) on TF-IDF of the Brown corpus, for several α and
// initialization seeds. Each row reports the mean over seeds of
//
//   - NMI and clustering accuracy of k-means (15 clusters, seed
//     rand.NewPCG(1, 31)) on the codes scaled to unit rows, against the
//     genres;
//   - 1-NN accuracy (cosine) of the unlabeled documents against L labeled
//     ones per genre (chosen with the seed), on the same codes.
//
// The codes are scored as fitted (U's columns of unit Euclidean norm, the
// GNMF default) and, in the columns marked l1, with V's columns scaled so
// that U's columns sum to one instead (for KL, the document–topic masses
// of PLSA). NMFSTREAM_BROWN_NORM=l1 makes TF-IDF rows of unit l1 norm
// instead of l2.
//
// Peers: the same scores on the TF-IDF rows. Without NMFSTREAM_BROWN it
// runs on the 45 documents of stages/testdata/brown_texts.json.gz (3 per
// genre, L = 1); with NMFSTREAM_BROWN set to the corpus folder of
// scripts/fetch-data.sh, on all 500 (L = 5: the smallest genre has 6):
//
//	NMFSTREAM_BROWN=$HOME/.cache/nmfstream-data/brown go test ./model -run TestBrownLoss -v
//
// It checks only that every fit succeeds; the numbers are in BENCHMARKS.md.
func TestBrownLoss(t *testing.T) {
	var docs, genres []string
	tf := &stages.TFIDF{StopWords: stages.EnglishStopWords(), MinDF: stages.DocFreq{Count: 3}, MaxDF: stages.DocFreq{Fraction: 0.5}, SublinearTF: true}
	perClass := 5
	seeds := []uint64{1, 2, 3}
	alphas := []float64{-1, 1, 10, 100, 1000}
	norm := "l2"
	if os.Getenv("NMFSTREAM_BROWN_NORM") == "l1" {
		tf.Norm, norm = stages.NormL1, "l1"
	}
	if a := os.Getenv("NMFSTREAM_BROWN_ALPHAS"); a != "" {
		alphas = alphas[:0]
		for _, f := range strings.Split(a, ",") {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				t.Fatalf("NMFSTREAM_BROWN_ALPHAS: %v", err)
			}
			alphas = append(alphas, v)
		}
	}
	maxIter := 0 // the default, 200
	if it := os.Getenv("NMFSTREAM_BROWN_ITERS"); it != "" {
		var err error
		if maxIter, err = strconv.Atoi(it); err != nil {
			t.Fatalf("NMFSTREAM_BROWN_ITERS: %v", err)
		}
	}
	if dir := os.Getenv("NMFSTREAM_BROWN"); dir != "" {
		var err error
		if docs, genres, err = datasets.Brown(dir); err != nil {
			t.Fatal(err)
		}
	} else {
		docs, genres = readBrownGolden(t)
		tf.MinDF = stages.DocFreq{Count: 2}
		perClass = 1
		seeds, alphas = seeds[:1], []float64{-1, 10}
		if testing.Short() {
			t.Skip("the 45-document run takes a few seconds")
		}
	}
	var enc metrics.LabelEncoder
	enc.Fit(genres)
	y, err := enc.Encode(nil, genres)
	if err != nil {
		t.Fatal(err)
	}
	x, err := tf.FitTransform(docs)
	if err != nil {
		t.Fatal(err)
	}
	n, dim := x.Dims()
	classes := len(enc.Classes())
	t.Logf("%d documents, %d genres, %d terms, %d stored entries, rows of unit %s norm; L = %d per genre, seeds %v", n, classes, dim, x.NNZ(), norm, perClass, seeds)

	score := func(codes *mat.Dense, seed uint64) (nmi, acc, nn float64) {
		u := unitRowsOf(codes)
		km := classify.KMeans{K: classes, Src: rand.NewPCG(1, 31)}
		if err := km.Fit(u); err != nil {
			t.Fatal(err)
		}
		pred := km.LabelsTo(nil)
		labeled := pickPerClass(y, classes, perClass, seed)
		return metrics.NMI(pred, y), metrics.ClusteringAccuracy(pred, y), cosine1NN(u, y, labeled)
	}
	t.Logf("%-28s %6s %6s %6s  %6s %6s %6s", "codes", "NMI", "acc", "1-NN", "NMI l1", "acc l1", "1-NN l1")
	{
		var nmi, acc, nn float64
		for _, s := range seeds {
			a, b, c := score(x.ToDense(), s)
			nmi, acc, nn = nmi+a, acc+b, nn+c
		}
		k := float64(len(seeds))
		t.Logf("%-28s %6.3f %6.3f %6.3f", "TF-IDF rows (peer)", nmi/k, acc/k, nn/k)
	}
	for _, alpha := range alphas {
		for _, loss := range []model.LossKind{model.LossFrobenius, model.LossKL} {
			var nmi, acc, nn, nmi1, acc1, nn1 float64
			var iters int
			start := time.Now()
			for _, s := range seeds {
				g := &model.GNMF{Common: model.Common{Rank: classes, MaxIter: maxIter, Src: rand.NewPCG(s, s), Loss: loss}, Alpha: alpha, Graph: graph.KNN{Metric: graph.Cosine}}
				if err := g.Fit(model.SparseRows(x), nil); err != nil {
					t.Fatalf("α=%g %v: %v", alpha, loss, err)
				}
				iters += g.Result().Iters
				a, b, c := score(g.Codes(), s)
				nmi, acc, nn = nmi+a, acc+b, nn+c
				a, b, c = score(l1Codes(g.Basis(), g.Codes()), s)
				nmi1, acc1, nn1 = nmi1+a, acc1+b, nn1+c
			}
			name := fmt.Sprintf("GNMF α=%g %v", alpha, loss)
			if alpha < 0 {
				name = fmt.Sprintf("NMF %v", loss)
			}
			k := float64(len(seeds))
			t.Logf("%-28s %6.3f %6.3f %6.3f  %6.3f %6.3f %6.3f  (%d iterations, %v for %d fits)", name, nmi/k, acc/k, nn/k, nmi1/k, acc1/k, nn1/k, iters, time.Since(start).Round(time.Millisecond), len(seeds))
		}
	}
}

// l1Codes returns V with column k scaled by Σ_i u_ik: the codes of the same
// UVᵀ with U's columns summing to one.
func l1Codes(u, v *mat.Dense) *mat.Dense {
	out := mat.DenseCopyOf(v)
	_, k := u.Dims()
	for c := 0; c < k; c++ {
		s := mat.Sum(u.ColView(c))
		r, _ := out.Dims()
		for i := 0; i < r; i++ {
			out.Set(i, c, out.At(i, c)*s)
		}
	}
	return out
}

// pickPerClass returns l indices of each class of y, drawn with seed.
func pickPerClass(y []int, classes, l int, seed uint64) []int {
	rnd := rand.New(rand.NewPCG(seed, 7))
	by := make([][]int, classes)
	for i, c := range y {
		by[c] = append(by[c], i)
	}
	var out []int
	for _, ids := range by {
		rnd.Shuffle(len(ids), func(a, b int) { ids[a], ids[b] = ids[b], ids[a] })
		out = append(out, ids[:min(l, len(ids))]...)
	}
	slices.Sort(out)
	return out
}

// cosine1NN returns the accuracy of 1-NN (largest dot product of unit rows
// u) on the rows not in labeled, against the labeled rows.
func cosine1NN(u *mat.Dense, y, labeled []int) float64 {
	n, _ := u.Dims()
	right, total := 0, 0
	for i := 0; i < n; i++ {
		if _, ok := slices.BinarySearch(labeled, i); ok {
			continue
		}
		best, bj := math.Inf(-1), -1
		for _, j := range labeled {
			if d := mat.Dot(u.RowView(i), u.RowView(j)); d > best {
				best, bj = d, j
			}
		}
		total++
		if y[bj] == y[i] {
			right++
		}
	}
	return float64(right) / float64(total)
}

// unitRowsOf returns a copy of v with unit-norm rows (zero rows stay zero).
func unitRowsOf(v *mat.Dense) *mat.Dense {
	out := mat.DenseCopyOf(v)
	r, _ := out.Dims()
	for i := range r {
		row := out.RawRowView(i)
		var s float64
		for _, e := range row {
			s += e * e
		}
		if s > 0 {
			s = 1 / math.Sqrt(s)
			for j := range row {
				row[j] *= s
			}
		}
	}
	return out
}

// readBrownGolden reads the 45 documents of stages/testdata (three per
// genre); the genre is the second letter of the file name (ca01 → a).
func readBrownGolden(tb testing.TB) (docs, genres []string) {
	f, err := os.Open(filepath.Join("..", "stages", "testdata", "brown_texts.json.gz"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	var in struct {
		Names []string `json:"names"`
		Texts []string `json:"texts"`
	}
	if err := json.NewDecoder(zr).Decode(&in); err != nil {
		tb.Fatal(err)
	}
	for i, n := range in.Names {
		genres = append(genres, n[1:2])
		docs = append(docs, in.Texts[i])
	}
	return docs, genres
}

// TestBrownDPCA scores DPCA's codes (rank 15, the Gram form: 500
// documents, 16,113 terms) on the protocol of TestBrownLoss, DPCA being
// given the labels of the L documents per genre that 1-NN uses. It needs
// the corpus:
//
//	NMFSTREAM_BROWN=$HOME/.cache/nmfstream-data/brown go test ./model -run TestBrownDPCA -v
func TestBrownDPCA(t *testing.T) {
	dir := os.Getenv("NMFSTREAM_BROWN")
	if dir == "" {
		t.Skip("set NMFSTREAM_BROWN to the Brown corpus directory")
	}
	docs, genres, err := datasets.Brown(dir)
	if err != nil {
		t.Fatal(err)
	}
	var enc metrics.LabelEncoder
	enc.Fit(genres)
	y, err := enc.Encode(nil, genres)
	if err != nil {
		t.Fatal(err)
	}
	tf := &stages.TFIDF{StopWords: stages.EnglishStopWords(), MinDF: stages.DocFreq{Count: 3}, MaxDF: stages.DocFreq{Fraction: 0.5}, SublinearTF: true}
	x, err := tf.FitTransform(docs)
	if err != nil {
		t.Fatal(err)
	}
	classes := len(enc.Classes())
	var nmi, acc, nn float64
	seeds := []uint64{1, 2, 3}
	for _, s := range seeds {
		labeled := pickPerClass(y, classes, 5, s)
		labels := make([]int, len(y))
		for i := range labels {
			labels[i] = -1
		}
		for _, i := range labeled {
			labels[i] = y[i]
		}
		m := &model.DPCA{Rank: classes}
		start := time.Now()
		if err := m.Fit(model.SparseRows(x), labels); err != nil {
			t.Fatal(err)
		}
		t.Logf("seed %d: DPCA %v form, %v", s, m.FittedForm(), time.Since(start).Round(time.Millisecond))
		u := unitRowsOf(m.Codes())
		km := classify.KMeans{K: classes, Src: rand.NewPCG(1, 31)}
		if err := km.Fit(u); err != nil {
			t.Fatal(err)
		}
		pred := km.LabelsTo(nil)
		nmi += metrics.NMI(pred, y)
		acc += metrics.ClusteringAccuracy(pred, y)
		nn += cosine1NN(u, y, labeled)
	}
	k := float64(len(seeds))
	t.Logf("%-28s %6.3f %6.3f %6.3f", "DPCA (5 labels per genre)", nmi/k, acc/k, nn/k)
}
