package sources

import (
	"errors"
	"fmt"
	"math"
)

// decodePNM checks a Netpbm grayscale (P2 plain, P5 raw) or colour (P3
// plain, P6 raw) image, as specified at https://netpbm.sourceforge.net/doc/pgm.html
// and ppm.html, from data starting with P2, P3, P5 or P6 (decodeRows
// checks), and returns it as a rowSource of intensities in [0, 1]: a
// gray sample v reads as v/maxval; a colour pixel is scaled to 16 bits per
// channel and converted with the luma weights of color.Gray16Model, so a PPM
// and a PNG of the same pixels decode alike. Only the first image of a
// multi-image file is read.
//
// Every error (a malformed header, a size checkSize refuses, a truncated
// raster, a sample above maxval) is returned here, none later from the
// rowSource; checkSize runs before anything the size of the image is
// allocated.
//
// Memory: a raw (P5, P6) raster is read in place: the result keeps a slice
// of data, which the caller must leave unchanged while it reads the rows,
// and allocates nothing per pixel. A plain (P2, P3) raster is parsed into a
// raw one, 1 byte a sample for a maxval up to 255 and 2 above it, allocated
// no larger than the input after the header (each sample takes at least a
// separator and a digit), whatever size the header claims.
func decodePNM(data []byte, maxPixels int, fits func(w, h int) error) (*pnmRows, error) {
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
	r := &pnmRows{w: w, h: h, colour: kind == '3' || kind == '6', wide: maxval > 255, maxval: maxval}
	bps := r.bytesPerSample()
	n := w * h * r.channels() // samples
	size := n * bps           // bytes of the raw raster
	if w*h > math.MaxInt/6 {
		// Only under a bound above 2⁶⁰ pixels: n or size would overflow,
		// and no input holds so many samples.
		n, size = math.MaxInt, math.MaxInt
	}
	if kind == '5' || kind == '6' {
		// Exactly one whitespace byte separates maxval from the raster.
		if p.pos >= len(data) || !isSpace(data[p.pos]) {
			return nil, errors.New("undecodable image: PNM header not followed by whitespace")
		}
		p.pos++
		if len(data)-p.pos < size {
			return nil, fmt.Errorf("undecodable image: PNM raster truncated (%d of %d bytes)", len(data)-p.pos, size)
		}
		r.raster = data[p.pos : p.pos+size]
		if maxval != 255 && maxval != 65535 { // else no sample can exceed it
			for k := range n {
				if v := r.sample(k); v > maxval {
					return nil, fmt.Errorf("undecodable image: PNM sample %d exceeds maxval %d", v, maxval)
				}
			}
		}
		return r, nil
	}
	// Each sample takes a digit and, before it, a byte that is not one (the
	// digits before it end there), so the input after maxval holds at most
	// (len(data)−p.pos)/2 samples: this capacity holds every sample read
	// (bps ≤ 2), append never reallocates, and a header claiming more
	// samples than the input holds fails below ("sample missing") having
	// allocated no more than the input's size.
	raster := make([]byte, 0, min(size, len(data)-p.pos))
	for range n {
		v, err := p.header("sample")
		if err != nil {
			return nil, err
		}
		if v > maxval {
			return nil, fmt.Errorf("undecodable image: PNM sample %d exceeds maxval %d", v, maxval)
		}
		if r.wide {
			raster = append(raster, byte(v>>8), byte(v))
		} else {
			raster = append(raster, byte(v))
		}
	}
	r.raster = raster
	return r, nil
}

// pnmRows is a PGM or PPM raster as a rowSource: h rows of w pixels, each
// of one sample (gray) or three (red, green, blue), each sample 1 byte, or
// 2 big-endian when maxval exceeds 255 (the layout of P5 and P6), with no
// sample above maxval (decodePNM checks it).
type pnmRows struct {
	w, h   int
	colour bool // three samples a pixel
	wide   bool // 2 bytes a sample
	maxval int  // in [1, 65535]
	raster []byte
}

func (r *pnmRows) channels() int {
	if r.colour {
		return 3
	}
	return 1
}

func (r *pnmRows) bytesPerSample() int {
	if r.wide {
		return 2
	}
	return 1
}

// sample returns the k-th sample of the raster, counted from 0.
func (r *pnmRows) sample(k int) int {
	if r.wide {
		return int(r.raster[2*k])<<8 | int(r.raster[2*k+1])
	}
	return int(r.raster[k])
}

func (r *pnmRows) size() (int, int) { return r.w, r.h }

// row writes the intensities of the pixels [x0, x1) of row y: a gray
// sample v as v/maxval; a colour pixel as color.Gray16Model's Y of its
// samples scaled to 16 bits, round(v·65535/maxval), over 65535.
func (r *pnmRows) row(y, x0, x1 int, out []float64) {
	c := r.channels()
	k := (y*r.w + x0) * c // the first sample read
	m := float64(r.maxval)
	to16 := func(v int) uint32 { return uint32((v*0xffff + r.maxval/2) / r.maxval) }
	switch {
	case !r.colour && !r.wide:
		for i, v := range r.raster[k:][:len(out)] {
			out[i] = float64(v) / m
		}
	case !r.colour:
		for i := range out {
			out[i] = float64(r.sample(k+i)) / m
		}
	default:
		for i := range out {
			j := k + 3*i
			out[i] = luma(to16(r.sample(j)), to16(r.sample(j+1)), to16(r.sample(j+2)), 0)
		}
	}
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
