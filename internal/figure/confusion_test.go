package figure

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// TestConfusion: the cells are shaded by their share of the row (a
// perfect classifier's matrix has full-shade cells and an all-wrong one
// as many, while a matrix of one class has one full row), and bad counts
// are refused.
func TestConfusion(t *testing.T) {
	dir := t.TempDir()
	full := shade(1)
	fullPixels := func(name string, counts [][]int, names []string) int {
		path := filepath.Join(dir, name)
		if err := Confusion(path, "confusion", names, counts); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		img, err := png.Decode(f)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		b := img.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				r, g, bl, _ := img.At(x, y).RGBA()
				if uint8(r>>8) == full.R && uint8(g>>8) == full.G && uint8(bl>>8) == full.B {
					n++
				}
			}
		}
		return n
	}
	names := []string{"zero", "one", "two", "a very long class name indeed"}
	diag := fullPixels("diag.png", [][]int{{5, 0, 0, 0}, {0, 7, 0, 0}, {0, 0, 9, 0}, {0, 0, 0, 1}}, names)
	wrong := fullPixels("wrong.png", [][]int{{0, 5, 0, 0}, {0, 0, 7, 0}, {0, 0, 0, 9}, {1, 0, 0, 0}}, names)
	half := fullPixels("half.png", [][]int{{5, 5, 0, 0}, {0, 7, 7, 0}, {0, 0, 9, 9}, {1, 0, 0, 1}}, names)
	if diag == 0 || wrong < diag*9/10 || wrong > diag*11/10 {
		t.Errorf("full-shade pixels: %d on the diagonal, %d all wrong: want about equal and positive", diag, wrong)
	}
	if half != 0 {
		t.Errorf("rows split in halves drew %d full-shade pixels, want none", half)
	}
	for _, bad := range [][][]int{{{1, 0}}, {{1, 0, 0, 0}, {0, 1, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}, {{0, 0, 0, -1}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}}, {{0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}}} {
		if err := Confusion(filepath.Join(dir, "bad.png"), "bad", names, bad); err == nil {
			t.Errorf("counts %v accepted", bad)
		}
	}
}
