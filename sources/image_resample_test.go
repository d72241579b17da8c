package sources

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"golang.org/x/image/bmp"
)

// sameTol is how far the new path's pixels may be from the old path's
// (image_old_test.go). Both sum the same products in the same order, so
// they are equal on amd64; the tolerance leaves room for a fused
// multiply-add that a compiler for another architecture might form in one
// loop and not the other. A wrong weight, row or conversion is off by far
// more (1/65535 for one step of a 16-bit gray level).
const sameTol = 1e-12

// checkSame reports the first pixel where got and want differ by more than
// sameTol.
func checkSame(t *testing.T, name string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d pixels, want %d", name, len(got), len(want))
		return
	}
	for i := range want {
		if !(math.Abs(got[i]-want[i]) <= sameTol) {
			t.Errorf("%s: pixel %d = %.17g, want %.17g (old path)", name, i, got[i], want[i])
			return
		}
	}
}

// testImages returns an image of each kind Go's decoders return, w×h, with
// varied pixels (and alpha where the type has it), from r.
func testImages(r *rand.Rand, w, h int) map[string]image.Image {
	rect := image.Rect(0, 0, w, h)
	g8, g16 := image.NewGray(rect), image.NewGray16(rect)
	rgba, nrgba := image.NewRGBA(rect), image.NewNRGBA(rect)
	rgba64, nrgba64 := image.NewRGBA64(rect), image.NewNRGBA64(rect)
	cmyk := image.NewCMYK(rect)
	pal := make(color.Palette, 200)
	for i := range pal {
		pal[i] = color.RGBA{uint8(r.IntN(256)), uint8(r.IntN(256)), uint8(r.IntN(256)), 255}
	}
	paletted := image.NewPaletted(rect, pal)
	ycc := image.NewYCbCr(rect, image.YCbCrSubsampleRatio420)
	for i := range ycc.Y {
		ycc.Y[i] = uint8(r.IntN(256))
	}
	for i := range ycc.Cb {
		ycc.Cb[i], ycc.Cr[i] = uint8(r.IntN(256)), uint8(r.IntN(256))
	}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			v := uint16(r.Uint32())
			g8.SetGray(x, y, color.Gray{uint8(v >> 8)})
			g16.SetGray16(x, y, color.Gray16{v})
			a := uint8(r.IntN(256))
			rgba.SetRGBA(x, y, color.RGBA{min(a, uint8(r.IntN(256))), min(a, uint8(r.IntN(256))), min(a, uint8(r.IntN(256))), a})
			nrgba.SetNRGBA(x, y, color.NRGBA{uint8(r.IntN(256)), uint8(r.IntN(256)), uint8(r.IntN(256)), a})
			a16 := uint16(r.Uint32())
			rgba64.SetRGBA64(x, y, color.RGBA64{min(a16, uint16(r.Uint32())), min(a16, uint16(r.Uint32())), min(a16, uint16(r.Uint32())), a16})
			nrgba64.SetNRGBA64(x, y, color.NRGBA64{uint16(r.Uint32()), uint16(r.Uint32()), uint16(r.Uint32()), a16})
			cmyk.SetCMYK(x, y, color.CMYK{uint8(r.IntN(256)), uint8(r.IntN(256)), uint8(r.IntN(256)), uint8(r.IntN(256))})
			paletted.SetColorIndex(x, y, uint8(r.IntN(len(pal))))
		}
	}
	return map[string]image.Image{"gray": g8, "gray16": g16, "rgba": rgba, "nrgba": nrgba,
		"rgba64": rgba64, "nrgba64": nrgba64, "cmyk": cmyk, "paletted": paletted, "ycbcr": ycc,
		// The default branch (At and color.Gray16Model), with an origin off (0, 0).
		"nycbcra": image.NewNYCbCrA(image.Rect(3, 2, 3+w, 2+h), image.YCbCrSubsampleRatio444),
		// A sub-image: an origin off (0, 0) and a stride wider than a row.
		"paletted sub": paletted.SubImage(image.Rect(1, 1, w, h)),
		"nrgba sub":    nrgba.SubImage(image.Rect(2, 1, w, h)),
	}
}

// TestImageRowsMatchOld checks imageRows, read whole and in pieces, against
// the old full-size conversion (oldToGray) on every image type the
// decoders return.
func TestImageRowsMatchOld(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for name, img := range testImages(r, 23, 17) {
		want := oldToGray(img).pix
		src := newImageRows(img)
		w, h := src.size()
		if w*h != len(want) {
			t.Fatalf("%s: size %d×%d, want %d pixels", name, w, h, len(want))
		}
		got := make([]float64, w*h)
		for y := 0; y < h; y++ {
			for x0 := 0; x0 < w; x0 += 5 { // pieces of 5, the last shorter
				x1 := min(x0+5, w)
				src.row(y, x0, x1, got[y*w+x0:y*w+x1])
			}
		}
		checkSame(t, name, got, want)
	}
}

// TestResampleMatchesOld checks resampleRows against the old resample
// (listed weights, a full-size source) on random sources and sizes:
// downscales by whole and fractional factors, upscales, mixed, 1×1 and the
// same size, read in pieces of 1 to 1024 pixels.
func TestResampleMatchesOld(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	sizes := [][2]int{{24, 18}, {1, 1}, {1, 7}, {31, 1}, {5, 3}, {1100, 3}}
	targets := [][2]int{{24, 18}, {12, 9}, {8, 6}, {7, 5}, {3, 2}, {1, 1}, {50, 37}, {5, 40}, {60, 2}, {1, 9}, {17, 1}}
	for _, sz := range sizes {
		src := &gray{w: sz[0], h: sz[1], pix: make([]float64, sz[0]*sz[1])}
		for i := range src.pix {
			src.pix[i] = r.Float64()
		}
		for _, tg := range targets {
			w, h := tg[0], tg[1]
			want := make([]float64, w*h)
			oldResample(want, w, h, src)
			for _, chunk := range []int{1, 2, 5, 7, rowChunk} {
				got := make([]float64, w*h)
				for i := range got {
					got[i] = math.NaN() // resampleRows must write every pixel
				}
				resampleRows(got, w, h, src, chunk)
				checkSame(t, fmt.Sprintf("%d×%d → %d×%d, chunk %d", sz[0], sz[1], w, h, chunk), got, want)
			}
		}
	}
}

// encodedImages returns small images of every format decodeImage reads,
// w×h (the GIF's frame is smaller, off its origin), from r.
func encodedImages(t *testing.T, r *rand.Rand, w, h int) map[string][]byte {
	imgs := testImages(r, w, h)
	out := map[string][]byte{}
	enc := func(name string, f func(*bytes.Buffer) error) {
		var b bytes.Buffer
		if err := f(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = b.Bytes()
	}
	for _, k := range []string{"gray", "gray16", "nrgba", "nrgba64", "paletted"} {
		enc(k+" png", func(b *bytes.Buffer) error { return png.Encode(b, imgs[k]) })
	}
	// An opaque RGBA decodes to *image.RGBA (RGB, no alpha channel).
	opaque := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range opaque.Pix {
		opaque.Pix[i] = uint8(r.IntN(256)) | uint8(255*b2i(i%4 == 3))
	}
	enc("rgb png", func(b *bytes.Buffer) error { return png.Encode(b, opaque) })
	opaque16 := image.NewRGBA64(image.Rect(0, 0, w, h))
	for i := range opaque16.Pix {
		opaque16.Pix[i] = uint8(r.IntN(256)) | uint8(255*b2i(i%8 >= 6))
	}
	enc("rgb16 png", func(b *bytes.Buffer) error { return png.Encode(b, opaque16) })
	enc("jpeg", func(b *bytes.Buffer) error { return jpeg.Encode(b, opaque, &jpeg.Options{Quality: 90}) })
	enc("gray jpeg", func(b *bytes.Buffer) error { return jpeg.Encode(b, imgs["gray"], nil) })
	enc("gif", func(b *bytes.Buffer) error { return gif.Encode(b, imgs["paletted"], nil) })
	enc("gif frame off origin", func(b *bytes.Buffer) error {
		frame := imgs["paletted"].(*image.Paletted).SubImage(image.Rect(2, 3, w-1, h-2)).(*image.Paletted)
		return gif.EncodeAll(b, &gif.GIF{Image: []*image.Paletted{frame}, Delay: []int{0},
			Config: image.Config{ColorModel: frame.Palette, Width: w, Height: h}})
	})
	enc("bmp", func(b *bytes.Buffer) error { return bmp.Encode(b, opaque) })
	enc("nrgba bmp", func(b *bytes.Buffer) error { return bmp.Encode(b, imgs["nrgba"]) })
	enc("paletted bmp", func(b *bytes.Buffer) error { return bmp.Encode(b, imgs["paletted"]) })
	g := imgs["gray"].(*image.Gray)
	out["pgm"] = encodePGM(w, h, func(x, y int) uint8 { return g.GrayAt(x, y).Y })
	var p6 bytes.Buffer
	fmt.Fprintf(&p6, "P6 %d %d 1000\n", w, h) // 16-bit samples, maxval not a power of two
	for range 3 * w * h {
		binary.Write(&p6, binary.BigEndian, uint16(r.IntN(1001)))
	}
	out["ppm"] = p6.Bytes()
	return out
}

// TestDecodeImageToMatchesOld checks the decoding path of the sources
// (decodeImageTo: no full-size copy) against the old one (a full-size
// *gray, then resample) on every format, at the image's own size, the same
// size given, whole and fractional downscales, an upscale and a mixed
// resize; and decodeImage's full-size copy against the old one.
func TestDecodeImageToMatchesOld(t *testing.T) {
	const w, h = 24, 18
	r := rand.New(rand.NewPCG(1, 1))
	targets := [][2]int{{0, 0}, {w, h}, {12, 9}, {7, 5}, {1, 1}, {50, 37}, {5, 40}}
	types := map[string]bool{}
	for name, data := range encodedImages(t, r, w, h) {
		old, err := oldDecodeImage(data, 1<<20)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if src, _ := decodeRows(data, 1<<20, nil); src != nil {
			if ir, ok := src.(*imageRows); ok {
				types[fmt.Sprintf("%T", ir.img)] = true
			} else {
				types[fmt.Sprintf("%T", src)] = true
			}
		}
		full, err := decodeImage(data, 1<<20, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if full.w != old.w || full.h != old.h {
			t.Errorf("%s: decodeImage %d×%d, want %d×%d", name, full.w, full.h, old.w, old.h)
			continue
		}
		checkSame(t, name+" decodeImage", full.pix, old.pix)
		for _, tg := range targets {
			tw, th := tg[0], tg[1]
			if tw == 0 {
				tw, th = old.w, old.h
			}
			want := make([]float64, tw*th)
			oldResample(want, tw, th, old)
			dst := make([]float64, 3, 1000) // reused: resliced, not reallocated
			got, gw, gh, err := decodeImageTo(dst, tg[0], tg[1], data, 1<<20, nil)
			if err != nil {
				t.Errorf("%s → %v: %v", name, tg, err)
				continue
			}
			if gw != tw || gh != th {
				t.Errorf("%s → %v: size %d×%d, want %d×%d", name, tg, gw, gh, tw, th)
			}
			if tw*th <= cap(dst) && &got[0] != &dst[:1][0] {
				t.Errorf("%s → %v: dst not reused", name, tg)
			}
			checkSame(t, fmt.Sprintf("%s → %d×%d", name, tw, th), got, want)
		}
	}
	// Every type the decoders return for these formats was read.
	for _, typ := range []string{"*image.Gray", "*image.Gray16", "*image.RGBA", "*image.NRGBA", "*image.RGBA64",
		"*image.NRGBA64", "*image.Paletted", "*image.YCbCr", "*sources.pnmRows"} {
		if !types[typ] {
			t.Errorf("no test image decoded to %s (decoded: %v)", typ, types)
		}
	}
}

// TestDecodeImageToWide decodes an image wider than rowChunk, read in
// several pieces a row, against the old path.
func TestDecodeImageToWide(t *testing.T) {
	data := pngGray(t, 2*rowChunk+77, 3, func(x, y int) uint8 { return uint8(x*7 + y*31) })
	for _, tg := range [][2]int{{7, 1}, {3000, 3}, {2*rowChunk + 77, 2}} {
		want, err := oldDecodeResample(data, 1<<20, tg[0], tg[1])
		if err != nil {
			t.Fatal(err)
		}
		got, _, _, err := decodeImageTo(nil, tg[0], tg[1], data, 1<<20, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkSame(t, fmt.Sprintf("wide → %v", tg), got, want)
	}
}

// TestDecodeImageToMemory checks the stated bound of decodeImageTo: beside
// the decoder's own allocations (the decoded image, here a 1 MiB
// *image.Gray) it allocates 48·w + 40·h bytes and a row buffer, not a
// full-size copy (8 MiB here, which the old path made).
func TestDecodeImageToMemory(t *testing.T) {
	const side, w, h = 1024, 28, 28
	data := pngGray(t, side, side, func(x, y int) uint8 { return uint8(x ^ y) })
	dst := make([]float64, w*h)
	// allocated (limits_test.go) counts TotalAlloc; no test of this package
	// runs in parallel.
	decoder, _ := allocated(func() {
		if _, err := png.Decode(bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
	})
	var err error
	got, _ := allocated(func() { dst, _, _, err = decodeImageTo(dst, w, h, data, 1<<24, nil) })
	if err != nil {
		t.Fatal(err)
	}
	// 48·w + 40·h + 8·rowChunk is 10 KiB; DecodeConfig and the interface
	// values take a few hundred bytes more. 64 KiB leaves room, and is
	// 1/128 of the copy it rules out.
	const slack = 64 << 10
	if got > decoder+slack {
		t.Errorf("decodeImageTo allocated %d bytes, the decoder alone %d: %d more, want at most %d", got, decoder, got-decoder, slack)
	}
	t.Logf("decoder %d bytes, decodeImageTo %d (old path: a further %d for the copy)", decoder, got, 8*side*side)
}

// pngHeader returns a PNG signature and IHDR chunk claiming a w×h 8-bit
// gray image, and nothing more: decoding it fails, reading its size does
// not.
func pngHeader(w, h uint32) []byte {
	var ihdr bytes.Buffer
	ihdr.WriteString("IHDR")
	binary.Write(&ihdr, binary.BigEndian, [2]uint32{w, h})
	ihdr.Write([]byte{8, 0, 0, 0, 0}) // depth 8, gray, deflate, filter 0, not interlaced
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	binary.Write(&b, binary.BigEndian, uint32(ihdr.Len()-4))
	b.Write(ihdr.Bytes())
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(ihdr.Bytes()))
	return b.Bytes()
}

// TestImagePixelBoundBeforeDecoding checks that an image over
// MaxImagePixels is refused from its header, before it is decoded: a
// header alone fails as undecodable under a large enough bound, and as
// over the bound under a smaller one, at the cost of a few kilobytes even
// when it claims 40000×40000 pixels. In an Arrow stream it is a reject of
// its record, with its id, the size and the limit, and the records around
// it are read.
func TestImagePixelBoundBeforeDecoding(t *testing.T) {
	if _, _, _, err := decodeImageTo(nil, 4, 4, pngHeader(20, 20), 1000, nil); err == nil || !strings.Contains(err.Error(), "undecodable") {
		t.Fatalf("a PNG header of 20×20 under a bound of 1000 pixels: %v, want undecodable (decoding tried)", err)
	}
	var err error
	n, _ := allocated(func() { _, _, _, err = decodeImageTo(nil, 4, 4, pngHeader(40000, 40000), defaultMaxImagePixels, nil) })
	if err == nil || !strings.Contains(err.Error(), "40000×40000 pixels exceeds the limit of 16777216 pixels") {
		t.Errorf("a PNG header of 40000×40000: %v, want over the limit of 2²⁴ pixels", err)
	}
	if n > 64<<10 {
		t.Errorf("refusing a 40000×40000 PNG header allocated %d bytes", n)
	}

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "image", Type: arrow.BinaryTypes.Binary},
		{Name: "id", Type: arrow.BinaryTypes.String},
	}, nil)
	small := pngGray(t, 8, 8, func(x, y int) uint8 { return uint8(x * y) })
	rec := buildRecord(t, mem, schema, func(b *array.RecordBuilder) {
		b.Field(0).(*array.BinaryBuilder).AppendValues([][]byte{small, pngHeader(20, 20), small, pngGray(t, 11, 10, func(x, y int) uint8 { return 1 })}, nil)
		b.Field(1).(*array.StringBuilder).AppendValues([]string{"a", "header", "c", "wide"}, nil)
	})
	data := writeIPC(t, schema, false, rec)
	rec.Release()
	src := NewArrowStream(bytes.NewReader(data))
	src.Allocator, src.MaxImagePixels = mem, 100
	defer src.Close()
	c := readAll(t, src)
	if err := src.Err(); err != nil {
		t.Fatal(err)
	}
	if len(c.dense) != 2 || c.ids[0] != "a" || c.ids[1] != "c" {
		t.Errorf("read %d images, ids %v; want a and c", len(c.dense), c.ids)
	}
	wantRejects(t, c.rejects, map[int64]string{
		1: "image of 20×20 pixels exceeds the limit of 100 pixels",
		3: "image of 11×10 pixels exceeds the limit of 100 pixels",
	})
	for _, rj := range c.rejects {
		if want := map[int64]string{1: "header", 3: "wide"}[rj.Offset]; rj.ID != want {
			t.Errorf("reject %d has id %q, want %q", rj.Offset, rj.ID, want)
		}
	}
}
