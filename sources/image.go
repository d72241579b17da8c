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

// rowChunk is the number of source pixels of a row converted to intensities
// at once while resampling: the conversion buffer is 8·rowChunk bytes, 8 KiB,
// however wide the image.
const rowChunk = 1024

// rowSource is a decoded image read a piece of a row at a time, as
// intensities in [0, 1]: a Go image converted as it is read (imageRows) or
// a PGM/PPM raster (pnmRows), which spares the 8 bytes a pixel of a
// full-size float64 copy.
type rowSource interface {
	// size returns the width and height in pixels.
	size() (w, h int)
	// row writes the intensities of the pixels [x0, x1) of row y to out,
	// of length x1−x0.
	row(y, x0, x1 int, out []float64)
}

// decodeImageTo decodes PNG, JPEG, GIF, BMP or PGM/PPM bytes (decodeRows)
// into grayscale intensities in [0, 1] and writes them, resized to w×h by
// area averaging (resampleRows), into dst, row-major; with w and h both
// zero it keeps the image's own size. It returns dst, grown if its capacity
// is below w·h and resliced to w·h, and the size written.
//
// Memory: the decoded image, as Go's decoders hold it, which the maxPixels
// check made before decoding bounds: 1 byte a pixel for 8-bit gray and
// paletted images, 2 for 16-bit gray, 4 for RGBA and NRGBA, 8 for their
// 16-bit forms; an interlaced PNG's largest pass (half the image) and an
// interlaced GIF's second copy besides; for a JPEG, its planes (1 to 4
// bytes a pixel), the RGBA or CMYK image it converts them to (4), and
// while a progressive one decodes its coefficients (4 bytes a pixel per
// component), at most 24 bytes a pixel (a progressive CMYK JPEG) of its
// size rounded up to whole blocks of up to 32×16 pixels. A raw PGM or PPM
// (P5, P6) is read in place from data; a plain one (P2, P3) is parsed into
// 1 or 2 bytes a sample, no more than data's own size (decodePNM). Besides
// these, 48·w + 40·h bytes and an 8 KiB row buffer when resizing, and dst:
// no full-size copy of the image.
func decodeImageTo(dst []float64, w, h int, data []byte, maxPixels int, fits func(w, h int) error) ([]float64, int, int, error) {
	src, err := decodeRows(data, maxPixels, fits)
	if err != nil {
		return dst, 0, 0, err
	}
	if w == 0 && h == 0 {
		w, h = src.size()
	}
	if cap(dst) < w*h {
		dst = make([]float64, w*h)
	}
	dst = dst[:w*h]
	resampleRows(dst, w, h, src, rowChunk)
	return dst, w, h, nil
}

// decodeRows decodes PNG, JPEG, GIF, BMP or PGM/PPM bytes, chosen by their
// magic numbers, into a rowSource of grayscale intensities in [0, 1] (0
// black, 1 white), converted as the rows are read. Colour is converted with
// color.Gray16Model (ITU-R BT.601 luma weights 0.299, 0.587, 0.114 on 16-bit
// channels); transparent pixels are composited on black. From the header,
// before decoding, it refuses an image of more than maxPixels pixels and
// returns the error of fits(width, height) if fits is not nil (checkSize).
// These are the formats of the image column (docs/DESIGN.md §5), where an
// error is a reject of its record. The rowSource may keep a slice of data
// (pnmRows), which must not change while it is read.
func decodeRows(data []byte, maxPixels int, fits func(w, h int) error) (rowSource, error) {
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
		r, err := decodePNM(data, maxPixels, fits)
		if err != nil {
			return nil, err
		}
		return r, nil
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
	return newImageRows(img), nil
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

// imageRows reads a decoded Go image as intensities: 8-bit gray v as
// v/255, 16-bit gray v as v/65535, any other pixel as the Y of
// color.Gray16Model over 65535. The concrete types the decoders return are
// converted without an interface call a pixel; the values are those of
// color.Gray16Model.Convert(img.At(x, y)) all the same.
type imageRows struct {
	img image.Image
	b   image.Rectangle
	// pal holds the intensity of each palette index of a paletted image
	// (256 entries; an index the palette lacks reads 0).
	pal []float64
}

func newImageRows(img image.Image) *imageRows {
	r := &imageRows{img: img, b: img.Bounds()}
	if p, ok := img.(*image.Paletted); ok {
		r.pal = make([]float64, 256)
		for i, c := range p.Palette[:min(len(p.Palette), 256)] {
			if c != nil {
				r.pal[i] = float64(color.Gray16Model.Convert(c).(color.Gray16).Y) / 0xffff
			}
		}
	}
	return r
}

func (r *imageRows) size() (int, int) { return r.b.Dx(), r.b.Dy() }

// luma is color.Gray16Model's conversion of 16-bit premultiplied red,
// green and blue, as an intensity in [0, 1].
func luma(r, g, b, _ uint32) float64 {
	return float64((19595*r+38470*g+7471*b+1<<15)>>16) / 0xffff
}

func (r *imageRows) row(y, x0, x1 int, out []float64) {
	y += r.b.Min.Y
	x0 += r.b.Min.X
	switch m := r.img.(type) {
	case *image.Gray:
		for i, v := range m.Pix[m.PixOffset(x0, y):][:len(out)] {
			out[i] = float64(v) / 0xff
		}
	case *image.Gray16:
		p := m.Pix[m.PixOffset(x0, y):][:2*len(out)]
		for i := range out {
			out[i] = float64(uint16(p[2*i])<<8|uint16(p[2*i+1])) / 0xffff
		}
	case *image.Paletted:
		for i, v := range m.Pix[m.PixOffset(x0, y):][:len(out)] {
			out[i] = r.pal[v]
		}
	case *image.RGBA:
		p := m.Pix[m.PixOffset(x0, y):][:4*len(out)]
		for i := range out {
			out[i] = luma(color.RGBA{p[4*i], p[4*i+1], p[4*i+2], p[4*i+3]}.RGBA())
		}
	case *image.NRGBA:
		p := m.Pix[m.PixOffset(x0, y):][:4*len(out)]
		for i := range out {
			out[i] = luma(color.NRGBA{p[4*i], p[4*i+1], p[4*i+2], p[4*i+3]}.RGBA())
		}
	case *image.RGBA64:
		for i := range out {
			out[i] = luma(m.RGBA64At(x0+i, y).RGBA())
		}
	case *image.NRGBA64:
		for i := range out {
			out[i] = luma(m.NRGBA64At(x0+i, y).RGBA())
		}
	case *image.YCbCr:
		for i := range out {
			out[i] = luma(m.YCbCrAt(x0+i, y).RGBA())
		}
	case *image.CMYK:
		for i := range out {
			out[i] = luma(m.CMYKAt(x0+i, y).RGBA())
		}
	default:
		for i := range out {
			out[i] = float64(color.Gray16Model.Convert(m.At(x0+i, y)).(color.Gray16).Y) / 0xffff
		}
	}
}

// resampleRows writes src, resized to w×h by area averaging (a box
// filter), into dst (length w·h, row-major), reading chunk pixels of a row
// at a time. Each destination pixel is the mean of the source area it
// covers, with fractional weights at the edges; a downscale by an integer
// factor averages whole blocks exactly, and a same-size resample copies.
// It reads each source row once, in order, and keeps one row's horizontal
// averages (w values), so that beside dst it holds 48·w + 40·h + 8·chunk
// bytes. Each destination pixel is summed in the same
// order as a resample of the whole image at once: the results do not
// depend on chunk.
func resampleRows(dst []float64, w, h int, src rowSource, chunk int) {
	sw, sh := src.size()
	if sw == w && sh == h {
		for y := 0; y < h; y++ {
			src.row(y, 0, w, dst[y*w:(y+1)*w])
		}
		return
	}
	xs := boxSpans(sw, w)
	ys := boxSpans(sh, h)
	hs := make([]float64, w)               // source row last's horizontal averages
	buf := make([]float64, min(sw, chunk)) // a piece of a source row
	last := -1
	clear(dst)
	for y := 0; y < h; y++ {
		drow := dst[y*w : (y+1)*w]
		sp := ys[y]
		for i := sp.lo; i < sp.hi; i++ {
			if i != last {
				// Rows come in order, and consecutive destination rows
				// share at most their boundary rows: each is read once.
				hpass(hs, xs, src, i, buf)
				last = i
			}
			wy := sp.weight(i)
			for x, s := range hs {
				drow[x] += wy * s
			}
		}
	}
}

// hpass writes to hs[x] the weighted sum over xs[x] of source row y's
// pixels, read len(buf) at a time into buf.
func hpass(hs []float64, xs []span, src rowSource, y int, buf []float64) {
	sw, _ := src.size()
	clear(hs)
	first := 0 // the first destination column not complete
	for c0 := 0; c0 < sw; c0 += len(buf) {
		c1 := min(c0+len(buf), sw)
		piece := buf[:c1-c0]
		src.row(y, c0, c1, piece)
		for x := first; x < len(xs) && xs[x].lo < c1; x++ {
			sp := xs[x]
			s := hs[x]
			for i := max(sp.lo, c0); i < min(sp.hi, c1); i++ {
				s += sp.weight(i) * piece[i-c0]
			}
			hs[x] = s
		}
		for first < len(xs) && xs[first].hi <= c1 {
			first++
		}
	}
}

// span is the source cells [lo, hi) a destination cell overlaps in a box
// filter, with their overlap fractions: first for lo, last for hi−1, and
// mid, 1/scale, for each cell it covers whole. They sum to 1.
type span struct {
	lo, hi           int
	first, mid, last float64
}

func (s *span) weight(i int) float64 {
	switch i {
	case s.lo:
		return s.first
	case s.hi - 1:
		return s.last
	}
	return s.mid
}

// boxSpans returns, for each of n destination cells, the span of the source
// cells of [0, m) it overlaps. A cell wholly inside has the overlap 1
// exactly, so that mid is the fraction each such cell had when the weights
// were listed one by one.
func boxSpans(m, n int) []span {
	out := make([]span, n)
	scale := float64(m) / float64(n) // source cells per destination cell
	for d := range out {
		lo, hi := float64(d)*scale, float64(d+1)*scale
		s0 := int(lo)
		s1 := s0
		for s1 < m && float64(s1) < hi {
			s1++
		}
		ov := func(s int) float64 { return (min(hi, float64(s+1)) - max(lo, float64(s))) / scale }
		out[d] = span{lo: s0, hi: s1, mid: 1 / scale}
		if s1 > s0 {
			out[d].first, out[d].last = ov(s0), ov(s1-1)
		}
	}
	return out
}
