package sources

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadMNIST(t *testing.T) {
	dir := t.TempDir()
	// Three 2×2 unsigned-byte images and their labels, in IDX.
	images := []byte{0, 0, 0x08, 3, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 2,
		0, 255, 51, 102,
		255, 0, 0, 0,
		1, 2, 3, 4}
	labels := []byte{0, 0, 0x08, 1, 0, 0, 0, 3, 7, 0, 9}
	if err := os.WriteFile(filepath.Join(dir, "train-images-idx3-ubyte"), images, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "train-labels-idx1-ubyte"), labels, 0o644); err != nil {
		t.Fatal(err)
	}
	x, y, err := ReadMNIST(dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	if r, c := x.Dims(); r != 2 || c != 4 || len(y) != 2 || y[0] != 7 || y[1] != 0 {
		t.Fatalf("got %d×%d, labels %v; want 2×4, [7 0]", r, c, y)
	}
	if x.At(0, 1) != 1 || x.At(0, 2) != 0.2 || x.At(1, 0) != 1 {
		t.Errorf("pixels not scaled by 1/255: %v", x.RawRowView(0))
	}
	if x, y, err = ReadMNIST(dir, 0); err != nil || len(y) != 3 || y[2] != 9 {
		t.Errorf("all images: %v, labels %v", err, y)
	}
	if _, _, err := ReadMNIST(dir, 5); err == nil || !strings.Contains(err.Error(), "3 images, 5 asked for") {
		t.Errorf("more asked than held: error %v", err)
	}
}
