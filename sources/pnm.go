package sources

import (
	"errors"
	"fmt"
)

// decodePNM decodes a Netpbm grayscale (P2 plain, P5 raw) or colour (P3
// plain, P6 raw) image, as specified at https://netpbm.sourceforge.net/doc/pgm.html
// and ppm.html, into intensities in [0, 1]: a gray sample v becomes v/maxval;
// a colour pixel is scaled to 16 bits per channel and converted with the
// luma weights of color.Gray16Model, so a PPM and a PNG of the same pixels
// decode alike. Only the first image of a multi-image file is read.
func decodePNM(data []byte, maxPixels int, fits func(w, h int) error) (*gray, error) {
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

type pnmParser struct {
	data []byte
	pos  int
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// header skips whitespace and comments and reads one decimal number.
func (p *pnmParser) header(what string) (int, error) {
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		if isSpace(c) {
			p.pos++
		} else if c == '#' {
			for p.pos < len(p.data) && p.data[p.pos] != '\n' && p.data[p.pos] != '\r' {
				p.pos++
			}
		} else {
			break
		}
	}
	start := p.pos
	v := 0
	for p.pos < len(p.data) && '0' <= p.data[p.pos] && p.data[p.pos] <= '9' {
		if v > 1<<30 {
			return 0, fmt.Errorf("undecodable image: PNM %s too large", what)
		}
		v = v*10 + int(p.data[p.pos]-'0')
		p.pos++
	}
	if p.pos == start {
		return 0, fmt.Errorf("undecodable image: PNM %s missing", what)
	}
	return v, nil
}
