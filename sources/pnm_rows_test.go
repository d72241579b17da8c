package sources

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// pnmCase is a PGM or PPM to encode: its kind ('2', '3', '5' or '6'), size,
// maxval and samples (w·h, or 3·w·h for a PPM, row-major), with comments in
// its header (and, when plain, between its samples) if comments is set.
type pnmCase struct {
	kind     byte
	w, h     int
	maxval   int
	samples  []int
	comments bool
}

func (c pnmCase) String() string {
	return fmt.Sprintf("P%c %d×%d maxval %d comments %v", c.kind, c.w, c.h, c.maxval, c.comments)
}

// encode writes c in the Netpbm format: raw samples big-endian, 2 bytes
// each when maxval exceeds 255; plain ones separated by varied whitespace.
func (c pnmCase) encode() []byte {
	var b bytes.Buffer
	if c.comments {
		fmt.Fprintf(&b, "P%c\n# made by a test\n%d\t%d # width and height\n#\r%d\n", c.kind, c.w, c.h, c.maxval)
	} else {
		fmt.Fprintf(&b, "P%c %d %d %d\n", c.kind, c.w, c.h, c.maxval)
	}
	seps := []string{" ", "\n", "\t", "  ", "\r\n"}
	if c.comments {
		seps = append(seps, " # a comment\n", "#\n")
	}
	for k, v := range c.samples {
		switch {
		case c.kind == '5' || c.kind == '6':
			if c.maxval > 255 {
				b.WriteByte(byte(v >> 8))
			}
			b.WriteByte(byte(v))
		default:
			if k > 0 {
				b.WriteString(seps[k%len(seps)])
			}
			b.WriteString(strconv.Itoa(v))
		}
	}
	return b.Bytes()
}

// randomPNM returns a w×h image of kind with random samples in [0, maxval],
// the extremes among them.
func randomPNM(r *rand.Rand, kind byte, w, h, maxval int, comments bool) pnmCase {
	n := w * h
	if kind == '3' || kind == '6' {
		n *= 3
	}
	s := make([]int, n)
	for i := range s {
		s[i] = r.IntN(maxval + 1)
	}
	s[0] = maxval
	if n > 1 {
		s[n-1] = 0
	}
	return pnmCase{kind: kind, w: w, h: h, maxval: maxval, samples: s, comments: comments}
}

// pnmCases returns images of every kind, with 8- and 16-bit samples,
// maxvals of 255, 65535 and neither (1, 7, 200, 256, 1000), with and
// without comments.
func pnmCases(r *rand.Rand, w, h int) []pnmCase {
	var out []pnmCase
	for _, kind := range []byte("2356") {
		for _, maxval := range []int{1, 7, 200, 255, 256, 1000, 65535} {
			out = append(out, randomPNM(r, kind, w, h, maxval, maxval%2 == 1))
		}
		out = append(out, randomPNM(r, kind, w, h, 255, false), randomPNM(r, kind, w, h, 1000, true))
	}
	return out
}

// TestPNMRowsMatchOld checks the PGM/PPM rowSource (pnmRows: raw rasters
// read in place, plain ones parsed to 1 or 2 bytes a sample) against the
// old full-copy reader (oldDecodePNM), bit for bit: read whole and in
// pieces of 5, copied full size (decodeImage), and through decodeImageTo
// at the image's own size, the same size given, and downscales, upscales
// and mixed resizes, each compared with resampleRows of the old *gray.
func TestPNMRowsMatchOld(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const w, h = 23, 17
	targets := [][2]int{{0, 0}, {w, h}, {12, 9}, {7, 5}, {1, 1}, {50, 37}, {5, 40}}
	for _, c := range pnmCases(r, w, h) {
		data := c.encode()
		old, err := oldDecodePNM(data, 1<<20, nil)
		if err != nil {
			t.Fatalf("%v: old reader: %v", c, err)
		}
		src, err := decodeRows(data, 1<<20, nil)
		if err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		if _, ok := src.(*pnmRows); !ok {
			t.Fatalf("%v: decoded to %T, want *pnmRows", c, src)
		}
		if sw, sh := src.size(); sw != w || sh != h {
			t.Fatalf("%v: size %d×%d, want %d×%d", c, sw, sh, w, h)
		}
		pieces := make([]float64, w*h)
		for y := 0; y < h; y++ {
			for x0 := 0; x0 < w; x0 += 5 { // the last piece shorter
				x1 := min(x0+5, w)
				src.row(y, x0, x1, pieces[y*w+x0:y*w+x1])
			}
		}
		pnmSame(t, c.String()+" in pieces", pieces, old.pix)
		full, err := decodeImage(data, 1<<20, nil)
		if err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		pnmSame(t, c.String()+" decodeImage", full.pix, old.pix)
		for _, tg := range targets {
			tw, th := tg[0], tg[1]
			if tw == 0 {
				tw, th = w, h
			}
			want := make([]float64, tw*th)
			resampleRows(want, tw, th, old, rowChunk)
			got, gw, gh, err := decodeImageTo(nil, tg[0], tg[1], data, 1<<20, nil)
			if err != nil {
				t.Fatalf("%v → %v: %v", c, tg, err)
			}
			if gw != tw || gh != th {
				t.Errorf("%v → %v: size %d×%d, want %d×%d", c, tg, gw, gh, tw, th)
			}
			pnmSame(t, fmt.Sprintf("%v → %d×%d", c, tw, th), got, want)
		}
	}
}

// TestPNMRowsWide reads PGMs and PPMs wider than rowChunk, whose rows
// resampleRows reads in several pieces, against the old reader.
func TestPNMRowsWide(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const w, h = 2*rowChunk + 77, 3
	for _, kind := range []byte("2356") {
		c := randomPNM(r, kind, w, h, 1000, false)
		data := c.encode()
		old, err := oldDecodePNM(data, 1<<20, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tg := range [][2]int{{7, 1}, {3000, 3}, {w, 2}, {w, h}} {
			want := make([]float64, tg[0]*tg[1])
			resampleRows(want, tg[0], tg[1], old, rowChunk)
			got, _, _, err := decodeImageTo(nil, tg[0], tg[1], data, 1<<20, nil)
			if err != nil {
				t.Fatal(err)
			}
			pnmSame(t, fmt.Sprintf("%v → %v", c, tg), got, want)
		}
	}
}

// pnmSame reports the first pixel where got and want differ at all: the
// new reader computes each intensity with the old one's arithmetic.
func pnmSame(t *testing.T, name string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d pixels, want %d", name, len(got), len(want))
		return
	}
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Errorf("%s: pixel %d = %.17g, want %.17g (old reader)", name, i, got[i], want[i])
			return
		}
	}
}

// pnmAgree decodes data with the new reader (decodeImage, through
// decodeRows and pnmRows) and the old one, and reports any difference: in
// whether and why they fail, or in a pixel.
func pnmAgree(t *testing.T, name string, data []byte, maxPixels int, fits func(w, h int) error) {
	t.Helper()
	old, oldErr := oldDecodePNM(data, maxPixels, fits)
	got, err := decodeImage(data, maxPixels, fits)
	if fmt.Sprint(err) != fmt.Sprint(oldErr) {
		t.Errorf("%s: err = %v, want %v (old reader)", name, err, oldErr)
		return
	}
	if err == nil {
		if got.w != old.w || got.h != old.h {
			t.Errorf("%s: %d×%d, want %d×%d", name, got.w, got.h, old.w, old.h)
			return
		}
		pnmSame(t, name, got.pix, old.pix)
	}
}

// TestPNMErrorsMatchOld checks that malformed PGMs and PPMs fail with the
// old reader's error, word for word, first error first: each header field
// missing or too large, maxval out of range, no pixels, over the pixel
// bound or refused by fits, no whitespace before a raw raster, a raw
// raster truncated, a sample above maxval (raw 8- and 16-bit, plain), a
// plain sample missing or too large, and a raw raster longer than needed
// (read, the rest ignored).
func TestPNMErrorsMatchOld(t *testing.T) {
	fits := func(w, h int) error {
		if w == 13 {
			return errors.New("13 columns refused")
		}
		return nil
	}
	for name, in := range map[string]string{
		"no width":             "P5 # only a comment",
		"no height":            "P5 3",
		"no maxval":            "P6 3 2\n",
		"huge width":           "P6 99999999999 1 255\n",
		"huge maxval":          "P2 1 1 99999999999 0",
		"maxval 0":             "P5 1 1 0\n\x00",
		"maxval 65536":         "P5 1 1 65536\n\x00\x00",
		"zero size":            "P5 0 3 255\n",
		"over the bound":       "P6 40 30 255\n",
		"fits":                 "P5 13 1 255\n" + strings.Repeat("\x00", 13),
		"no whitespace":        "P5 1 1 255",
		"not whitespace":       "P5 1 1 255#\x00",
		"truncated 8-bit":      "P5 2 2 255\n\x01",
		"truncated 16-bit":     "P6 1 1 256\n\x00\x01\x00\x01\x00",
		"over maxval 8-bit":    "P5 3 1 100\n\x05\x65\x66",
		"at maxval 8-bit":      "P5 3 1 100\n\x05\x64\x00",
		"over maxval 16-bit":   "P6 1 1 1000\n\x00\x01\x03\xe9\x00\x00",
		"at maxval 16-bit":     "P6 1 1 1000\n\x00\x01\x03\xe8\x00\x00",
		"over maxval plain":    "P2 2 1 10 3 11",
		"first over plain":     "P3 1 1 10 12 11 x",
		"missing plain":        "P3 1 2 255\n1 2 3 4 5",
		"junk plain":           "P2 2 1 255\n1 x",
		"too large plain":      "P2 1 1 255\n99999999999",
		"leading zeros plain":  "P2 1 1 255\n000000000000000000000255",
		"longer raster":        "P5 1 1 7\n\x07\x09\x09",
		"comment before raw":   "P5 1 1 255 # c\n\x07",
		"plain comments":       "P2#c\n2#c\n1#c\n9#c\n8#c\n9",
		"whitespace in raster": "P5 2 1 255\n\n\x01",
		"plain 16-bit":         "P2 2 1 65535 65535 256",
	} {
		pnmAgree(t, name, []byte(in), 1000, fits)
	}
}

// FuzzPNM checks the new PGM/PPM reader against the old one on any input
// with a PNM magic number: the same error, or the same pixels. Run it with
//
//	go test ./sources -run '^$' -fuzz FuzzPNM -fuzztime 30s
func FuzzPNM(f *testing.F) {
	for _, in := range []string{"P2 2 2 15\n0 1\n2 15\n", "P3 1 2 255\n1 2 3 4 5 6\n", "P5 2 1 7\n\x07\x00",
		"P6 1 1 65535\n\x01\x02\x03\x04\x05\x06", "P5 1 1 1000\n\x03\xe9", "P3 # c\n1 1 9 1 2 #\n3"} {
		f.Add([]byte(in))
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, c := range pnmCases(r, 3, 2) {
		f.Add(c.encode())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !isPNM(data) {
			return
		}
		pnmAgree(t, "fuzz", data, 1<<16, nil)
	})
}

// TestPNMMemory checks what decodeImageTo allocates for a 1024×1024 PGM or
// PPM resized to 28×28: for a raw one (P5, P6), read in place, no more
// than the resampler's few kilobytes, where the old reader took 16 bytes
// a pixel for a PGM and 32 for a PPM; for a plain one (P2, P3), the
// parsed raster of 1 or 2 bytes a sample besides, no more than the input.
func TestPNMMemory(t *testing.T) {
	const side, w, h = 1024, 28, 28
	// 48·w + 40·h + 8·rowChunk is 10 KiB; the interface values take a few
	// hundred bytes more.
	const slack = 64 << 10
	r := rand.New(rand.NewPCG(9, 10))
	dst := make([]float64, w*h)
	for _, c := range []struct {
		kind   byte
		maxval int
	}{{'5', 255}, {'5', 1000}, {'6', 200}, {'6', 65535}, {'2', 255}, {'2', 1000}, {'3', 7}, {'3', 4095}} {
		img := randomPNM(r, c.kind, side, side, c.maxval, false)
		data := img.encode()
		raster := 0 // bytes of the raster decodePNM allocates
		if c.kind == '2' || c.kind == '3' {
			raster = len(img.samples)
			if c.maxval > 255 {
				raster *= 2
			}
		}
		var err error
		got, _ := allocated(func() { dst, _, _, err = decodeImageTo(dst, w, h, data, 1<<24, nil) })
		if err != nil {
			t.Fatal(err)
		}
		if got > uint64(raster+slack) {
			t.Errorf("%v: decodeImageTo allocated %d bytes, want at most %d (raster) + %d", img, got, raster, slack)
		}
		if raster > len(data) {
			t.Errorf("%v: a raster of %d bytes from an input of %d", img, raster, len(data))
		}
		t.Logf("%v: %d bytes of input, decodeImageTo allocated %d", img, len(data), got)
	}
}

// TestPNMHeaderAllocation checks that a PGM or PPM header claiming an
// image its input cannot hold fails having allocated no more than the
// input's size, not the claimed image's (2²⁴ pixels, 16 to 96 MiB of
// samples); that one over the pixel bound fails on the bound, before
// reading samples; and that one whose sample count overflows an int
// fails without a panic.
func TestPNMHeaderAllocation(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"P3 4096 4096 65535\n1 2 3 4 5", "PNM sample missing"},
		{"P2 4096 4096 255 " + strings.Repeat("7 ", 1000), "PNM sample missing"},
		{"P6 4096 4096 65535\n\x01\x02", "PNM raster truncated (2 of 100663296 bytes)"},
		{"P5 4096 4096 255\n", "PNM raster truncated (0 of 16777216 bytes)"},
		{"P3 4097 4096 65535\n1 2 3", "image of 4097×4096 pixels exceeds the limit of 16777216 pixels"},
	} {
		data := []byte(c.in)
		var err error
		n, _ := allocated(func() { _, _, _, err = decodeImageTo(nil, 28, 28, data, 1<<24, nil) })
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.20q: err = %v, want %q", c.in, err, c.want)
		}
		// The runtime may allocate a few KiB meanwhile; 64 KiB is 1/256 of
		// the smallest raster the header claims.
		if n > uint64(len(data))+64<<10 {
			t.Errorf("%.20q (%d bytes): allocated %d bytes", c.in, len(data), n)
		}
	}
	pnmAgree(t, "claimed size", []byte("P3 4096 4096 65535\n1 2 3 4 5"), 1<<24, nil)
	// Under no pixel bound to speak of, a header whose sample count
	// overflows an int fails as truncated or short (the old reader
	// panicked).
	for _, c := range []struct{ in, want string }{
		{"P6 3037000499 3037000499 65535\n\x00\x01", "PNM raster truncated (2 of 9223372036854775807 bytes)"},
		{"P5 3037000499 3037000499 255\n\x00\x01", "PNM raster truncated (2 of 9223372036854775807 bytes)"},
		{"P3 3037000499 3037000499 65535\n1 2 3", "PNM sample missing"},
		{"P2 3037000499 3037000499 255\n1 2 3", "PNM sample missing"},
	} {
		_, _, _, err := decodeImageTo(nil, 28, 28, []byte(c.in), math.MaxInt, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.20q under a bound of MaxInt pixels: err = %v, want %q", c.in, err, c.want)
		}
	}
}
