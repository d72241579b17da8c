package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nmfstream/nmfstream/sources"
	"github.com/nmfstream/nmfstream/stages"
)

// TestStreamArrowCodes checks that stream's Arrow output holds each
// sample's arrival code (docs/DESIGN.md §6: id, code, pred, score): every
// row's code is the one the library's Learner, configured as the command
// configures it and fed the same batches, gives that prediction
// (stages.Prediction.Code), to float32; rows before the first fit have
// none, and so the output's zeros; and after it every code is non-negative
// and not all zero. JSON lines keep the prediction alone.
func TestStreamArrowCodes(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "d.arrow")
	writeDigitsStream(t, in, 0.1, 100)
	out := filepath.Join(dir, "p.arrow")
	args := []string{"-in", in, "-rank", "10", "-window", "300"}
	if code, _, e := runCmd(t, append([]string{"stream", "-out", out}, args...)...); code != 0 {
		t.Fatal(e)
	}
	ids, codes, _, _ := readResults(t, out)
	if len(codes) != len(ids) || len(ids) < 1700 {
		t.Fatalf("%d ids and %d codes", len(ids), len(codes))
	}

	o, err := parseStreamFlags(args, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	l := o.cfg.learner()
	src, err := o.csvf.openStream(in, o.cfg.Batch)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	rd := sources.NewReader(src)
	want := map[string][]float64{}
	for {
		b, err := rd.Read(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		st, err := l.Learn(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range st.Predictions {
			want[p.ID] = p.Code
		}
	}
	coded := 0
	for i, id := range ids {
		w, ok := want[id]
		if !ok {
			t.Fatalf("row %d: id %q was not predicted in process", i, id)
		}
		if w == nil {
			for _, v := range codes[i] {
				if v != 0 {
					t.Fatalf("row %d (%s): a code before the first fit: %v", i, id, codes[i])
				}
			}
			continue
		}
		coded++
		var sum float32
		for j, v := range codes[i] {
			if v != float32(w[j]) || v < 0 {
				t.Fatalf("row %d (%s): code %v, the Learner's %v", i, id, codes[i], w)
			}
			sum += v
		}
		if sum == 0 {
			t.Errorf("row %d (%s): an all-zero code", i, id)
		}
	}
	if coded < len(ids)-300 {
		t.Errorf("%d of %d rows coded", coded, len(ids))
	}

	jl := filepath.Join(dir, "p.jsonl")
	if code, _, e := runCmd(t, append([]string{"stream", "-out", jl}, args...)...); code != 0 {
		t.Fatal(e)
	}
	b, err := os.ReadFile(jl)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 80*len(ids) {
		t.Errorf("JSON lines of %d bytes for %d predictions: codes written too?", len(b), len(ids))
	}
}

// TestArrivalCodes checks stream's codes for its --out row by row: a
// prediction without a code, or with one beyond float32 or NaN, gets a
// null code (the sink would refuse it and stop the stream) and the others
// keep theirs (one such code used to null its whole batch's); a batch
// without any code, or an output without code columns, has none.
func TestArrivalCodes(t *testing.T) {
	ps := []stages.Prediction{{Code: []float64{1, 2}}, {}, {Code: []float64{1e300, 0}}, {Code: []float64{math.NaN(), 2}}, {Code: []float64{3, 4}}}
	c, none := arrivalCodes(ps, 2)
	if c == nil || !slices.Equal(none, []bool{false, true, true, true, false}) || c.At(0, 1) != 2 || c.At(4, 0) != 3 {
		t.Errorf("codes %v, none %v; want rows 0 and 4 kept, 1 to 3 null", c, none)
	}
	if c, none := arrivalCodes(ps, 0); c != nil || none != nil {
		t.Error("codes for an output without code columns")
	}
	if c, none := arrivalCodes(ps[1:4], 2); c != nil || none != nil {
		t.Errorf("a batch without a finite code: %v, %v; want nil, nil", c, none)
	}
}

// TestStreamOneClassSummary checks that a stream whose labels name one
// class says the codes' NMI is undefined, rather than printing NaN (JSON
// has null there).
func TestStreamOneClassSummary(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("id,a,b,c,d,label\n")
	rng := rand.New(rand.NewPCG(3, 3))
	for i := range 300 {
		label := ""
		if i%10 == 0 {
			label = "only"
		}
		fmt.Fprintf(&b, "%d,%.3f,%.3f,%.3f,%.3f,%s\n", i, rng.Float64(), rng.Float64(), rng.Float64(), rng.Float64(), label)
	}
	in := filepath.Join(dir, "one.csv")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd(t, "stream", "--in", in, "--out", filepath.Join(dir, "p.jsonl"), "--rank", "3")
	if code != 0 {
		t.Fatalf("stream: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "NMI of k-means undefined") || strings.Contains(out, "NaN") {
		t.Errorf("want the NMI said undefined and no NaN; the summary:\n%s", out)
	}
}
