//go:build nats

package distributed

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/nmfstream/nmfstream/internal/testenv"
	"github.com/nmfstream/nmfstream/stages"
)

// denseAppendConfusion is the reference writer of an answer's confusion:
// the classes, then the nonzero cells found by scanning the dense rows in
// row-major order (rows past the classes and columns past none left out).
func denseAppendConfusion(b []byte, cf stages.Confusion) []byte {
	k := len(cf.Classes)
	b = binary.AppendUvarint(b, uint64(k))
	for _, name := range cf.Classes {
		b = appendString(b, name)
	}
	rows := cf.N[:min(len(cf.N), k)]
	nz := 0
	for _, row := range rows {
		for _, v := range row[:min(len(row), k+1)] {
			if v != 0 {
				nz++
			}
		}
	}
	b = binary.AppendUvarint(b, uint64(nz))
	for i, row := range rows {
		for j, v := range row[:min(len(row), k+1)] {
			if v != 0 {
				b = binary.AppendVarint(binary.AppendUvarint(binary.AppendUvarint(b, uint64(i)), uint64(j)), v)
			}
		}
	}
	return b
}

// scoreBits returns sc's values' bits, NaNs comparable.
func scoreBits(sc stages.Scores) [3]uint64 {
	return [3]uint64{math.Float64bits(sc.BalancedAccuracy), math.Float64bits(sc.MacroF1), math.Float64bits(sc.Majority)}
}

// confusionCase is testenv.RandomConfusion as a stages.Confusion.
func confusionCase(rnd *rand.Rand, names []string, least int, odd bool) stages.Confusion {
	classes, n := testenv.RandomConfusion(rnd, names, least, odd)
	return stages.Confusion{Classes: classes, N: n}
}

// cellsOf returns a Learner-shaped confusion c in its sparse form.
func cellsOf(c stages.Confusion) stages.Confusion {
	out := stages.Confusion{Classes: c.Classes}
	for i, row := range c.N {
		for j, v := range row {
			if v != 0 {
				out.Cells = append(out.Cells, stages.Cell{Row: i, Col: j, N: v})
			}
		}
	}
	return out
}

// caseNames returns n class names.
func caseNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("label %d", i)
	}
	return out
}

// TestAppendConfusionCells: an answer's confusion is written to the byte
// as the dense scan wrote it, from a dense confusion of any shape and from
// the sparse form of a Learner's, which the reader reads back as the
// dense counts.
func TestAppendConfusionCells(t *testing.T) {
	names := caseNames(30)
	for seed := range uint64(300) {
		rnd := rand.New(rand.NewPCG(seed, 17))
		odd := seed%3 == 2
		c := confusionCase(rnd, names, 0, odd)
		want := denseAppendConfusion(nil, c)
		if got := appendConfusion(nil, c); !bytes.Equal(got, want) {
			t.Fatalf("seed %d: dense %+v written as % x, want % x", seed, c, got, want)
		}
		if odd {
			continue
		}
		sparse := cellsOf(c)
		if got := appendConfusion(nil, sparse); !bytes.Equal(got, want) {
			t.Fatalf("seed %d: cells %+v written as % x, want % x", seed, sparse, got, want)
		}
		r := &answerReader{b: want}
		back := r.confusion()
		if r.err != nil || len(r.b) != 0 || !reflect.DeepEqual(denseConfusion(back), c) {
			t.Fatalf("seed %d: read back %+v (%v, %d bytes left), want %+v", seed, back, r.err, len(r.b), c)
		}
	}
}

// labeledLearner returns an owner's Learner that learned n clustered
// samples of c classes ("c<cluster>"), each labeled with its sample, in
// batches of 10: its scorer holds prequential predictions, right and
// wrong.
func labeledLearner(t *testing.T, n, c int) *stages.Learner {
	t.Helper()
	l := contextLearner()
	samples := clusteredSamples(n, 12, c, 5)
	for lo := 0; lo < n; lo += 10 {
		f := routeFeatures(samples[lo:min(lo+10, n)], int64(lo))
		for i := range f.Labels {
			f.Labels[i], f.Labeled[i] = fmt.Sprintf("c%d", samples[lo+i].Label), true
		}
		if _, err := l.LearnFeatures(f); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// TestOwnerAnswerCells: an owner's whole answer with its confusion's
// cells (learnBatch's) is the answer with its dense confusion, whose
// confusion is written as the dense scan wrote it; for a Learner that
// scored a stream and for ones restored with many classes.
func TestOwnerAnswerCells(t *testing.T) {
	ls := map[string]*stages.Learner{"learned": labeledLearner(t, 300, 12)}
	for _, k := range []int{1, 10, 300} {
		ls[fmt.Sprintf("%d classes", k)] = scoredLearner(t, classNames(k, true), benchConfusion(k))
	}
	st := &stages.Step{Predictions: []stages.Prediction{{ID: "x", Offset: 3, Label: "c1", Score: 0.5}}}
	for name, l := range ls {
		dense := l.Confusion()
		cells := l.ConfusionCells()
		off := 0
		for _, c := range cells.Cells {
			if c.Row != c.Col {
				off++
			}
		}
		if cells.N != nil || off == 0 || len(cells.Classes) != len(dense.Classes) {
			t.Fatalf("%s: ConfusionCells %d classes, N %v, %d cells (%d off the diagonal); want %d classes, cells only, some wrong",
				name, len(cells.Classes), cells.N != nil, len(cells.Cells), off, len(dense.Classes))
		}
		if got, want := appendConfusion(nil, l.ConfusionCells()), denseAppendConfusion(nil, dense); !bytes.Equal(got, want) {
			t.Fatalf("%s: the cells written as %d bytes, the dense confusion as %d: they differ", name, len(got), len(want))
		}
		lc := labelCounts{Waited: 1}
		got, err := encodeStepLabels(st, l.Counters(), l.Scores(), l.ConfusionCells(), l.Pending(), lc)
		if err != nil {
			t.Fatal(err)
		}
		want, err := encodeStepLabels(st, l.Counters(), dense.Scores(), dense, l.Pending(), lc)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: the owner's answer differs from the one with its dense confusion and scores", name)
		}
	}
}

// TestMergeConfusionSum: the driver's merged scores of random partitions'
// answers (classes in their own orders, confusions sent dense or as
// cells, decoded or not) are, to the bit, those of the reference dense
// sum in partition order.
func TestMergeConfusionSum(t *testing.T) {
	names := caseNames(40)
	for seed := range uint64(200) {
		rnd := rand.New(rand.NewPCG(seed, 19))
		names := names[:1+rnd.IntN(len(names))]
		parts := map[int]*wireStep{}
		var ref stages.Confusion
		n := 1 + rnd.IntN(4)
		for p := range n {
			c := confusionCase(rnd, names, 1, false)
			ref = ref.Add(c) // the dense sum, checked in stages (TestConfusionSum)
			sent := c
			if rnd.IntN(2) == 0 {
				sent = cellsOf(c)
			}
			if rnd.IntN(4) == 0 { // as the driver holds it before encoding: not decoded
				parts[p] = &wireStep{Confusion: sent}
				continue
			}
			raw, err := encodeStep(&stages.Step{}, stages.Counters{}, stages.Scores{}, sent, 0)
			if err != nil {
				t.Fatal(err)
			}
			if parts[p], err = decodeStep(raw); err != nil {
				t.Fatal(err)
			}
		}
		d := &ChainDriver{last: map[int]*wireStep{}, late: map[int64]int64{}}
		out := d.merge(1, parts)
		if got, want := scoreBits(out.Scores), scoreBits(ref.Scores()); got != want {
			t.Fatalf("seed %d, %d partitions: merged scores %+v, the dense sum's %+v", seed, n, out.Scores, ref.Scores())
		}
	}
}
