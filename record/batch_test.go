package record

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/sparse"
)

func TestBatchSpanClone(t *testing.T) {
	var b Batch
	if first, last := b.Span(); first != math.MaxInt64 || last != -1 || b.Records() != 0 {
		t.Errorf("empty batch: span %d..%d, %d records", first, last, b.Records())
	}
	b = Batch{
		Form:       FormDense,
		Dense:      mat.NewDense(2, 2, []float64{1, 2, 3, 4}),
		IDs:        []string{"a", "b"},
		Labels:     []string{"x", ""},
		Labeled:    []bool{true, false},
		Offsets:    []int64{3, 5},
		LateLabels: []LateLabel{{Offset: 7, ID: "a", Label: "y"}},
		Rejects:    []Reject{Rejectf(2, "", "bad value %d", -1)},
	}
	if first, last := b.Span(); first != 2 || last != 7 {
		t.Errorf("span %d..%d, want 2..7 (rejects and late labels count)", first, last)
	}
	if b.Len() != 2 || b.Records() != 4 {
		t.Errorf("Len %d, Records %d, want 2 and 4", b.Len(), b.Records())
	}
	c := b.Clone()
	b.Dense.Set(0, 0, 9)
	b.IDs[0] = "z"
	if c.Dense.At(0, 0) != 1 || c.IDs[0] != "a" || c.Records() != 4 {
		t.Errorf("clone shares memory with the batch or lost records: %+v", c)
	}
	s := Batch{Form: FormSparse, Sparse: sparse.Zeros(0, 3), Offsets: []int64{0}}
	s.Sparse.AppendRow([]int{1}, []float64{2})
	if cs := s.Clone(); cs.Sparse == s.Sparse || cs.Sparse.At(0, 1) != 2 {
		t.Errorf("sparse clone: %v", cs.Sparse)
	}
}

func TestError(t *testing.T) {
	problem := errors.New("empty document")
	for _, c := range []struct {
		e    *Error
		want string
	}{
		{&Error{Offset: 4, ID: "x9", Err: problem}, `sources: record 4 (id "x9"): empty document`},
		{&Error{Offset: 9, Err: problem}, "sources: record 9: empty document"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
		if !errors.Is(c.e, problem) {
			t.Errorf("%v does not wrap its problem", c.e)
		}
	}
	r := Rejectf(2, "id", "bad %s", "thing")
	var e *Error
	if !errors.As(r.Reason, &e) || e.Offset != 2 || e.ID != "id" || r.Offset != 2 || r.ID != "id" {
		t.Errorf("Rejectf: %+v", r)
	}
}
