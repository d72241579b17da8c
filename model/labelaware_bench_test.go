package model

import (
	"testing"

	"gonum.org/v1/gonum/mat"
)

// benchDigits returns the first 1200 digits (1200×64) with 10 labels per
// class among them (the first ten of each class), the rest unlabeled.
func benchDigits() (Data, []int) {
	task := newDigitsTask(10, 1, false)
	x := mat.DenseCopyOf(task.train.Slice(0, 1197, 0, 64))
	return DenseRows(x), task.trainY[:1197]
}

func benchMethod(b *testing.B, m Method) {
	x, y := benchDigits()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := m.Fit(x, y); err != nil {
			b.Fatal(err)
		}
	}
}

// The benchmarks fit the 1197-sample digits pool (≈1200×64), K = 40, 100
// iterations without the tolerance test, so that they time the same work.
var benchCommon = Common{Rank: 40, MaxIter: 100, Tol: -1}

func BenchmarkGNMF1200x64(b *testing.B)   { benchMethod(b, &GNMF{Common: benchCommon}) }
func BenchmarkDGNMF1200x64(b *testing.B)  { benchMethod(b, &DGNMF{Common: benchCommon}) }
func BenchmarkSSKNMF1200x64(b *testing.B) { benchMethod(b, &SSKNMF{Common: benchCommon}) }
func BenchmarkN2S2L1200x64(b *testing.B)  { benchMethod(b, &N2S2L{Common: benchCommon}) }
func BenchmarkNGE1200x64(b *testing.B)    { benchMethod(b, &NGE{Common: benchCommon}) }
func BenchmarkDPCA1200x64(b *testing.B)   { benchMethod(b, &DPCA{Rank: 40}) }
