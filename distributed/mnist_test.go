//go:build nats

package distributed

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/testenv"
	"github.com/nmfstream/nmfstream/model"
)

// mnistDir returns $NMFSTREAM_DATA/mnist (default
// ~/.cache/nmfstream-data/mnist; scripts/fetch-data.sh fills it).
func mnistDir() string { return filepath.Join(testenv.DataDir(), "mnist") }

// readIDX reads the MNIST test set: images (pixel/255) and labels.
func readIDX(dir string) ([][]float64, []int, error) {
	read := func(name string, magic uint32, dims int) ([]byte, []uint32, error) {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			return nil, nil, err
		}
		defer f.Close()
		h := make([]uint32, 1+dims)
		if err := binary.Read(f, binary.BigEndian, h); err != nil {
			return nil, nil, err
		}
		if h[0] != magic {
			return nil, nil, fmt.Errorf("%s: magic %#x, want %#x", name, h[0], magic)
		}
		b, err := io.ReadAll(f)
		return b, h[1:], err
	}
	img, dims, err := read("t10k-images-idx3-ubyte", 0x803, 3)
	if err != nil {
		return nil, nil, err
	}
	lab, _, err := read("t10k-labels-idx1-ubyte", 0x801, 1)
	if err != nil {
		return nil, nil, err
	}
	n, d := int(dims[0]), int(dims[1]*dims[2])
	if len(img) < n*d || len(lab) < n {
		return nil, nil, fmt.Errorf("%s: truncated IDX files", dir)
	}
	x := make([][]float64, n)
	y := make([]int, n)
	for i := range n {
		x[i] = make([]float64, d)
		for j := range d {
			x[i][j] = float64(img[i*d+j]) / 255
		}
		y[i] = int(lab[i])
	}
	return x, y, nil
}

// codeAccuracy codes train and test on u and returns the accuracy of the
// 1-NN (cosine) of the test codes among the train codes.
func codeAccuracy(t *testing.T, u *mat.Dense, train, test *mat.Dense, ytr, yte []int) float64 {
	t.Helper()
	code := func(x *mat.Dense) *mat.Dense {
		n, _ := x.Dims()
		_, k := u.Dims()
		v := mat.NewDense(n, k, nil)
		for i := range v.RawMatrix().Data {
			v.RawMatrix().Data[i] = 1
		}
		if err := model.SweepRows(v, model.DenseRows(x), u, 30); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			r := v.RawRowView(i)
			if nrm := mat.Norm(mat.NewVecDense(len(r), r), 2); nrm > 0 {
				for j := range r {
					r[j] /= nrm
				}
			}
		}
		return v
	}
	vtr, vte := code(train), code(test)
	var sim mat.Dense
	sim.Mul(vte, vtr.T())
	correct := 0
	for i := range yte {
		row := sim.RawRowView(i)
		best, bj := math.Inf(-1), -1
		for j, s := range row {
			if s > best {
				best, bj = s, j
			}
		}
		if ytr[bj] == yte[i] {
			correct++
		}
	}
	return float64(correct) / float64(len(yte))
}

// TestMNISTStalenessAccuracy compares, on the MNIST test set (7,000
// samples learned, 3,000 classified by the 1-NN of their codes), the
// basis learned by 4 partitions with staleness 2 to the single-machine
// multiplicative updates run for as many versions from the same start:
// the accuracies must agree within 0.5 point.
func TestMNISTStalenessAccuracy(t *testing.T) {
	testenv.SkipUnlessLong(t, "MNIST, about a minute")
	xs, ys, err := readIDX(mnistDir())
	if err != nil {
		t.Skipf("MNIST not found (scripts/fetch-data.sh): %v", err)
	}
	const ntr, k, rounds = 7000, 20, 60
	d := len(xs[0])
	samples := make([]Sample, ntr)
	train := mat.NewDense(ntr, d, nil)
	for i := range ntr {
		samples[i] = Sample{ID: uint64(i + 1), Label: ys[i], Dim: d, Dense: xs[i]}
		train.SetRow(i, xs[i])
	}
	test := mat.NewDense(len(xs)-ntr, d, nil)
	for i := ntr; i < len(xs); i++ {
		test.SetRow(i-ntr, xs[i])
	}

	nc, url := startServer(t)
	cfg := Config{Partitions: 4, Rank: k, Staleness: 2, Rounds: rounds, Seed: 1, PinnedTTL: time.Second}
	part := publishAll(t, nc, cfg, samples)
	start := time.Now()
	_, _, stop := runWorkers(t, url, cfg, 2)
	st := waitState(t, nc, cfg, 10*time.Minute, func(s State) bool { return s.Version == rounds })
	distSeconds := time.Since(start).Seconds()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if st.Samples != ntr {
		t.Fatalf("%d samples applied, want %d", st.Samples, ntr)
	}

	start = time.Now()
	u := singleMachine(t, train, part, cfg, rounds)
	singleSeconds := time.Since(start).Seconds()

	ytr, yte := ys[:ntr], ys[ntr:]
	accDist := codeAccuracy(t, st.U, train, test, ytr, yte)
	accSingle := codeAccuracy(t, u, train, test, ytr, yte)
	t.Logf("MNIST t10k, %d learned, K = %d, %d versions: staleness 2 on 4 partitions %.4f (%.1f s), single machine %.4f (%.1f s)",
		ntr, k, rounds, accDist, distSeconds, accSingle, singleSeconds)
	if math.Abs(accDist-accSingle) > 0.005 {
		t.Errorf("accuracy %.4f with staleness 2, %.4f on one machine: more than 0.5 point apart", accDist, accSingle)
	}
}
