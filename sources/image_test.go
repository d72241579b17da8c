package sources

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math"
	"slices"
	"strings"
	"testing"

	"golang.org/x/image/bmp"
)

// encodePGM writes a binary (P5) 8-bit PGM.
func encodePGM(w, h int, f func(x, y int) uint8) []byte {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "P5\n# a comment\n%d %d\n255\n", w, h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			buf.WriteByte(f(x, y))
		}
	}
	return buf.Bytes()
}

// grayPaletted converts g to a paletted image with the 256 gray levels, so
// that a GIF of it is lossless.
func grayPaletted(g *image.Gray) *image.Paletted {
	pal := make(color.Palette, 256)
	for i := range pal {
		pal[i] = color.Gray{Y: uint8(i)}
	}
	p := image.NewPaletted(g.Bounds(), pal)
	copy(p.Pix, g.Pix)
	return p
}

func TestDecodeFormatsAgree(t *testing.T) {
	const w, h = 5, 3
	pix := func(x, y int) uint8 { return uint8(50*y + 40*x + 3) }
	rgb := func(x, y int) color.RGBA { return color.RGBA{uint8(20 * x), uint8(70 * y), uint8(10 * (x + y)), 255} }
	grayImg := image.NewGray(image.Rect(0, 0, w, h))
	rgbImg := image.NewRGBA(image.Rect(0, 0, w, h))
	var p2, p3, p6 bytes.Buffer
	fmt.Fprintf(&p2, "P2 %d %d 255\n", w, h)
	fmt.Fprintf(&p3, "P3\n%d %d\n#c\n255\n", w, h)
	fmt.Fprintf(&p6, "P6 %d %d 255\n", w, h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			grayImg.SetGray(x, y, color.Gray{Y: pix(x, y)})
			c := rgb(x, y)
			rgbImg.SetRGBA(x, y, c)
			fmt.Fprintf(&p2, "%d ", pix(x, y))
			fmt.Fprintf(&p3, "%d %d %d\n", c.R, c.G, c.B)
			p6.Write([]byte{c.R, c.G, c.B})
		}
	}
	enc := func(f func(*bytes.Buffer) error) []byte {
		var b bytes.Buffer
		if err := f(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	// 16-bit PGM with maxval 1000: sample v*1000/255 is not exact, so use
	// maxval 65535 and v*257, which is.
	var p5x16 bytes.Buffer
	fmt.Fprintf(&p5x16, "P5 %d %d 65535 ", w, h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			v := uint16(pix(x, y)) * 257
			p5x16.Write([]byte{byte(v >> 8), byte(v)})
		}
	}
	gray := map[string][]byte{
		"png":  enc(func(b *bytes.Buffer) error { return png.Encode(b, grayImg) }),
		"bmp":  enc(func(b *bytes.Buffer) error { return bmp.Encode(b, grayImg) }),
		"gif":  enc(func(b *bytes.Buffer) error { return gif.Encode(b, grayPaletted(grayImg), nil) }),
		"p5":   encodePGM(w, h, pix),
		"p2":   p2.Bytes(),
		"p516": p5x16.Bytes(),
	}
	color := map[string][]byte{
		"png": enc(func(b *bytes.Buffer) error { return png.Encode(b, rgbImg) }),
		"bmp": enc(func(b *bytes.Buffer) error { return bmp.Encode(b, rgbImg) }),
		"p3":  p3.Bytes(),
		"p6":  p6.Bytes(),
	}
	for _, set := range []map[string][]byte{gray, color} {
		ref, err := decodeImage(set["png"], 1<<20, nil)
		if err != nil {
			t.Fatal(err)
		}
		for name, data := range set {
			g, err := decodeImage(data, 1<<20, nil)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if g.w != w || g.h != h {
				t.Errorf("%s: %d×%d, want %d×%d", name, g.w, g.h, w, h)
				continue
			}
			// Lossless encodings of the same pixels decode identically;
			// the GIF palette of a gray image is exact too.
			if !slices.Equal(g.pix, ref.pix) {
				t.Errorf("%s: pixels %v, want %v", name, g.pix, ref.pix)
			}
		}
	}
	// Gray PNG pixels are v/255.
	ref, _ := decodeImage(gray["png"], 1<<20, nil)
	if ref.pix[w+1] != float64(pix(1, 1))/255 {
		t.Errorf("pixel (1,1) = %g, want %g", ref.pix[w+1], float64(pix(1, 1))/255)
	}
	// JPEG is lossy: within 3/255 of the source for a smooth image.
	jp := enc(func(b *bytes.Buffer) error { return jpeg.Encode(b, grayImg, &jpeg.Options{Quality: 100}) })
	g, err := decodeImage(jp, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range g.pix {
		if math.Abs(g.pix[i]-ref.pix[i]) > 3.0/255 {
			t.Errorf("jpeg pixel %d = %g, want ≈ %g", i, g.pix[i], ref.pix[i])
		}
	}
}

func TestDecodeImageErrors(t *testing.T) {
	big := pngGray(t, 64, 64, func(x, y int) uint8 { return 0 })
	small := pngGray(t, 8, 8, func(x, y int) uint8 { return uint8(x * y) })
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"garbage":        {[]byte("hello"), "unknown image format"},
		"truncated png":  {small[:len(small)-20], "undecodable"},
		"too big":        {big, "exceeds the limit"},
		"pgm no raster":  {[]byte("P5 2 2 255\n\x01"), "truncated"},
		"pgm maxval":     {[]byte("P5 1 1 0\n\x00"), "maxval"},
		"pgm over":       {[]byte("P2 1 1 10 11"), "exceeds maxval"},
		"pgm zero size":  {[]byte("P5 0 3 255\n"), "no pixels"},
		"pgm no width":   {[]byte("P5 # only a comment"), "width missing"},
		"ppm huge width": {[]byte("P6 99999999999 1 255\n"), "too large"},
	} {
		_, err := decodeImage(c.data, 1000, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", name, err, c.want)
		}
	}
}

func TestResample(t *testing.T) {
	src := &gray{w: 4, h: 2, pix: []float64{0, 1, 2, 3, 4, 5, 6, 7}}
	check := func(name string, w, h int, want []float64) {
		t.Helper()
		got := make([]float64, w*h)
		resample(got, w, h, src)
		for i := range want {
			// Area weights are sums of binary fractions of 1/3 etc.; allow
			// a few ulps.
			if math.Abs(got[i]-want[i]) > 1e-12 {
				t.Errorf("%s: got %v, want %v", name, got, want)
				return
			}
		}
	}
	check("same", 4, 2, src.pix)
	check("half", 2, 1, []float64{(0 + 1 + 4 + 5) / 4.0, (2 + 3 + 6 + 7) / 4.0})
	check("double", 8, 2, []float64{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7})
	check("mean", 1, 1, []float64{3.5})
	// 4 → 3 columns: each output covers 4/3 input cells.
	check("thirds", 3, 1, []float64{(0+4)/2*0.75 + (1+5)/2*0.25, (1+5)/2*0.5 + (2+6)/2*0.5, (2+6)/2*0.25 + (3+7)/2*0.75})
}
