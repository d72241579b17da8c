package main

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// serverFromFlags builds serve's server from command-line flags, as
// runServe does (before it listens).
func serverFromFlags(args ...string) (*server, error) {
	fs := newFlags("serve", serveSynopsis, io.Discard)
	var o serveOptions
	serveFlags(fs, &o)
	var cfg onlineConfig
	addOnlineFlags(fs, &cfg)
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	return newServer(fs, &o, cfg, io.Discard)
}

// grayPNG encodes a black w×h 8-bit gray PNG.
func grayPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// imageBody returns an Arrow IPC stream of records with an image and an id
// column.
func imageBody(t *testing.T, ids []string, images [][]byte) []byte {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "image", Type: arrow.BinaryTypes.Binary}, {Name: "id", Type: arrow.BinaryTypes.String}}, nil)
	bld := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer bld.Release()
	bld.Field(0).(*array.BinaryBuilder).AppendValues(images, nil)
	bld.Field(1).(*array.StringBuilder).AppendValues(ids, nil)
	rec := bld.NewRecord()
	defer rec.Release()
	var body bytes.Buffer
	w := ipc.NewWriter(&body, ipc.WithSchema(schema))
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return body.Bytes()
}

// rejectsOf returns the rejects of a /v1/records answer as "offset id:
// reason" lines.
func rejectsOf(m map[string]any) []string {
	var out []string
	rej, _ := m["rejected"].([]any)
	for _, r := range rej {
		r, _ := r.(map[string]any)
		out = append(out, fmt.Sprintf("%v %v: %v", r["offset"], r["id"], r["reason"]))
	}
	return out
}

// TestServeImagePixelBound posts Arrow bodies of images to a service
// started with --max-image-pixels 1000: the image of 40×40 pixels is a
// reject of its record naming its size and the limit, the records around
// it are learned, and the service goes on serving the next request.
func TestServeImagePixelBound(t *testing.T) {
	s, err := serverFromFlags("--max-image-pixels", "1000", "--window", "300", "--batch", "10")
	if err != nil {
		t.Fatal(err)
	}
	url, stop := startServer(t, s)
	small := grayPNG(t, 6, 6)
	st, m := post(t, url, "/v1/records", mediaArrow, imageBody(t,
		[]string{"a", "big", "c", "edge"}, [][]byte{small, grayPNG(t, 40, 40), small, grayPNG(t, 40, 25)}))
	preds, _ := m["predictions"].([]any)
	rej := rejectsOf(m)
	if st != 200 || len(preds) != 3 || len(rej) != 1 ||
		!strings.HasPrefix(rej[0], "1 big: ") || !strings.Contains(rej[0], "image of 40×40 pixels exceeds the limit of 1000 pixels") {
		t.Errorf("a 40×40 image among three of at most 1000 pixels: %d, %d predictions, rejects %q; want 200, 3 and the 40×40 one (offset 1, id big) over 1000 pixels", st, len(preds), rej)
	}
	st, m = post(t, url, "/v1/records", mediaArrow, imageBody(t, []string{"d", "e"}, [][]byte{small, small}))
	if preds, _ := m["predictions"].([]any); st != 200 || len(preds) != 2 {
		t.Errorf("the next request: %d, %v; want 200 and 2 predictions", st, m)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// TestServeImagePixelDefault checks serve's default --max-image-pixels,
// 2²² = 4,194,304 pixels: an image of 2048×2048 is learned, one of
// 2049×2048 is a reject.
func TestServeImagePixelDefault(t *testing.T) {
	s, err := serverFromFlags("--window", "300", "--batch", "10")
	if err != nil {
		t.Fatal(err)
	}
	url, stop := startServer(t, s)
	st, m := post(t, url, "/v1/records", mediaArrow, imageBody(t,
		[]string{"small", "at", "over"}, [][]byte{grayPNG(t, 8, 8), grayPNG(t, 2048, 2048), grayPNG(t, 2049, 2048)}))
	preds, _ := m["predictions"].([]any)
	rej := rejectsOf(m)
	if st != 200 || len(preds) != 2 || len(rej) != 1 || !strings.Contains(rej[0], "2049×2048 pixels exceeds the limit of 4194304 pixels") {
		t.Errorf("images of 2048×2048 and 2049×2048 under the default bound: %d, %d predictions, rejects %q; want 200, 2 and the 2049×2048 one", st, len(preds), rej)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// TestServeMaxImagePixelsFlag checks that serve refuses a bound that is not
// positive, as a usage error naming the flag, before it listens: a zero
// would read as the file sources' default, 2²⁴, silently.
func TestServeMaxImagePixelsFlag(t *testing.T) {
	for _, v := range []string{"0", "-1"} {
		_, err := serverFromFlags("--max-image-pixels", v)
		if !errors.Is(err, errUsage) || !strings.Contains(fmt.Sprint(err), "max-image-pixels") {
			t.Errorf("--max-image-pixels %s: %v, want a usage error naming it", v, err)
		}
	}
}
