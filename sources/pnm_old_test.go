package sources

import (
	"errors"
	"fmt"
)

// oldDecodePNM is decodePNM before it read rows in place (pnmRows), kept
// verbatim as the reference the new path must agree with, pixel for pixel
// and error for error (pnm_rows_test.go), and the "old" case of
// BenchmarkDecodeImageLarge: it reads every sample into an []int (8 bytes a
// sample), then converts them into a full-size *gray (8 bytes a pixel).
func oldDecodePNM(data []byte, maxPixels int, fits func(w, h int) error) (*gray, error) {
	p := pnmParser{data: data, pos: 2}
	kind := data[1]
	w, err := p.header("width")
	if err != nil {
		return nil, err
	}
	h, err := p.header("height")
	if err != nil {
		return nil, err
	}
	maxval, err := p.header("maxval")
	if err != nil {
		return nil, err
	}
	if maxval < 1 || maxval > 65535 {
		return nil, fmt.Errorf("undecodable image: PNM maxval %d outside [1, 65535]", maxval)
	}
	if err := checkSize(w, h, maxPixels, fits); err != nil {
		return nil, err
	}
	channels := 1
	if kind == '3' || kind == '6' {
		channels = 3
	}
	n := w * h * channels
	raw := kind == '5' || kind == '6'
	if raw {
		// Exactly one whitespace byte separates maxval from the raster.
		if p.pos >= len(data) || !isSpace(data[p.pos]) {
			return nil, errors.New("undecodable image: PNM header not followed by whitespace")
		}
		p.pos++
		bps := 1
		if maxval > 255 {
			bps = 2
		}
		if len(data)-p.pos < n*bps {
			return nil, fmt.Errorf("undecodable image: PNM raster truncated (%d of %d bytes)", len(data)-p.pos, n*bps)
		}
	}
	samples := make([]int, n)
	for k := range samples {
		var v int
		if raw {
			if maxval > 255 {
				v = int(data[p.pos])<<8 | int(data[p.pos+1])
				p.pos += 2
			} else {
				v = int(data[p.pos])
				p.pos++
			}
		} else if v, err = p.header("sample"); err != nil {
			return nil, err
		}
		if v > maxval {
			return nil, fmt.Errorf("undecodable image: PNM sample %d exceeds maxval %d", v, maxval)
		}
		samples[k] = v
	}
	g := &gray{w: w, h: h, pix: make([]float64, w*h)}
	if channels == 1 {
		for i, v := range samples {
			g.pix[i] = float64(v) / float64(maxval)
		}
		return g, nil
	}
	to16 := func(v int) uint32 { return uint32((v*0xffff + maxval/2) / maxval) }
	for i := range g.pix {
		r, gr, b := to16(samples[3*i]), to16(samples[3*i+1]), to16(samples[3*i+2])
		// The same integer formula as color.Gray16Model.
		y := (19595*r + 38470*gr + 7471*b + 1<<15) >> 16
		g.pix[i] = float64(y) / 0xffff
	}
	return g, nil
}
