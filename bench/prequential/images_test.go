package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nmfstream/nmfstream/internal/testenv"
	"github.com/nmfstream/nmfstream/sources"
)

// writeFashion writes a Fashion-MNIST folder whose class c holds counts[c]
// images, image i of class c having every pixel (c·10 + i) mod 256 but the
// first, which is 255, and class 0 an empty entry after its images.
func writeFashion(t *testing.T, counts [10]int) string {
	t.Helper()
	dir := t.TempDir()
	for c, n := range counts {
		var imgs []string
		for i := range n {
			px := make([]string, fashionSide*fashionSide)
			for j := range px {
				px[j] = fmt.Sprint((c*10 + i) % 256)
			}
			px[0] = "255"
			imgs = append(imgs, "["+strings.Join(px, ",")+"]")
		}
		if c == 0 {
			imgs = append(imgs, "[]") // as the package's class 0 has
		}
		body := `{"data":[` + strings.Join(imgs, ",") + `]}`
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.json", c)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestLoadFashion: every image is read once with its class, scaled to
// [0, 1], in an order that mixes the classes and is the same on every call;
// empty entries are skipped; n takes a prefix of that order.
func TestLoadFashion(t *testing.T) {
	counts := [10]int{3, 2, 2, 2, 2, 2, 2, 2, 2, 2}
	dir := writeFashion(t, counts)
	x, y, err := loadFashion(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r, c := x.Dims(); r != 21 || c != 784 {
		t.Fatalf("dims %d×%d, want 21×784", r, c)
	}
	seen := map[[2]int]bool{}
	var got [10]int
	inOrder := true
	for r, c := range y {
		got[c]++
		// The pixel value names the image: c·10 + i.
		i := int(x.At(r, 1)*255+0.5) - c*10
		if x.At(r, 0) != 1 || i < 0 || i >= counts[c] || seen[[2]int{c, i}] {
			t.Fatalf("row %d (class %d): pixels %v, %v: not an unseen image of its class", r, c, x.At(r, 0), x.At(r, 1))
		}
		seen[[2]int{c, i}] = true
		inOrder = inOrder && (r == 0 || y[r-1] <= c)
	}
	if got != counts {
		t.Errorf("class counts %v, want %v", got, counts)
	}
	if inOrder {
		t.Errorf("classes in file order %v: want them mixed", y)
	}
	x5, y5, err := loadFashion(dir, 5)
	if err != nil {
		t.Fatal(err)
	}
	for r := range 5 {
		if y5[r] != y[r] || x5.At(r, 1) != x.At(r, 1) {
			t.Fatalf("n = 5: row %d differs from the full load's", r)
		}
	}
	if r, _ := x5.Dims(); r != 5 {
		t.Errorf("n = 5: %d rows", r)
	}
	if _, _, err := loadFashion(dir, len(y)+1); err == nil || !strings.Contains(err.Error(), "the set has") {
		t.Errorf("n = %d, one more than the set holds: %v, want an error", len(y)+1, err)
	}
}

// TestLoadFashionErrors: a missing class file says how to fetch the data;
// a short image and a pixel out of range name their file and image.
func TestLoadFashionErrors(t *testing.T) {
	dir := writeFashion(t, [10]int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1})
	os.Remove(filepath.Join(dir, "9.json"))
	if _, _, err := loadFashion(dir, 0); err == nil || !strings.Contains(err.Error(), "fetch-data.sh") {
		t.Errorf("missing file: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "9.json"), []byte(`{"data":[[1,2,3]]}`), 0o644)
	if _, _, err := loadFashion(dir, 0); err == nil || !strings.Contains(err.Error(), "9.json: image 0 has 3 pixels") {
		t.Errorf("short image: %v", err)
	}
	px := strings.Repeat("0,", 783) + "256"
	os.WriteFile(filepath.Join(dir, "9.json"), []byte(`{"data":[[`+px+`]]}`), 0o644)
	if _, _, err := loadFashion(dir, 0); err == nil || !strings.Contains(err.Error(), "9.json: image 0: pixel 783 is 256") {
		t.Errorf("pixel out of range: %v", err)
	}
}

// TestFashionData checks the fetched package (scripts/fetch-data.sh):
// 70,000 images, 7,000 of each class (class 0's two empty entries skipped).
func TestFashionData(t *testing.T) {
	testenv.SkipUnlessLong(t, "reads Fashion-MNIST's 150 MB of JSON")
	dir := testenv.Data(t, "fashion")
	_, y, err := loadFashion(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got [10]int
	for _, c := range y {
		got[c]++
	}
	if want := [10]int{7000, 7000, 7000, 7000, 7000, 7000, 7000, 7000, 7000, 7000}; got != want {
		t.Errorf("class counts %v, want %v", got, want)
	}
}

// TestSplitImages: split --data digits writes DESIGN §7's split: the
// stratified third held out with every label, the pool with 10 labels a
// class, no image on both sides, and each image's pixels and label as the
// data set has them.
func TestSplitImages(t *testing.T) {
	x, y, err := load("digits", "", "")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tr, te := filepath.Join(dir, "tr.arrow"), filepath.Join(dir, "te.arrow")
	if err := runSplit([]string{"--data", "digits", "--seed", "3", "--train", tr, "--test", te}); err != nil {
		t.Fatal(err)
	}
	seen := map[int]string{}
	for _, f := range []string{tr, te} {
		src, err := sources.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		perClass := map[string]int{}
		for src.Next() {
			b := src.Batch()
			for i, id := range b.IDs {
				var k int
				if _, err := fmt.Sscan(id, &k); err != nil || k < 0 || k >= len(y) {
					t.Fatalf("%s: id %q", f, id)
				}
				if s, ok := seen[k]; ok {
					t.Fatalf("image %d in %s and %s", k, s, f)
				}
				seen[k] = f
				n++
				for j := range 64 {
					if got, want := b.Dense.At(i, j), x.At(k, j); math.Abs(got-want) > 1e-6*(1+want) {
						t.Fatalf("%s: image %d pixel %d is %v, want %v", f, k, j, got, want)
					}
				}
				if b.Labeled[i] {
					perClass[b.Labels[i]]++
					if b.Labels[i] != fmt.Sprint(y[k]) {
						t.Fatalf("%s: image %d labeled %s, want %d", f, k, b.Labels[i], y[k])
					}
				}
			}
		}
		src.Close()
		if err := src.Err(); err != nil {
			t.Fatal(err)
		}
		labeled := 0
		for _, c := range perClass {
			labeled += c
		}
		switch f {
		case tr:
			for c, m := range perClass {
				if m != 10 {
					t.Errorf("training pool: class %s has %d labels, want 10", c, m)
				}
			}
			if len(perClass) != 10 || n < 1150 || n > 1250 {
				t.Errorf("training pool: %d images, labels of %d classes", n, len(perClass))
			}
		case te:
			if labeled != n || n < 550 || n > 650 {
				t.Errorf("test: %d images, %d labeled; want about a third of 1,797, all labeled", n, labeled)
			}
		}
	}
	if len(seen) != len(y) {
		t.Errorf("%d of %d images written", len(seen), len(y))
	}
}

// TestSplitFlags: a flag of the text corpora is refused for an image set
// rather than ignored.
func TestSplitFlags(t *testing.T) {
	dir := t.TempDir()
	tr, te := filepath.Join(dir, "tr.arrow"), filepath.Join(dir, "te.arrow")
	for _, args := range [][]string{
		{"--data", "digits", "--frac", "0.2"},
		{"--data", "digits", "--train-n", "100"},
		{"--data", "digits", "--rare", "3:0.1"},
		{"--data", "digits", "--versus", "3"},
	} {
		err := runSplit(append(args, "--train", tr, "--test", te))
		if err == nil || !strings.Contains(err.Error(), "applies to the") {
			t.Errorf("%v: %v, want a refusal", args, err)
		}
	}
}

// TestFashionStreamChecks is issue 26's image checks on Fashion-MNIST, the
// image set no default was chosen on (BENCHMARKS.md, "A third image set"):
// the first 15,000 images of `make --data fashion:15000` (10% labeled, 100
// late) through `nmfstream stream` with its defaults, scored from outside.
// The default must score at least 0.5 point above `--codes off` and over a
// floor of 0.75 (measured 0.7663 against 0.7583), and SSKNMF's 1-NN over
// the labeled codes (`--predictor nearest`) at least 1 point above GNMF's
// over a floor of 0.69 (measured 0.7377 against 0.7050). It needs
// scripts/fetch-data.sh's fashion folder and NMFSTREAM_LONG=1 (four
// streams, about 20 seconds on 2 cores).
func TestFashionStreamChecks(t *testing.T) {
	testenv.SkipUnlessLong(t, "four Fashion-MNIST streams of 15,000 images through nmfstream stream")
	src := testenv.Data(t, "fashion")
	dir := t.TempDir()
	in := filepath.Join(dir, "f15.arrow")
	if err := runMake([]string{"--data", "fashion:15000", "--fashion", src, "--out", in}); err != nil {
		t.Fatal(err)
	}
	bin := buildNMFStream(t, dir)
	acc := func(name string, args ...string) float64 {
		pred := filepath.Join(dir, name+".jsonl")
		run := exec.Command(bin, append([]string{"stream", "--in", in, "--out", pred}, args...)...)
		if out, err := run.CombinedOutput(); err != nil {
			t.Fatalf("nmfstream stream %v: %v\n%s", args, err, out)
		}
		rep, err := score(in, filepath.Join(dir, "f15.truth.csv"), pred)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: accuracy %.4f, second half %.4f", name, rep.Accuracy, rep.SecondHalf)
		return rep.Accuracy
	}
	def, raw := acc("default"), acc("raw", "--codes", "off")
	if !(def >= 0.75) || !(def >= raw+0.005) {
		t.Errorf("default %.4f against raw only %.4f: want at least +0.005 over a floor of 0.75", def, raw)
	}
	gnmf := acc("gnmf-nearest", "--method", "gnmf", "--predictor", "nearest")
	ssknmf := acc("ssknmf-nearest", "--method", "ssknmf", "--predictor", "nearest")
	if !(gnmf >= 0.69) || !(ssknmf >= gnmf+0.01) {
		t.Errorf("code 1-NN: SSKNMF %.4f against GNMF %.4f: want at least +0.01 over a floor of 0.69", ssknmf, gnmf)
	}
}

// TestPixelPeer: on an image stream, peer --method knn predicts each image
// with the class of the nearest image (Euclidean) among those whose label
// arrived before it, as counted here by brute force on the digits stream
// make writes (a tenth labeled, 20 late); no prediction before the first
// label; nb and svm are refused, since they read text.
func TestPixelPeer(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "d.arrow")
	if err := runMake([]string{"--data", "digits", "--shuffle", "4", "--delay", "20", "--out", in}); err != nil {
		t.Fatal(err)
	}
	pred := filepath.Join(dir, "p.jsonl")
	if err := runPeer([]string{"--in", in, "--out", pred, "--method", "knn"}); err != nil {
		t.Fatal(err)
	}
	// The stream's records in order: images and their late labels.
	x, y, err := load("digits", "", "")
	if err != nil {
		t.Fatal(err)
	}
	src, err := sources.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	type event struct {
		id    int
		label bool
	}
	var events []event
	for src.Next() {
		b := src.Batch()
		si, li := 0, 0
		for si < b.Len() || li < len(b.LateLabels) {
			if li < len(b.LateLabels) && (si == b.Len() || b.LateLabels[li].Offset < b.Offsets[si]) {
				var k int
				fmt.Sscan(b.LateLabels[li].ID, &k)
				events = append(events, event{k, true})
				li++
				continue
			}
			var k int
			fmt.Sscan(b.IDs[si], &k)
			events = append(events, event{k, false})
			si++
		}
	}
	src.Close()
	var want []string
	var labeled []int
	for _, e := range events {
		if e.label {
			labeled = append(labeled, e.id)
			continue
		}
		best, bd := -1, math.Inf(1)
		for _, j := range labeled {
			var d float64
			for c := range 64 {
				t := x.At(e.id, c) - x.At(j, c)
				d += t * t
			}
			if d < bd {
				best, bd = j, d
			}
		}
		w := ""
		if best >= 0 {
			w = fmt.Sprint(y[best])
		}
		want = append(want, w)
	}
	body, err := os.ReadFile(pred)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(body)), "\n")
	if len(lines) != len(want) || len(want) != 1797 {
		t.Fatalf("%d predictions for %d images", len(lines), len(want))
	}
	for i, l := range lines {
		var p struct {
			Pred *string `json:"pred"`
		}
		if err := json.Unmarshal([]byte(l), &p); err != nil {
			t.Fatal(err)
		}
		got := ""
		if p.Pred != nil {
			got = *p.Pred
		}
		if got != want[i] {
			t.Fatalf("image %d: predicted %q, want %q", i, got, want[i])
		}
	}
	for _, m := range []string{"nb", "svm"} {
		if err := runPeer([]string{"--in", in, "--out", pred, "--method", m}); err == nil || !strings.Contains(err.Error(), "reads text") {
			t.Errorf("--method %s on images: %v, want a refusal", m, err)
		}
	}
}
