package sources

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"

	"golang.org/x/image/bmp"
)

// defaultMaxImagePixels bounds the decoded size of one image (width×height)
// unless a source sets MaxImagePixels: 2²⁴ pixels, e.g. 4096×4096, which keeps
// a hostile header from allocating gigabytes.
const defaultMaxImagePixels = 1 << 24

// gray is a decoded image as row-major intensities in [0, 1].
type gray struct {
	w, h int
	pix  []float64
}

// decodeImage decodes PNG, JPEG, GIF, BMP or PGM/PPM bytes, chosen by their
// magic numbers, into grayscale intensities in [0, 1] (0 black, 1 white).
// Colour is converted with color.Gray16Model (ITU-R BT.601 luma weights
// 0.299, 0.587, 0.114 on 16-bit channels); transparent pixels are composited
// on black. It rejects images larger than maxPixels before decoding them,
// and returns the error of fits(width, height), if fits is not nil, before
// decoding too.
func decodeImage(data []byte, maxPixels int, fits func(w, h int) error) (*gray, error) {
	var decode func([]byte) (image.Image, error)
	var config func([]byte) (image.Config, error)
	wrap := func(d func(r *bytes.Reader) (image.Image, error), c func(r *bytes.Reader) (image.Config, error)) {
		decode = func(b []byte) (image.Image, error) { return d(bytes.NewReader(b)) }
		config = func(b []byte) (image.Config, error) { return c(bytes.NewReader(b)) }
	}
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		wrap(func(r *bytes.Reader) (image.Image, error) { return png.Decode(r) },
			func(r *bytes.Reader) (image.Config, error) { return png.DecodeConfig(r) })
	case bytes.HasPrefix(data, []byte("\xff\xd8")):
		wrap(func(r *bytes.Reader) (image.Image, error) { return jpeg.Decode(r) },
			func(r *bytes.Reader) (image.Config, error) { return jpeg.DecodeConfig(r) })
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		wrap(func(r *bytes.Reader) (image.Image, error) { return gif.Decode(r) },
			func(r *bytes.Reader) (image.Config, error) { return gif.DecodeConfig(r) })
	case bytes.HasPrefix(data, []byte("BM")):
		wrap(func(r *bytes.Reader) (image.Image, error) { return bmp.Decode(r) },
			func(r *bytes.Reader) (image.Config, error) { return bmp.DecodeConfig(r) })
	case len(data) >= 2 && data[0] == 'P' && (data[1] == '2' || data[1] == '3' || data[1] == '5' || data[1] == '6'):
		return decodePNM(data, maxPixels, fits)
	default:
		return nil, errors.New("unknown image format (want PNG, JPEG, GIF, BMP, PGM or PPM)")
	}
	cfg, err := config(data)
	if err != nil {
		return nil, fmt.Errorf("undecodable image: %v", err)
	}
	if err := checkSize(cfg.Width, cfg.Height, maxPixels, fits); err != nil {
		return nil, err
	}
	img, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("undecodable image: %v", err)
	}
	return toGray(img), nil
}

func checkSize(w, h, maxPixels int, fits func(w, h int) error) error {
	if w <= 0 || h <= 0 {
		return fmt.Errorf("image has no pixels (%d×%d)", w, h)
	}
	if w > maxPixels/h {
		return fmt.Errorf("image of %d×%d pixels exceeds the limit of %d pixels", w, h, maxPixels)
	}
	if fits != nil {
		return fits(w, h)
	}
	return nil
}

func toGray(img image.Image) *gray {
	b := img.Bounds()
	g := &gray{w: b.Dx(), h: b.Dy(), pix: make([]float64, b.Dx()*b.Dy())}
	switch m := img.(type) {
	case *image.Gray:
		for y := 0; y < g.h; y++ {
			row := m.Pix[y*m.Stride : y*m.Stride+g.w]
			for x, v := range row {
				g.pix[y*g.w+x] = float64(v) / 0xff
			}
		}
	case *image.Gray16:
		for y := 0; y < g.h; y++ {
			row := m.Pix[y*m.Stride : y*m.Stride+2*g.w]
			for x := 0; x < g.w; x++ {
				g.pix[y*g.w+x] = float64(uint16(row[2*x])<<8|uint16(row[2*x+1])) / 0xffff
			}
		}
	default:
		for y := 0; y < g.h; y++ {
			for x := 0; x < g.w; x++ {
				c := color.Gray16Model.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.Gray16)
				g.pix[y*g.w+x] = float64(c.Y) / 0xffff
			}
		}
	}
	return g
}

// resample writes src, resized to w×h by area averaging (a box filter), into
// dst (length w·h, row-major). Each destination pixel is the mean of the
// source area it covers, with fractional weights at the edges; a downscale by
// an integer factor averages whole blocks exactly, and a same-size resample
// copies.
func resample(dst []float64, w, h int, src *gray) {
	if src.w == w && src.h == h {
		copy(dst, src.pix)
		return
	}
	xs := boxWeights(src.w, w)
	ys := boxWeights(src.h, h)
	clear(dst)
	for y := 0; y < h; y++ {
		for _, wy := range ys[y] {
			srow := src.pix[wy.i*src.w : (wy.i+1)*src.w]
			drow := dst[y*w : (y+1)*w]
			for x := 0; x < w; x++ {
				var s float64
				for _, wx := range xs[x] {
					s += wx.w * srow[wx.i]
				}
				drow[x] += wy.w * s
			}
		}
	}
}

type weight struct {
	i int
	w float64
}

// boxWeights returns, for each of n destination cells, the source cells of
// [0, m) it overlaps and the overlap fractions, which sum to 1.
func boxWeights(m, n int) [][]weight {
	out := make([][]weight, n)
	scale := float64(m) / float64(n) // source cells per destination cell
	for d := 0; d < n; d++ {
		lo, hi := float64(d)*scale, float64(d+1)*scale
		for s := int(lo); s < m && float64(s) < hi; s++ {
			ov := min(hi, float64(s+1)) - max(lo, float64(s))
			if ov > 0 {
				out[d] = append(out[d], weight{s, ov / scale})
			}
		}
	}
	return out
}
