package distributed

import (
	"bytes"
	"encoding/gob"
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/nmfstream/nmfstream/record"
)

// fullBatch is a wireBatch with every field set (its rows both dense and
// sparse, which no share is, for the codec's sake).
func fullBatch() wireBatch {
	return wireBatch{
		Dim: 3, Rows: "dense", Dense: []float64{0, 1.5, math.Inf(1), -0.25, 1e-300, 7},
		Ptr: []int{0, 1, 3}, Ind: []int{2, 0, 1}, Val: []float64{0.5, 2, 3},
		Text: []string{"ein Dokument", ""}, IDs: []string{"a", ""}, Labels: []string{"7", ""}, Labeled: []bool{true, false},
		Offsets:    []int64{3, 1 << 40},
		LateLabels: []record.LateLabel{{Offset: 4, ID: "x", Label: "1"}, {Offset: 9, ID: "\x00context\x00y", Label: "ü"}},
		Rejects:    []wireReject{{Offset: 5, ID: "r", Reason: "value -1 at feature 2"}, {Offset: 7, ID: "e", Reason: "empty document", NoFeatures: true}},
		Unusable:   []wireReject{{Offset: 6, ID: "u", Reason: "NaN"}},
		Context:    appendBatch(nil, &wireBatch{Dim: 3, Rows: "dense", Dense: []float64{1, 2, 3}, IDs: []string{""}, Labels: []string{"2"}, Labeled: []bool{true}, Offsets: []int64{2}}),
	}
}

// TestBatchCodecRoundTrip: a share decodes to what was encoded (every
// field of wireBatch is set here, so a field the binary form drops fails
// the test), a NaN's bits included; a text share without documents stays
// a text share; and the gob form that drivers sent before decodes alike.
func TestBatchCodecRoundTrip(t *testing.T) {
	w := fullBatch()
	v := reflect.ValueOf(w)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("fullBatch leaves wireBatch.%s unset", v.Type().Field(i).Name)
		}
	}
	var got wireBatch
	raw := appendBatch(nil, &w)
	if [3]byte(raw[:3]) != batchMagic {
		t.Fatal("no magic")
	}
	if len(raw) > w.size() {
		t.Errorf("the binary form has %d bytes, more than its bound size() %d", len(raw), w.size())
	}
	if err := readBatch(raw[3:], &got, raw[2]); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, w) {
		t.Errorf("decoded %+v, want %+v", got, w)
	}
	nan := math.Float64frombits(0x7ff8000000000bad)
	for _, c := range []wireBatch{{Rows: "dense", Dim: 1, Dense: []float64{nan}}, {Text: []string{}}, {}} {
		var got wireBatch
		if err := readBatch(appendBatch(nil, &c)[3:], &got, batchMagic[2]); err != nil {
			t.Fatal(err)
		}
		if (got.Text == nil) != (c.Text == nil) || len(got.Dense) != len(c.Dense) || len(c.Dense) > 0 && math.Float64bits(got.Dense[0]) != math.Float64bits(c.Dense[0]) {
			t.Errorf("decoded %+v, want %+v", got, c)
		}
	}
	var buf bytes.Buffer
	w.Context = nil // a gob share's context is gob, as the driver that sent it wrote it
	w.Ptr, w.Ind, w.Val, w.Text = nil, nil, nil, nil
	if err := gob.NewEncoder(&buf).Encode(&w); err != nil {
		t.Fatal(err)
	}
	if old, f, err := decodeFeatures(buf.Bytes()); err != nil || !reflect.DeepEqual(*old, w) || len(f.Offsets) != 2 {
		t.Errorf("gob share: %+v, %v; want %+v", old, err, w)
	}
}

// TestBatchCodecNoFeatures: a reject of a record without features keeps
// its mark through the wire (errors.Is record.ErrNoFeatures, its message
// unchanged), another reject gets none; a share of version 1, whose
// rejects carry no mark, still decodes.
func TestBatchCodecNoFeatures(t *testing.T) {
	rs := []record.Reject{
		record.Rejectf(1, "a", "negative value"),
		{Offset: 2, ID: "b", Reason: &record.Error{Offset: 2, ID: "b", Err: record.NoFeatures("empty document")}},
	}
	w := wireBatch{Rejects: rejectsToWire(rs)}
	_, f, err := decodeFeatures(appendBatch(nil, &w))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range f.Rejects {
		if r.Reason.Error() != rs[i].Reason.Error() || errors.Is(r.Reason, record.ErrNoFeatures) != (i == 1) {
			t.Errorf("reject %d: %q, no features %v; want %q, %v", i, r.Reason, errors.Is(r.Reason, record.ErrNoFeatures), rs[i].Reason, i == 1)
		}
	}
	v1 := appendBatch(nil, &wireBatch{Dim: 1, Rows: "dense", Dense: []float64{2}, IDs: []string{"x"}, Labels: []string{""}, Labeled: []bool{false}, Offsets: []int64{0}})
	v1[2] = batchMagicV1[2] // the same bytes: no reject to mark
	if _, f, err := decodeFeatures(v1); err != nil || len(f.Offsets) != 1 {
		t.Errorf("a version-1 share: %v", err)
	}
}

// TestBatchCodecCorrupt: every truncation of a share and a byte added are
// errors naming the batch (errCorrupt), never a panic.
func TestBatchCodecCorrupt(t *testing.T) {
	w := fullBatch()
	raw := appendBatch(nil, &w)
	for n := len(batchMagic); n < len(raw); n++ {
		if _, _, err := decodeFeatures(raw[:n]); !errors.Is(err, errCorrupt) {
			t.Fatalf("truncated to %d of %d bytes: %v, want a corrupt batch", n, len(raw), err)
		}
	}
	if _, _, err := decodeFeatures(append(slices.Clip(raw), 0)); !errors.Is(err, errCorrupt) {
		t.Errorf("a byte after the end: %v", err)
	}
	huge := append(batchMagic[:], 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f) // 2³²−1 dense values in 0 bytes
	if _, _, err := decodeFeatures(huge); !errors.Is(err, errCorrupt) {
		t.Errorf("a count the message cannot hold: %v", err)
	}
}
