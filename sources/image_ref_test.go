package sources

// The full-size float64 path of decoding, kept for tests only: the same
// conversion as decodeImageTo (decodeRows), copied whole into a *gray, then
// resampled. Tests compare pixels at full size with it and run it as the
// "copy" case of BenchmarkDecodeImageLarge; production code reads rows
// (decodeImageTo) and never holds this copy.

// gray is a decoded image as row-major intensities in [0, 1]: 8 bytes a
// pixel.
type gray struct {
	w, h int
	pix  []float64
}

func (g *gray) size() (int, int) { return g.w, g.h }

func (g *gray) row(y, x0, x1 int, out []float64) { copy(out, g.pix[y*g.w+x0:y*g.w+x1]) }

// decodeImage decodes data as decodeRows does (the same formats, checks and
// errors) into a full-size copy of its intensities.
func decodeImage(data []byte, maxPixels int, fits func(w, h int) error) (*gray, error) {
	src, err := decodeRows(data, maxPixels, fits)
	if err != nil {
		return nil, err
	}
	w, h := src.size()
	g := &gray{w: w, h: h, pix: make([]float64, w*h)}
	for y := 0; y < h; y++ {
		src.row(y, 0, w, g.pix[y*w:(y+1)*w])
	}
	return g, nil
}

// resample is resampleRows from a *gray, rowChunk pixels at a time.
func resample(dst []float64, w, h int, src *gray) { resampleRows(dst, w, h, src, rowChunk) }
