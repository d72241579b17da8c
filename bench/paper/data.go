package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/model/metrics"
	"github.com/nmfstream/nmfstream/sources"
)

// dataset is an image data set held in memory, one sample per row.
type dataset struct {
	name          string
	x             *mat.Dense
	y             []int
	width, height int
	// maxPixel is the largest pixel value: occlusion patches take it.
	maxPixel float64
	// nystrom is the landmark count of the kernel methods on it.
	nystrom int
	splits  map[int]*split
}

// split returns the §7 split with l labels per class, drawing it once.
func (d *dataset) split(l int, seed uint64) (*split, error) {
	if s, ok := d.splits[l]; ok {
		return s, nil
	}
	s, err := makeSplit(d.x, d.y, testFrac, l, seed)
	if err != nil {
		return nil, fmt.Errorf("%s, %d labels per class: %w", d.name, l, err)
	}
	d.splits[l] = s
	return s, nil
}

// loadData loads the digits, and MNIST and notes Brown when the grid asks
// for them and they are present.
func (r *runner) loadData() error {
	x, y := datasets.Digits()
	if n := r.g.digitsN; n > 0 && n < len(y) {
		rows := rand.New(rand.NewPCG(r.seed, 7)).Perm(len(y))[:n]
		sort.Ints(rows)
		x, y = metrics.TakeRows(x, rows), metrics.Take(y, rows)
	}
	r.data["digits"] = &dataset{name: "digits", x: x, y: y, width: 8, height: 8, maxPixel: 16,
		nystrom: r.g.digitsNystrom, splits: map[int]*split{}}

	if r.g.mnist > 0 {
		dir := filepath.Join(r.cfg.Data, "mnist")
		switch {
		case r.cfg.Data == "":
			r.note("MNIST skipped: no --data directory (fetch it with `bash scripts/fetch-data.sh DIR` and pass --data DIR).")
		case !exists(filepath.Join(dir, "train-images-idx3-ubyte")):
			r.note("MNIST skipped: %s has no train-images-idx3-ubyte (run `bash scripts/fetch-data.sh %s`).", dir, r.cfg.Data)
		default:
			mx, my, err := readMNIST(dir, r.g.mnist, r.seed)
			if err != nil {
				return fmt.Errorf("report: mnist: %w", err)
			}
			// α scales with ‖X‖² (model.DefaultGNMFAlpha): rescale MNIST so
			// that its mean squared sample norm is that of the digits, and
			// the defaults tuned on the digits keep their meaning.
			s := math.Sqrt(meanSqNorm(x) / meanSqNorm(mx))
			mx.Scale(s, mx)
			r.data["mnist"] = &dataset{name: "mnist", x: mx, y: my, width: 28, height: 28, maxPixel: s,
				nystrom: r.g.mnistNystrom, splits: map[int]*split{}}
			r.rep.Meta.MNIST = true
			r.rep.Meta.MNISTSample = len(my)
			r.note("MNIST: %d samples drawn (seed %d) from the 60,000 training images, pixels scaled by %.3g so that the mean ‖x‖² equals the digits', on which the default hyperparameters were tuned; the flexible-kernel method uses %d Nyström landmarks and runs at L = %d only; multik is not run on MNIST (its ten N×N kernels, or their Nyström features, take far longer than the other methods together).",
				len(my), r.seed, s, r.g.mnistNystrom, r.g.labels)
		}
	}
	if r.g.brown {
		dir := filepath.Join(r.cfg.Data, "brown")
		if r.cfg.Data == "" || !exists(filepath.Join(dir, "cats.txt")) {
			r.note("Brown corpus skipped: no %s/cats.txt (run `bash scripts/fetch-data.sh DIR` and pass --data DIR).", dir)
		} else {
			r.rep.Meta.Brown = true
		}
	}
	return nil
}

// readMNIST reads n samples, drawn uniformly without replacement with
// seed, from the MNIST training IDX files in dir.
func readMNIST(dir string, n int, seed uint64) (*mat.Dense, []int, error) {
	img, err := os.Open(filepath.Join(dir, "train-images-idx3-ubyte"))
	if err != nil {
		return nil, nil, err
	}
	defer img.Close()
	lab, err := os.Open(filepath.Join(dir, "train-labels-idx1-ubyte"))
	if err != nil {
		return nil, nil, err
	}
	defer lab.Close()
	src := sources.NewIDX(img, lab)
	defer src.Close()
	const total = 60000
	n = min(n, total)
	keep := make(map[int]int, n) // record → output row
	rows := rand.New(rand.NewPCG(seed, 11)).Perm(total)[:n]
	sort.Ints(rows)
	for out, rec := range rows {
		keep[rec] = out
	}
	x := mat.NewDense(n, 784, nil)
	y := make([]int, n)
	got := 0
	for src.Next() {
		b := src.Batch()
		for i := 0; i < b.Len(); i++ {
			out, ok := keep[int(b.Offsets[i])]
			if !ok {
				continue
			}
			x.SetRow(out, b.Dense.RawRowView(i))
			c, err := strconv.Atoi(b.Labels[i])
			if err != nil {
				return nil, nil, fmt.Errorf("label %q: %w", b.Labels[i], err)
			}
			y[out] = c
			got++
		}
	}
	if err := src.Err(); err != nil {
		return nil, nil, err
	}
	if got != n {
		return nil, nil, fmt.Errorf("read %d of the %d drawn records", got, n)
	}
	return x, y, nil
}

// meanSqNorm returns the mean of ‖x_i‖² over the rows of x.
func meanSqNorm(x *mat.Dense) float64 {
	n, _ := x.Dims()
	var s float64
	for i := range n {
		for _, v := range x.RawRowView(i) {
			s += v * v
		}
	}
	return s / float64(n)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
