package distributed

import (
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
)

// sparseSamples returns n sparse samples of dimension d, each with nnz
// entries drawn from the features of one of c topics (d/c features each),
// IDs from 1, labels the topic.
func sparseSamples(n, d, c, nnz int, seed uint64) []Sample {
	rnd := rand.New(rand.NewPCG(seed, 11))
	out := make([]Sample, n)
	for i := range out {
		topic := i % c
		set := map[int]float64{}
		for len(set) < nnz {
			set[topic*(d/c)+rnd.IntN(d/c)] = 0.5 + rnd.Float64()
		}
		s := Sample{ID: uint64(i + 1), Label: topic, Dim: d}
		for j := range set {
			s.Index = append(s.Index, j)
		}
		slices.Sort(s.Index)
		for _, j := range s.Index {
			s.Value = append(s.Value, set[j])
		}
		out[i] = s
	}
	return out
}

// TestSparseStatsEqualAddStats checks the owner's accumulation of ΔB and
// ΔA on sparse samples against model.AddStats on the same samples made
// dense: the same values to rounding, and exactly the rows of the features
// that the samples touch sent, in increasing order.
func TestSparseStatsEqualAddStats(t *testing.T) {
	const n, d, k = 40, 300, 4
	samples := sparseSamples(n, d, 3, 6, 1)
	rnd := rand.New(rand.NewPCG(1, 1))
	code := func(m int) *mat.Dense {
		v := mat.NewDense(m, k, nil)
		for i := range v.RawMatrix().Data {
			v.RawMatrix().Data[i] = rnd.Float64()
		}
		return v
	}
	ptrs := func(s []Sample) []*Sample {
		out := make([]*Sample, len(s))
		for i := range s {
			out[i] = &s[i]
		}
		return out
	}
	dense := func(s []Sample) []*Sample {
		out := make([]*Sample, len(s))
		for i := range s {
			out[i] = &Sample{ID: s[i].ID, Dim: d, Dense: denseOf(&s[i])}
		}
		return out
	}
	// A round: rows leave (−), new rows come (+), older rows swept (new +, old −).
	v1, v2, v3, v4 := code(10), code(15), code(15), code(10)
	blocks := []struct {
		s    []Sample
		v    *mat.Dense
		sign float64
	}{{samples[:10], v1, -1}, {samples[25:], v2, 1}, {samples[10:25], v3, 1}, {samples[10:20], v4, -1}}
	acc := stats{k: k}
	var wantB, wantA mat.Dense
	touched := map[int]bool{}
	for _, b := range blocks {
		acc.add(ptrs(b.s), b.v, b.sign)
		model.AddStats(&wantB, &wantA, blockData(dense(b.s)), b.v, b.sign)
		for _, s := range b.s {
			for _, j := range s.Index {
				touched[j] = true
			}
		}
	}
	var dl delta
	acc.to(&dl)
	if !slices.IsSorted(dl.BRows) {
		t.Errorf("rows of ΔB not in increasing order: %v", dl.BRows)
	}
	if len(dl.BRows) != len(touched) {
		t.Errorf("ΔB sends %d rows, the samples touch %d features", len(dl.BRows), len(touched))
	}
	gotB := mat.NewDense(d, k, nil)
	for i, r := range dl.BRows {
		if !touched[r] {
			t.Errorf("ΔB sends row %d, a feature no sample has", r)
		}
		gotB.SetRow(r, dl.B[i*k:(i+1)*k])
	}
	// 1e-13: a few dozen products of numbers of order one, summed in
	// another order than AddStats'.
	if !mat.EqualApprox(gotB, &wantB, 1e-13) {
		t.Errorf("ΔB differs from AddStats':\n%v\n%v", mat.Formatted(gotB), mat.Formatted(&wantB))
	}
	if !mat.EqualApprox(mat.NewDense(k, k, dl.A), &wantA, 1e-13) {
		t.Errorf("ΔA = %v, AddStats gives %v", dl.A, wantA.RawMatrix().Data)
	}

	// A round of dense samples goes through AddStats itself, and sends
	// the nonzero rows only.
	accD := stats{k: k}
	accD.add(dense(samples[:10]), v1, 1)
	var dd delta
	accD.to(&dd)
	var b0, a0 mat.Dense
	model.AddStats(&b0, &a0, blockData(dense(samples[:10])), v1, 1)
	for i, r := range dd.BRows {
		if !slices.Equal(dd.B[i*k:(i+1)*k], b0.RawRowView(r)) {
			t.Errorf("dense ΔB row %d = %v, AddStats %v", r, dd.B[i*k:(i+1)*k], b0.RawRowView(r))
		}
	}
	nz := 0
	for r := range d {
		if slices.ContainsFunc(b0.RawRowView(r), func(x float64) bool { return x != 0 }) {
			nz++
		}
	}
	if len(dd.BRows) != nz {
		t.Errorf("dense ΔB sends %d rows, %d are nonzero", len(dd.BRows), nz)
	}
}
