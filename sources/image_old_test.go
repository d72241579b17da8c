package sources

import (
	"image"
	"image/color"
)

// The decoding and resampling of images as they were before decodeImageTo
// (a full-size float64 copy of the image, then a resample with listed
// weights), kept verbatim as the reference the new path must agree with
// (image_resample_test.go) and the baseline of BenchmarkDecodeImageLarge.

// oldDecodeImage is decodeImage before decodeImageTo: it converts the whole
// decoded image to a *gray, and reads a PGM or PPM with the old full-copy
// reader (oldDecodePNM, pnm_old_test.go).
func oldDecodeImage(data []byte, maxPixels int) (*gray, error) {
	if isPNM(data) {
		return oldDecodePNM(data, maxPixels, nil)
	}
	src, err := decodeRows(data, maxPixels, nil)
	if err != nil {
		return nil, err
	}
	return oldToGray(src.(*imageRows).img), nil
}

// isPNM reports whether data has the magic number of a PGM or PPM that
// decodeRows reads (P2, P3, P5, P6).
func isPNM(data []byte) bool {
	return len(data) >= 2 && data[0] == 'P' && (data[1] == '2' || data[1] == '3' || data[1] == '5' || data[1] == '6')
}

func oldToGray(img image.Image) *gray {
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

func oldResample(dst []float64, w, h int, src *gray) {
	if src.w == w && src.h == h {
		copy(dst, src.pix)
		return
	}
	xs := oldBoxWeights(src.w, w)
	ys := oldBoxWeights(src.h, h)
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

type oldWeight struct {
	i int
	w float64
}

func oldBoxWeights(m, n int) [][]oldWeight {
	out := make([][]oldWeight, n)
	scale := float64(m) / float64(n) // source cells per destination cell
	for d := 0; d < n; d++ {
		lo, hi := float64(d)*scale, float64(d+1)*scale
		for s := int(lo); s < m && float64(s) < hi; s++ {
			ov := min(hi, float64(s+1)) - max(lo, float64(s))
			if ov > 0 {
				out[d] = append(out[d], oldWeight{s, ov / scale})
			}
		}
	}
	return out
}

// oldDecodeResample is the old path of imageSize.decode: oldDecodeImage,
// then oldResample to w×h.
func oldDecodeResample(data []byte, maxPixels, w, h int) ([]float64, error) {
	g, err := oldDecodeImage(data, maxPixels)
	if err != nil {
		return nil, err
	}
	dst := make([]float64, w*h)
	oldResample(dst, w, h, g)
	return dst, nil
}
