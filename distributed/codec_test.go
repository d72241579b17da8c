package distributed

import (
	"reflect"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestCodecRoundTrip checks that every message decodes to what was
// encoded, and that every truncation of it is an error, not a panic.
func TestCodecRoundTrip(t *testing.T) {
	dense := Sample{ID: 7, Label: 2, Dim: 3, Dense: []float64{0, 1.5, 2}}
	sp := Sample{ID: 8, Label: -1, Dim: 10, Index: []int{1, 9}, Value: []float64{0.5, 3}}
	for _, s := range []Sample{dense, sp} {
		raw := encodeSample(&s)
		got, err := decodeSample(raw)
		if err != nil || !reflect.DeepEqual(got, s) {
			t.Fatalf("sample %d: decoded %+v, %v", s.ID, got, err)
		}
		for i := range raw {
			if _, err := decodeSample(raw[:i]); err == nil {
				t.Fatalf("sample %d truncated to %d bytes decoded", s.ID, i)
			}
		}
	}
	dl := &delta{Part: 1, N: 3, Round: 2, Version: 2, Covered: 40, Added: 1, IDSum: 8, Removed: 2, Cut: 41, D: 4, K: 2,
		A: []float64{1, 2, 2, 5}, BRows: []int{0, 3}, B: []float64{1, 2, 3, 4}, Rows: []int{5}, Codes: []float64{0.1, 0.2}}
	raw := encodeDelta(dl)
	got, err := decodeDelta(raw)
	if err != nil || !reflect.DeepEqual(got, dl) {
		t.Fatalf("delta: decoded %+v, %v", got, err)
	}
	for i := range raw {
		if _, err := decodeDelta(raw[:i]); err == nil {
			t.Fatalf("delta truncated to %d bytes decoded", i)
		}
	}
	b := &basis{Version: 4, SampleSeq: 9, Samples: 3, Deltas: 2, IDSum: 6, Left: 1, Ingested: 8, U: mat.NewDense(2, 2, []float64{1, 2, 3, 4})}
	raw = encodeBasis(b)
	gb, err := decodeBasis(raw)
	if err != nil || !reflect.DeepEqual(gb, b) {
		t.Fatalf("basis: decoded %+v, %v", gb, err)
	}
	for i := range raw {
		if _, err := decodeBasis(raw[:i]); err == nil {
			t.Fatalf("basis truncated to %d bytes decoded", i)
		}
	}
}

// TestLabelRecord checks that a late label decodes as one, that a sample
// still decodes as a sample on the same stream, and that truncations and
// negative classes are errors.
func TestLabelRecord(t *testing.T) {
	raw := encodeLabel(42, 3)
	s, isLabel, err := decodeRecord(raw)
	if err != nil || !isLabel || s.ID != 42 || s.Label != 3 {
		t.Fatalf("label: decoded %+v (label %v), %v", s, isLabel, err)
	}
	for i := 1; i < len(raw); i++ {
		if _, _, err := decodeRecord(raw[:i]); err == nil {
			t.Fatalf("label truncated to %d bytes decoded", i)
		}
	}
	if _, _, err := decodeRecord(encodeLabel(1, -1)); err == nil {
		t.Fatal("label -1 decoded")
	}
	smp := Sample{ID: 7, Label: -1, Dim: 2, Dense: []float64{1, 2}}
	got, isLabel, err := decodeRecord(encodeSample(&smp))
	if err != nil || isLabel || !reflect.DeepEqual(got, smp) {
		t.Fatalf("sample: decoded %+v (label %v), %v", got, isLabel, err)
	}
}

// TestSampleCheck checks that invalid samples are errors naming them.
func TestSampleCheck(t *testing.T) {
	bad := []Sample{
		{ID: 1, Dim: 2, Dense: []float64{1, -1}},
		{ID: 2, Dim: 2, Dense: []float64{1}},
		{ID: 3, Dim: 4, Index: []int{2, 1}, Value: []float64{1, 1}},
		{ID: 4, Dim: 4, Index: []int{5}, Value: []float64{1}},
		{ID: 5, Dim: 0},
		{ID: 6, Dim: 4, Index: []int{}, Value: []float64{}},
		{ID: 7, Dim: 4, Index: []int{1}, Value: []float64{0}},
	}
	for _, s := range bad {
		if err := s.check(); err == nil {
			t.Errorf("sample %+v accepted", s)
		}
	}
}
