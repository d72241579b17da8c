package distributed

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/stages"
)

// answerStep is a Step with every kind of content an answer carries.
func answerStep() (*stages.Step, stages.Counters, stages.Scores) {
	st := &stages.Step{
		Predictions: []stages.Prediction{
			{ID: "a", Offset: 3, Label: "7", Score: 0.25},
			{ID: "", Offset: 1 << 40, Label: "", Score: math.NaN()},
			{ID: "ü-ñ", Offset: 5, Label: "spam", Score: math.Inf(-1)},
		},
		Rejects:    []record.Reject{{Offset: 4, ID: "r", Reason: errors.New("value -1 at feature 2")}},
		Duplicates: []int64{6, 9},
	}
	c := stages.Counters{Records: 11, Samples: 9, Rejected: 1, Duplicates: 2, LateLabels: 3, Labeled: 4,
		Correct: 2, Unpredicted: 1, Early: 5, Offset: -7}
	return st, c, stages.Scores{BalancedAccuracy: 0.5, MacroF1: math.NaN()}
}

// TestAnswerCodecRoundTrip: an answer decodes to what was encoded, every
// float bit for bit (NaN and infinities included), and the gob form that
// owners wrote before decodes alike.
func TestAnswerCodecRoundTrip(t *testing.T) {
	st, c, sc := answerStep()
	raw, err := encodeStep(st, c, sc, stages.Confusion{}, 8)
	if err != nil {
		t.Fatal(err)
	}
	w, err := decodeStep(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := wireStep{Rejects: rejectsToWire(st.Rejects), Duplicates: st.Duplicates, Counters: c, Scored: sc, Pending: 8}
	for _, p := range st.Predictions {
		want.IDs, want.Offsets = append(want.IDs, p.ID), append(want.Offsets, p.Offset)
		want.Labels, want.Scores = append(want.Labels, p.Label), append(want.Scores, p.Score)
	}
	check := func(form string, w *wireStep) {
		t.Helper()
		bits := func(fs ...float64) []uint64 {
			var out []uint64
			for _, f := range fs {
				out = append(out, math.Float64bits(f))
			}
			return out
		}
		if !slices.Equal(w.IDs, want.IDs) || !slices.Equal(w.Offsets, want.Offsets) || !slices.Equal(w.Labels, want.Labels) ||
			!slices.Equal(bits(w.Scores...), bits(want.Scores...)) || !slices.Equal(w.Rejects, want.Rejects) ||
			!slices.Equal(w.Duplicates, want.Duplicates) || w.Counters != want.Counters || w.Pending != want.Pending ||
			!slices.Equal(bits(w.Scored.BalancedAccuracy, w.Scored.MacroF1), bits(sc.BalancedAccuracy, sc.MacroF1)) {
			t.Errorf("%s: decoded %+v, want %+v", form, w, want)
		}
	}
	check("binary", w)
	// Unlearned travels when nonzero; a zero one is left out, so that the
	// bytes are those of the owners before it (baseCounters).
	cu := c
	cu.Unlearned = 6
	withU, err := encodeStep(st, cu, sc, stages.Confusion{}, 8)
	if err != nil {
		t.Fatal(err)
	}
	if w, err := decodeStep(withU); err != nil || w.Counters != cu {
		t.Errorf("Unlearned 6: decoded counters %+v (%v), want %+v", w.Counters, err, cu)
	}
	if len(withU) != len(raw)+1 {
		t.Errorf("an answer with Unlearned takes %d bytes, without it %d: want one more (a zero Unlearned left out)", len(withU), len(raw))
	}
	// With the owner's confusion; and the first binary form, which ends
	// before it, still decodes.
	conf := stages.Confusion{Classes: []string{"7", "spam"}, N: [][]int64{{3, 1, 0}, {0, 2, 1 << 40}}}
	raw, err = encodeStep(st, c, sc, conf, 8)
	if err != nil {
		t.Fatal(err)
	}
	if w, err := decodeStep(raw); err != nil || !reflect.DeepEqual(denseConfusion(w.Confusion), conf) {
		t.Errorf("confusion: decoded %+v (%v), want %+v", w.Confusion, err, conf)
	}
	v1, err := encodeStep(st, c, sc, stages.Confusion{}, 8)
	if err != nil {
		t.Fatal(err)
	}
	v1 = append(answerMagicV1[:], v1[3:len(v1)-2]...) // no confusion's counts of classes and cells
	if w, err := decodeStep(v1); err != nil {
		t.Errorf("the first binary form: %v", err)
	} else {
		check("first binary form", w)
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&want); err != nil {
		t.Fatal(err)
	}
	old, err := decodeStep(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	check("gob", old)
	empty, err := encodeStep(&stages.Step{}, stages.Counters{}, stages.Scores{}, stages.Confusion{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if w, err := decodeStep(empty); err != nil || len(w.IDs) != 0 || w.Rejects != nil || w.Duplicates != nil {
		t.Errorf("empty step: %+v, %v", w, err)
	}
}

// TestAnswerCodecCorrupt: every truncation of an answer, a byte added,
// and a counters' count of another build are errors naming the step
// (errCorrupt), never a panic.
func TestAnswerCodecCorrupt(t *testing.T) {
	st, c, sc := answerStep()
	raw, err := encodeStep(st, c, sc, stages.Confusion{Classes: []string{"a", "b"}, N: [][]int64{{1, 2, 3}, {4, 5, 6}}}, 8)
	if err != nil {
		t.Fatal(err)
	}
	for n := len(answerMagic); n < len(raw); n++ {
		if _, err := decodeStep(raw[:n]); !errors.Is(err, errCorrupt) {
			t.Fatalf("truncated to %d of %d bytes: %v, want a corrupt step", n, len(raw), err)
		}
	}
	if _, err := decodeStep(append(slices.Clip(raw), 0)); !errors.Is(err, errCorrupt) {
		t.Errorf("a byte after the end: %v", err)
	}
	// A dense confusion (answerMagicV2) of 1,000 classes in 2,000 bytes,
	// whose rows would need a million: refused at its count, before a row
	// is read (or made).
	empty, err := encodeStep(&stages.Step{}, stages.Counters{}, stages.Scores{}, stages.Confusion{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	wide := append(binary.AppendUvarint(append(answerMagicV2[:], empty[3:len(empty)-2]...), 1000), make([]byte, 2000)...)
	if _, err := decodeStep(wide); !errors.Is(err, errCorrupt) || !strings.HasSuffix(err.Error(), "at its confusion") {
		t.Errorf("a confusion the message cannot hold: %v, want an error at its count", err)
	}
	huge := append(answerMagic[:], 0xff, 0xff, 0xff, 0xff, 0x0f) // 2³²−1 predictions in 0 bytes
	if _, err := decodeStep(huge); !errors.Is(err, errCorrupt) {
		t.Errorf("a count the message cannot hold: %v", err)
	}
	// The counters' count: after the predictions, rejects and duplicates
	// of an empty step (three zero counts).
	other := append(answerMagic[:], 0, 0, 0, 11)
	if _, err := decodeStep(other); !errors.Is(err, errCorrupt) {
		t.Errorf("11 counters: %v", err)
	}
}

// TestAnswerCodecCountersComplete: stepCounters lists every field of
// stages.Counters once, so that a field added there is not dropped on the
// wire silently.
func TestAnswerCodecCountersComplete(t *testing.T) {
	var c stages.Counters
	v := reflect.ValueOf(&c).Elem()
	for i := range v.NumField() {
		v.Field(i).SetInt(int64(i + 1))
	}
	var got []int64
	for _, p := range stepCounters(&c) {
		got = append(got, *p)
	}
	slices.Sort(got)
	if len(got) != v.NumField() || slices.Compact(slices.Clone(got))[len(got)-1] != int64(v.NumField()) || len(slices.Compact(slices.Clone(got))) != v.NumField() {
		t.Fatalf("stepCounters gives fields %v of stages.Counters' %d", got, v.NumField())
	}
}

// TestAnswerConfusionSparse: the confusion travels as its nonzero cells
// (answerMagic), so an answer of 1,000 classes with few scored samples is
// small, and decodes to the dense counts it was made from; the dense form
// of the owners before it (answerMagicV2) still decodes to the same; a
// cell outside the classes, or out of order, is corrupt.
func TestAnswerConfusionSparse(t *testing.T) {
	st, c, sc := answerStep()
	const k = 1000
	conf := stages.Confusion{N: make([][]int64, k)}
	for i := range k {
		conf.Classes = append(conf.Classes, fmt.Sprintf("class-%d", i))
		conf.N[i] = make([]int64, k+1)
	}
	conf.N[0][0], conf.N[3][999], conf.N[999][k], conf.N[500][2] = 7, 1<<40, 2, -1
	raw, err := encodeStep(st, c, sc, conf, 8)
	if err != nil {
		t.Fatal(err)
	}
	if [3]byte(raw[:3]) != answerMagic {
		t.Fatalf("answer begins %v, want %v", raw[:3], answerMagic)
	}
	// The names (about 10 bytes each) and 4 cells: far below the million
	// varints of the dense rows.
	if len(raw) > 12*k+200 {
		t.Errorf("an answer of %d classes and 4 nonzero cells takes %d bytes", k, len(raw))
	}
	w, err := decodeStep(raw)
	if err != nil || !reflect.DeepEqual(denseConfusion(w.Confusion), conf) {
		t.Fatalf("sparse confusion: decoded %v, equal %v", err, err == nil && reflect.DeepEqual(denseConfusion(w.Confusion), conf))
	}
	head := raw[:len(raw)-len(appendConfusion(nil, conf))]
	dense := appendDenseConfusion(append(answerMagicV2[:], head[3:]...), conf)
	if len(dense) < k*k {
		t.Fatalf("the dense form takes %d bytes for %d classes", len(dense), k)
	}
	if w, err := decodeStep(dense); err != nil || !reflect.DeepEqual(w.Confusion, conf) {
		t.Fatalf("dense confusion (answerMagicV2): %v", err)
	}
	small := stages.Confusion{Classes: []string{"a", "b"}, N: [][]int64{{1, 0, 0}, {0, 0, 2}}}
	head = append(slices.Clip(head), binary.AppendUvarint(nil, 2)...)
	head = appendString(appendString(head, "a"), "b")
	for _, bad := range [][]byte{
		{2, 0, 0, 1, 2, 0, 2}, // row 2 of 2 classes
		{2, 0, 0, 1, 0, 3, 2}, // column 3 of 2 classes + none
		{2, 1, 2, 2, 0, 0, 1}, // out of order
		{2, 0, 0, 1, 0, 0, 2}, // a cell twice
	} {
		if _, err := decodeStep(append(slices.Clip(head), bad...)); !errors.Is(err, errCorrupt) {
			t.Errorf("cells %v: %v, want a corrupt step", bad, err)
		}
	}
	if w, err := decodeStep(append(slices.Clip(head), 2, 0, 0, 2, 1, 2, 4)); err != nil || !reflect.DeepEqual(denseConfusion(w.Confusion), small) {
		t.Errorf("cells (0, 0) = 1, (1, 2) = 2: %+v, %v", w, err)
	}
}

// denseConfusion returns c, a decoded answer's confusion (its cells,
// answerReader.confusion), in the dense form, to compare with the
// confusion encoded; a dense one (answerMagicV2's) as it is.
func denseConfusion(c stages.Confusion) stages.Confusion {
	if c.N != nil || len(c.Classes) == 0 {
		return c
	}
	return stages.Confusion{}.Add(c)
}
