package main

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"gonum.org/v1/gonum/mat"
)

// images returns n random 784-pixel "images" in [0, 1) and their digits.
func images(n int) (*mat.Dense, []int) {
	rng := rand.New(rand.NewPCG(7, 7))
	x := mat.NewDense(n, 784, nil)
	y := make([]int, n)
	for i := range n {
		for p := range 784 {
			x.Set(i, p, rng.Float64())
		}
		y[i] = rng.IntN(10)
	}
	return x, y
}

// TestWriteStream reads back the Arrow stream the children are fed: the
// ids are 0…n−1 in order (so unique), the first half's rows are the images,
// the second half's the images shifted right by one pixel with a zero
// first column, and exactly the rows labeled() marks carry their image's
// digit, the others none.
func TestWriteStream(t *testing.T) {
	const rows = 1500 // two batches of 1,000 and a short one
	x, y := images(rows)
	n := 2 * rows
	lab := labeled(n, 3)
	var buf bytes.Buffer
	var marks []int
	if err := writeStream(&buf, x, y, lab, n, func(written int) error {
		marks = append(marks, written)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(marks, []int{1000, 2000, 3000}) {
		t.Fatalf("marks after %v records, want after each batch of 1,000", marks)
	}
	r, err := ipc.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	i, labels := 0, 0
	for r.Next() {
		rec := r.Record()
		xs := rec.Column(0).(*array.FixedSizeList)
		vs := xs.ListValues().(*array.Float32).Float32Values()
		ls, ids := rec.Column(1).(*array.Int64), rec.Column(2).(*array.Int64)
		for j := range int(rec.NumRows()) {
			if got := ids.Value(j); got != int64(i) {
				t.Fatalf("row %d: id %d", i, got)
			}
			row := vs[j*784 : (j+1)*784]
			src := x.RawRowView(i % rows)
			for p := range 784 {
				want := float32(src[p])
				if i >= rows {
					want = 0
					if p%28 != 0 {
						want = float32(src[p-1])
					}
				}
				if row[p] != want {
					t.Fatalf("row %d pixel %d: %v, want %v", i, p, row[p], want)
				}
			}
			if ls.IsNull(j) == lab[i] {
				t.Fatalf("row %d: label null %v, labeled %v", i, ls.IsNull(j), lab[i])
			}
			if lab[i] {
				labels++
				if ls.Value(j) != int64(y[i%rows]) {
					t.Fatalf("row %d: label %d, want %d", i, ls.Value(j), y[i%rows])
				}
			}
			i++
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if i != n || labels != n/10 {
		t.Fatalf("%d rows, %d labeled; want %d and %d", i, labels, n, n/10)
	}
}

// TestLabeled: a tenth exactly, the same for a seed, another for another
// seed, and spread over both halves of the stream.
func TestLabeled(t *testing.T) {
	const n = 120000
	a, b, c := labeled(n, 1), labeled(n, 1), labeled(n, 2)
	count, firstHalf, same, differ := 0, 0, true, false
	for i := range n {
		if a[i] {
			count++
			if i < n/2 {
				firstHalf++
			}
		}
		same = same && a[i] == b[i]
		differ = differ || a[i] != c[i]
	}
	if count != n/10 || !same || !differ {
		t.Fatalf("%d labeled (want %d), same seed same marks %v, other seed other marks %v", count, n/10, same, differ)
	}
	if firstHalf < n/20-600 || firstHalf > n/20+600 {
		t.Fatalf("%d of the first half labeled, want about %d", firstHalf, n/20)
	}
}

// TestSteadyRange: N2 = N1 + b, N1 ≥ W + a, and no refit of the search
// basis (500, 2,000, 8,000, …) in (N1 − a/2, N2], so neither run pair
// straddles one; the default windows' ranges as the package comment gives.
func TestSteadyRange(t *testing.T) {
	for _, w := range []int{1, 499, 1000, 1500, 3000, 6000, 10000, 30000, 31000, 100000, 126000} {
		for _, withBasis := range []bool{false, true} {
			n1, n2 := steadyRange(w, 2000, 16000, withBasis)
			if n2 != n1+16000 || n1 < w+2000 {
				t.Fatalf("W %d: %d → %d", w, n1, n2)
			}
			for r := refitFirst; withBasis && r <= n2; r *= 4 {
				if r > n1-1000 {
					t.Fatalf("W %d: %d → %d holds the refit at %d", w, n1, n2, r)
				}
			}
		}
	}
	for w, want := range map[int][2]int{1000: {10000, 26000}, 10000: {12000, 28000}, 30000: {34000, 50000}, 100000: {102000, 118000}} {
		if n1, n2 := steadyRange(w, 2000, 16000, true); n1 != want[0] || n2 != want[1] {
			t.Fatalf("W %d: %d → %d, want %d → %d", w, n1, n2, want[0], want[1])
		}
	}
	if n1, _ := steadyRange(1000, 2000, 16000, false); n1 != 3000 {
		t.Fatalf("pixels, W 1000: N1 %d, want 3000", n1)
	}
}

// TestCPUSeconds reads this process's CPU time, which grows as it works.
func TestCPUSeconds(t *testing.T) {
	a, err := cpuSeconds("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	x := 0.0
	for i := range 300_000_000 {
		x += float64(i & 7)
	}
	b, err := cpuSeconds("/proc/self/stat")
	if err != nil || x == 0 || b <= a || a < 0 {
		t.Fatalf("%v then %v CPU seconds (%v)", a, b, err)
	}
}
