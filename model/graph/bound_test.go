package graph

import (
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/pipeline"
)

// mnistImages returns the first n MNIST training images as rows of pixels
// in [0, 1], or skips t when scripts/fetch-data.sh has not fetched them.
func mnistImages(t testing.TB, n int) *mat.Dense {
	t.Helper()
	home, _ := os.UserHomeDir()
	f, err := os.Open(filepath.Join(home, ".cache", "nmfstream-data", "mnist", "train-images-idx3-ubyte"))
	if err != nil {
		t.Skipf("MNIST not fetched (scripts/fetch-data.sh): %v", err)
	}
	defer f.Close()
	var hdr [4]uint32
	if err := binary.Read(f, binary.BigEndian, &hdr); err != nil {
		t.Fatal(err)
	}
	if hdr[0] != 0x803 || int(hdr[1]) < n {
		t.Fatalf("MNIST images: header %x", hdr)
	}
	d := int(hdr[2] * hdr[3])
	buf := make([]byte, n*d)
	if _, err := io.ReadFull(f, buf); err != nil {
		t.Fatal(err)
	}
	x := mat.NewDense(n, d, nil)
	raw := x.RawMatrix().Data
	for i, b := range buf {
		raw[i] = float64(b) / 255
	}
	return x
}

// streamWindow inserts the rows of x in batches of step into a graph with
// cfg (a Window), and returns it with the slots of the rows it holds at
// the end, in input order.
func streamWindow(t *testing.T, cfg KNN, x *mat.Dense, step int, split bool) (*Graph, []int) {
	t.Helper()
	n, d := x.Dims()
	g, err := cfg.NewDense(d)
	if err != nil {
		t.Fatal(err)
	}
	if split {
		g.SetSplit(pipeline.Split(2))
	}
	slot := make([]int, n)
	for i0 := 0; i0 < n; i0 += step {
		i1 := min(i0+step, n)
		ch, err := g.InsertDense(x.Slice(i0, i1, 0, d))
		if err != nil {
			t.Fatal(err)
		}
		copy(slot[i0:i1], ch.Added)
	}
	return g, slot[n-g.Len():]
}

// TestBoundedSearchExact checks on real data that the bounded search, which
// skips most pairs of the window, leaves every list as a batch build of the
// window's rows (the full scan) makes it: same neighbours, same distances
// bit for bit. It also checks that the bound was used and skipped most
// pairs, and reports the share it computed.
func TestBoundedSearchExact(t *testing.T) {
	defer func(v int) { boundMinRefs = v }(boundMinRefs)
	cases := []struct {
		name         string
		x            func(t *testing.T) *mat.Dense
		window, step int
		maxShare     float64
	}{
		{"digits", func(*testing.T) *mat.Dense { x, _ := datasets.Digits(); return x }, 600, 50, 0.7},
		{"mnist", func(t *testing.T) *mat.Dense { return mnistImages(t, 6000) }, 4000, 100, 0.5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := c.x(t)
			boundMinRefs = c.window / 2
			for _, split := range []bool{false, true} {
				cfg := KNN{K: 10, Window: c.window}
				g, ids := streamWindow(t, cfg, x, c.step, split)
				b := &g.st.bd
				checked, dotted := b.checked.Load(), b.dotted.Load()
				if b.m == 0 || checked == 0 {
					t.Fatalf("split %v: the bound was not used", split)
				}
				share := float64(dotted) / float64(checked)
				t.Logf("split %v: %d directions, inner products for %.3f of %d pairs since the last basis", split, b.m, share, checked)
				if share > c.maxShare {
					t.Errorf("split %v: the bound kept %.3f of the pairs, want at most %.2f", split, share, c.maxShare)
				}
				n, d := x.Dims()
				ref, err := KNN{K: 10, Slack: 10}.Dense(x.Slice(n-len(ids), n, 0, d))
				if err != nil {
					t.Fatal(err)
				}
				sameLists(t, g, ref, ids)
			}
		})
	}
}
