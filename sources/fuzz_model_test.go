package sources_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/sinks"
	"github.com/nmfstream/nmfstream/sources"
)

// modelSeed returns a small fitted model file, as nmfstream fit writes it.
func modelSeed(f testing.TB) []byte {
	rnd := rand.New(rand.NewPCG(1, 1))
	x := mat.NewDense(20, 6, nil)
	for i := range x.RawMatrix().Data {
		x.RawMatrix().Data[i] = rnd.Float64()
	}
	labels := make([]int, 20)
	for i := range labels {
		labels[i] = i%4 - 1 // −1 (unlabeled), 0, 1, 2
	}
	g := &model.GNMF{Common: model.Common{Rank: 3, MaxIter: 5, Src: rand.NewPCG(1, 1)}}
	if err := g.Fit(model.DenseRows(x), labels); err != nil {
		f.Fatal(err)
	}
	s := &model.Snapshot{
		Version: model.SnapshotVersion, Method: "gnmf", Params: map[string]string{"rank": "3"},
		U: mat.DenseCopyOf(g.Basis()), V: mat.DenseCopyOf(g.Codes()), TrainDense: x,
		Graph: graph.KNN{K: graph.DefaultK}, Alpha: g.Projector(model.ProjectGraph).Alpha,
		Classes: []string{"a", "b", "c"}, Labels: labels, Form: "dense",
	}
	var buf bytes.Buffer
	if err := sinks.WriteModel(&buf, s, nil); err != nil {
		f.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzModel checks that no model file, however corrupt, crashes, hangs or
// exhausts memory in sources.ReadModel: it reads a valid snapshot or fails.
// Each input is read as it is (a changed byte fails the checksum) and
// resealed, its checksum recomputed (reseal), so that the decoder behind the
// checksum is fuzzed too.
func FuzzModel(f *testing.F) {
	f.Add(modelSeed(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		tm := time.AfterFunc(10*time.Second, func() { panic("FuzzModel: input took over 10 s") })
		defer tm.Stop()
		for _, in := range [][]byte{data, reseal(data)} {
			if in == nil {
				continue
			}
			s, err := sources.ReadModel(bytes.NewReader(in), nil)
			if err != nil {
				continue
			}
			if err := s.Validate(); err != nil {
				t.Fatalf("ReadModel returned an invalid snapshot: %v", err)
			}
		}
	})
}

// hexRun matches a SHA-256 in lower-case hex, as the model file's checksum
// metadata holds it.
var hexRun = regexp.MustCompile(`[0-9a-f]{64}`)

// reseal returns a copy of the model file b with its checksum recomputed
// as sinks.WriteModel computes it (the SHA-256 of the file with the
// checksum's two copies read as '0's), or nil if b does not hold exactly
// two equal checksums.
func reseal(b []byte) []byte {
	at := hexRun.FindAllIndex(b, -1)
	if len(at) != 2 || !bytes.Equal(b[at[0][0]:at[0][1]], b[at[1][0]:at[1][1]]) {
		return nil
	}
	out := bytes.Clone(b)
	for _, r := range at {
		copy(out[r[0]:r[1]], bytes.Repeat([]byte{'0'}, 64))
	}
	sum := sha256.Sum256(out)
	for _, r := range at {
		hex.Encode(out[r[0]:r[1]], sum[:])
	}
	return out
}

// TestReseal checks reseal on a valid file (unchanged) and on a file with a
// changed byte, which reads again once resealed.
func TestReseal(t *testing.T) {
	b := modelSeed(t)
	if r := reseal(b); !bytes.Equal(r, b) {
		t.Fatal("resealing a valid model file changed it")
	}
	i := len(b) / 2
	for ; i < len(b) && hexRun.Match(b[max(0, i-64):min(len(b), i+64)]); i++ {
	}
	c := bytes.Clone(b)
	c[i] ^= 0x01
	if _, err := sources.ReadModel(bytes.NewReader(c), nil); err == nil {
		t.Fatal("a changed byte read without error")
	}
	if _, err := sources.ReadModel(bytes.NewReader(reseal(c)), nil); err != nil && strings.Contains(err.Error(), "checksum") {
		t.Fatalf("resealed file still fails its checksum: %v", err)
	}
}
