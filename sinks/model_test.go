package sinks_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/sinks"
	"github.com/nmfstream/nmfstream/sources"
	"github.com/nmfstream/nmfstream/stages"
)

// randomRows returns n×d non-negative rows with some exact zeros.
func randomRows(n, d int, rnd *rand.Rand) *mat.Dense {
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			if rnd.IntN(4) > 0 {
				x.Set(i, j, rnd.Float64()*16)
			}
		}
	}
	return x
}

// fittedSnapshot fits GNMF on random dense data and returns the fitted
// model and its snapshot, as nmfstream fit builds it.
func fittedSnapshot(t *testing.T) (*model.GNMF, *model.Snapshot) {
	t.Helper()
	rnd := rand.New(rand.NewPCG(1, 1))
	x := randomRows(60, 12, rnd)
	labels := make([]int, 60)
	for i := range labels {
		labels[i] = -1
		if i%5 == 0 {
			labels[i] = i % 3
		}
	}
	g := &model.GNMF{Common: model.Common{Rank: 4, MaxIter: 30, Src: rand.NewPCG(1, 1)}}
	if err := g.Fit(model.DenseRows(x), labels); err != nil {
		t.Fatal(err)
	}
	pr := g.Projector(model.ProjectGraph)
	s := &model.Snapshot{
		Version:    model.SnapshotVersion,
		Method:     "gnmf",
		Params:     map[string]string{"rank": "4", "seed": "1"},
		U:          mat.DenseCopyOf(g.Basis()),
		V:          mat.DenseCopyOf(g.Codes()),
		TrainDense: x,
		Graph:      graph.KNN{K: graph.DefaultK},
		Alpha:      pr.Alpha,
		Classes:    []string{"a", "b", "c"},
		Labels:     labels,
		Form:       "dense",
		Extra:      map[string]*mat.Dense{"tau": mat.NewDense(1, 3, []float64{0.25, 0.5, 0.25})},
	}
	return g, s
}

func roundTrip(t *testing.T, s *model.Snapshot) *model.Snapshot {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var buf bytes.Buffer
	if err := sinks.WriteModel(&buf, s, mem); err != nil {
		t.Fatal(err)
	}
	got, err := sources.ReadModel(bytes.NewReader(buf.Bytes()), mem)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// sameDense reports whether a and b have the same shape and bit-identical
// entries (== on every float64: the format stores float64 bits).
func sameDense(t *testing.T, name string, a, b *mat.Dense) {
	t.Helper()
	if (a == nil) != (b == nil) {
		t.Fatalf("%s: nil %v vs %v", name, a == nil, b == nil)
	}
	if a == nil {
		return
	}
	ar, ac := a.Dims()
	br, bc := b.Dims()
	if ar != br || ac != bc {
		t.Fatalf("%s: %d×%d, want %d×%d", name, br, bc, ar, ac)
	}
	for i := 0; i < ar; i++ {
		for j := 0; j < ac; j++ {
			if a.At(i, j) != b.At(i, j) {
				t.Fatalf("%s(%d, %d) = %v, want %v", name, i, j, b.At(i, j), a.At(i, j))
			}
		}
	}
}

func TestModelRoundTripDense(t *testing.T) {
	g, s := fittedSnapshot(t)
	got := roundTrip(t, s)
	sameDense(t, "U", s.U, got.U)
	sameDense(t, "V", s.V, got.V)
	sameDense(t, "train", s.TrainDense, got.TrainDense)
	sameDense(t, "extra tau", s.Extra["tau"], got.Extra["tau"])
	if got.Method != s.Method || got.Alpha != s.Alpha || got.Graph != s.Graph || got.Weighting != s.Weighting ||
		got.Projection != s.Projection || got.Form != s.Form || got.Version != s.Version {
		t.Errorf("scalars differ: got %+v", got)
	}
	if strings.Join(got.Classes, ",") != "a,b,c" || got.Params["rank"] != "4" {
		t.Errorf("classes %q params %v", got.Classes, got.Params)
	}
	for i := range s.Labels {
		if got.Labels[i] != s.Labels[i] {
			t.Fatalf("label %d = %d, want %d", i, got.Labels[i], s.Labels[i])
		}
	}

	// Projection from the loaded model equals projection from the fitted
	// one, bit for bit, for every projection.
	rnd := rand.New(rand.NewPCG(2, 2))
	xnew := model.DenseRows(randomRows(17, 12, rnd))
	for _, p := range []model.Projection{model.ProjectGraph, model.ProjectNNLS, model.ProjectClampedPinv, model.ProjectPinv} {
		var want, have mat.Dense
		if err := g.Projector(p).ProjectTo(&want, xnew); err != nil {
			t.Fatal(err)
		}
		pr, err := got.Projector(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := pr.ProjectTo(&have, xnew); err != nil {
			t.Fatal(err)
		}
		sameDense(t, "codes "+p.String(), &want, &have)
	}
}

func TestModelRoundTripSparseText(t *testing.T) {
	docs := []string{"the cat sat", "a dog ran far", "cats and dogs", "the dog sat down", "far away cat", "run dog run"}
	tf := &stages.TFIDF{}
	x, err := tf.FitTransform(docs)
	if err != nil {
		t.Fatal(err)
	}
	vec, err := tf.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	g := &model.GNMF{Common: model.Common{Rank: 2, MaxIter: 20}, Alpha: 1}
	g.Graph.K = 2
	if err := g.Fit(model.SparseRows(x), nil); err != nil {
		t.Fatal(err)
	}
	s := &model.Snapshot{
		Version: model.SnapshotVersion, Method: "gnmf",
		U: mat.DenseCopyOf(g.Basis()), V: mat.DenseCopyOf(g.Codes()), TrainSparse: x,
		Graph: graph.KNN{K: 2}, Alpha: 1, Labels: []int{-1, -1, -1, -1, -1, -1},
		Form: "text", Vectorizer: vec,
	}
	got := roundTrip(t, s)
	if got.TrainSparse == nil {
		t.Fatal("no sparse training rows")
	}
	sameDense(t, "train", mat.DenseCopyOf(x), mat.DenseCopyOf(got.TrainSparse))
	if !bytes.Equal(got.Vectorizer, vec) {
		t.Error("vectorizer bytes differ")
	}
	var tf2 stages.TFIDF
	if err := tf2.UnmarshalBinary(got.Vectorizer); err != nil {
		t.Fatal(err)
	}
	a, _ := tf.Transform([]string{"the cat ran"})
	b, _ := tf2.Transform([]string{"the cat ran"})
	sameDense(t, "tf-idf", mat.DenseCopyOf(a), mat.DenseCopyOf(b))
	var want, have mat.Dense
	if err := g.Projector(model.ProjectGraph).ProjectTo(&want, model.SparseRows(a)); err != nil {
		t.Fatal(err)
	}
	pr, err := got.Projector(model.ProjectGraph)
	if err != nil {
		t.Fatal(err)
	}
	if err := pr.ProjectTo(&have, model.SparseRows(b)); err != nil {
		t.Fatal(err)
	}
	sameDense(t, "codes", &want, &have)
}

// writeEmpty writes an Arrow IPC file with schema sc and no rows.
func writeEmpty(t *testing.T, w *bytes.Buffer, sc *arrow.Schema) {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fw, err := ipc.NewFileWriter(f, ipc.WithSchema(sc))
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	w.Write(b)
}

func TestModelErrors(t *testing.T) {
	_, s := fittedSnapshot(t)
	var buf bytes.Buffer
	if err := sinks.WriteModel(&buf, s, nil); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()

	// Truncated: every prefix of the file fails with an error, never a panic.
	for _, n := range []int{0, 5, 100, len(good) / 2, len(good) - 1} {
		if _, err := sources.ReadModel(bytes.NewReader(good[:n]), nil); err == nil {
			t.Errorf("prefix of %d bytes: no error", n)
		}
	}

	// Another version.
	s2 := *s
	s2.Version = model.SnapshotVersion + 1
	if err := sinks.WriteModel(&bytes.Buffer{}, &s2, nil); !errors.Is(err, model.ErrSnapshotVersion) {
		t.Errorf("writing version %d: %v, want ErrSnapshotVersion", s2.Version, err)
	}
	// A file of another version is refused on read, naming both versions.
	md := arrow.NewMetadata([]string{sinks.ModelMetaFormat, sinks.ModelMetaVersion, sinks.ModelMetaHeader},
		[]string{sinks.ModelFormat, "99", "{}"})
	var other bytes.Buffer
	writeEmpty(t, &other, sinks.ModelSchema(&md))
	if _, err := sources.ReadModel(bytes.NewReader(other.Bytes()), nil); !errors.Is(err, model.ErrSnapshotVersion) || !strings.Contains(err.Error(), "99") {
		t.Errorf("version 99: %v, want ErrSnapshotVersion naming 99", err)
	}
	// An Arrow file that is not a model.
	var plain bytes.Buffer
	writeEmpty(t, &plain, sinks.ModelSchema(nil))
	if _, err := sources.ReadModel(bytes.NewReader(plain.Bytes()), nil); err == nil || !strings.Contains(err.Error(), "not an nmfstream model") {
		t.Errorf("plain Arrow file: %v", err)
	}

	// Shapes that disagree are refused on write (and so on read).
	s3 := *s
	s3.Labels = s.Labels[:3]
	if err := sinks.WriteModel(&bytes.Buffer{}, &s3, nil); err == nil || !strings.Contains(err.Error(), "labels") {
		t.Errorf("short labels: %v", err)
	}
	s4 := *s
	s4.V = mat.NewDense(3, 5, nil)
	if err := sinks.WriteModel(&bytes.Buffer{}, &s4, nil); err == nil || !strings.Contains(err.Error(), "ranks differ") {
		t.Errorf("rank mismatch: %v", err)
	}
	s5 := *s
	s5.U = mat.DenseCopyOf(s.U)
	s5.U.Set(0, 0, -1)
	if err := sinks.WriteModel(&bytes.Buffer{}, &s5, nil); err == nil {
		t.Error("negative U accepted")
	}

	// SaveModel then LoadModel through a file; a missing file names it.
	dir := t.TempDir()
	path := filepath.Join(dir, "m.model")
	if err := sinks.SaveModel(path, s); err != nil {
		t.Fatal(err)
	}
	if _, err := sources.LoadModel(path); err != nil {
		t.Fatal(err)
	}
	if _, err := sources.LoadModel(filepath.Join(dir, "none")); err == nil || !strings.Contains(err.Error(), "none") {
		t.Errorf("missing file: %v", err)
	}
	if err := os.WriteFile(path, good[:len(good)/3], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := sources.LoadModel(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("truncated file: %v", err)
	}
}
