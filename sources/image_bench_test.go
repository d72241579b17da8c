package sources

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
	"testing"
	"time"
)

// BenchmarkDecodeImageLarge decodes a 4096×4096 image (2²⁴ pixels, the
// default MaxImagePixels: a PNG of 8-bit NRGBA or 16-bit gray, a raw PPM
// of 8-bit samples, a raw PGM of 16-bit samples, a plain PGM) and resizes
// it to 64×64, three ways:
//
//   - old: the path before decodeImageTo (image_old_test.go): the decoded
//     image converted to a full-size float64 copy, then resampled; a PGM or
//     PPM read by the old reader (oldDecodePNM: 8 bytes a sample, then the
//     copy);
//   - copy: decodeImage then resample (image_ref_test.go), the same two
//     steps on the new conversion;
//   - to: decodeImageTo, which resamples from the decoded image a row at a
//     time, without the copy; a raw PGM or PPM is read in place from the
//     input.
//
// Beside ns/op, B/op and allocs/op it reports peak-B, the most heap one run
// held beyond what was live before it (peakHeap), the figure that bounds
// what concurrent decodes take. Run it with
//
//	go test ./sources -run '^$' -bench DecodeImageLarge -benchtime 3x
func BenchmarkDecodeImageLarge(b *testing.B) {
	const side, w, h = 4096, 64, 64
	encodePNG := func(m image.Image) []byte {
		var buf bytes.Buffer
		if err := png.Encode(&buf, m); err != nil {
			b.Fatal(err)
		}
		return buf.Bytes()
	}
	// encodePNM writes a PGM or PPM header, then its raster: samples
	// samples, the k-th written by put(b, k).
	encodePNM := func(header string, samples int, put func(b *bytes.Buffer, k int)) []byte {
		var buf bytes.Buffer
		buf.WriteString(header)
		for k := range samples {
			put(&buf, k)
		}
		return buf.Bytes()
	}
	for _, kind := range []struct {
		name string
		data func() []byte
	}{
		// Colour with alpha: decoded as *image.NRGBA, 4 bytes a pixel.
		{"nrgba", func() []byte {
			m := image.NewNRGBA(image.Rect(0, 0, side, side))
			for y := 0; y < side; y++ {
				for x := 0; x < side; x++ {
					m.SetNRGBA(x, y, color.NRGBA{uint8(x), uint8(y), uint8(x ^ y), uint8(128 + x%128)})
				}
			}
			return encodePNG(m)
		}},
		// 16-bit gray: *image.Gray16, 2 bytes a pixel.
		{"gray16", func() []byte {
			m := image.NewGray16(image.Rect(0, 0, side, side))
			for y := 0; y < side; y++ {
				for x := 0; x < side; x++ {
					m.SetGray16(x, y, color.Gray16{uint16(x*16 + y)})
				}
			}
			return encodePNG(m)
		}},
		// Raw PPM, 8-bit samples: the old reader's worst case, 32 bytes a
		// pixel.
		{"ppm", func() []byte {
			return encodePNM(fmt.Sprintf("P6 %d %d 255\n", side, side), 3*side*side, func(b *bytes.Buffer, k int) {
				b.WriteByte(byte(k*7 + k/(3*side)))
			})
		}},
		// Raw PGM, 16-bit samples under a maxval of 4095.
		{"pgm16", func() []byte {
			return encodePNM(fmt.Sprintf("P5 %d %d 4095\n", side, side), side*side, func(b *bytes.Buffer, k int) {
				v := (k*16 + k/side) & 4095
				b.Write([]byte{byte(v >> 8), byte(v)})
			})
		}},
		// Plain PGM, 8-bit samples as decimal text.
		{"pgm-plain", func() []byte {
			return encodePNM(fmt.Sprintf("P2 %d %d 255\n", side, side), side*side, func(b *bytes.Buffer, k int) {
				b.WriteString(strconv.Itoa((k + k/side) & 255))
				b.WriteByte(" \n"[b2i(k%side == side-1)])
			})
		}},
	} {
		data := kind.data()
		dst := make([]float64, w*h)
		for _, path := range []struct {
			name string
			run  func() error
		}{
			{"old", func() error {
				_, err := oldDecodeResample(data, defaultMaxImagePixels, w, h)
				return err
			}},
			{"copy", func() error {
				g, err := decodeImage(data, defaultMaxImagePixels, nil)
				if err == nil {
					resample(dst, w, h, g)
				}
				return err
			}},
			{"to", func() error {
				var err error
				dst, _, _, err = decodeImageTo(dst, w, h, data, defaultMaxImagePixels, nil)
				return err
			}},
		} {
			b.Run(kind.name+"/"+path.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := path.run(); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				peak := peakHeap(func() {
					if err := path.run(); err != nil {
						b.Fatal(err)
					}
				})
				b.ReportMetric(float64(peak), "peak-B")
			})
		}
	}
}

// peakHeap runs f once and returns the most heap its run held beyond what
// was live before it: the runtime's /memory/classes/heap/objects:bytes
// (live objects and dead ones not yet swept), sampled every 50 µs or so by
// a second goroutine, with the garbage collector run at 5% heap growth so
// that dead objects go soon. A sample may miss a peak shorter than its
// period; a buffer kept for a whole decode or conversion (milliseconds) is
// not missed.
func peakHeap(f func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var mu sync.Mutex // guards sample's reads
	read := func() uint64 {
		mu.Lock()
		defer mu.Unlock()
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	base := read()
	peak := base
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			peak = max(peak, read())
			select {
			case <-done:
				return
			case <-time.After(50 * time.Microsecond):
			}
		}
	})
	f()
	close(done)
	wg.Wait()
	return max(peak, read()) - base
}
