package sources

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/gonum/mat"
)

// ReadMNIST reads the first n images of the MNIST training set in dir (the
// files train-images-idx3-ubyte and train-labels-idx1-ubyte, as
// scripts/fetch-data.sh leaves them), all 60,000 if n ≤ 0, into an n×784
// matrix of pixels in [0, 1] and their digits. Fewer images than n in the
// files is an error.
func ReadMNIST(dir string, n int) (*mat.Dense, []int, error) {
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
	src := NewIDX(img, lab)
	defer src.Close()
	var rows []float64
	var y []int
	for (n <= 0 || len(y) < n) && src.Next() {
		b := src.Batch()
		for i := 0; i < b.Len() && (n <= 0 || len(y) < n); i++ {
			c, err := strconv.Atoi(b.Labels[i])
			if err != nil {
				return nil, nil, fmt.Errorf("%s: record %d: label %q: %w", dir, b.Offsets[i], b.Labels[i], err)
			}
			rows = append(rows, b.Dense.RawRowView(i)...)
			y = append(y, c)
		}
	}
	if err := src.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", dir, err)
	}
	if len(y) == 0 || (n > 0 && len(y) < n) {
		return nil, nil, fmt.Errorf("%s: %d images, %d asked for", dir, len(y), n)
	}
	return mat.NewDense(len(y), len(rows)/len(y), rows), y, nil
}
