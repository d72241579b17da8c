package sparse

import (
	"slices"
	"testing"
)

func TestCSRReset(t *testing.T) {
	m := Zeros(0, 5)
	m.AppendRow([]int{0, 3}, []float64{1, 2})
	m.AppendRow([]int{1, 2, 4}, []float64{3, 4, 5})
	ind, val := &m.Ind[0], &m.Val[0]

	m.Reset()
	if r, c := m.Dims(); r != 0 || c != 0 || m.NNZ() != 0 {
		t.Fatalf("after Reset: %d×%d with %d entries, want 0×0 with 0", r, c, m.NNZ())
	}
	if err := m.checkStructure(); err != nil {
		t.Fatalf("after Reset: %v", err)
	}

	// Rows appended after Reset and Grow land in the old memory.
	m.Grow(3)
	m.AppendRow([]int{2}, []float64{7})
	m.AppendRow(nil, nil)
	if r, c := m.Dims(); r != 2 || c != 3 {
		t.Fatalf("dims = %d×%d, want 2×3", r, c)
	}
	if &m.Ind[0] != ind || &m.Val[0] != val {
		t.Error("Reset did not keep the capacity of Ind and Val")
	}
	if !slices.Equal(m.Indptr, []int{0, 1, 1}) || m.At(0, 2) != 7 || m.At(1, 2) != 0 {
		t.Errorf("after Reset and AppendRow: indptr %v, ind %v, val %v", m.Indptr, m.Ind, m.Val)
	}
	if err := m.Validate(); err != nil {
		t.Error(err)
	}

	// The zero CSR can be Reset too.
	var z CSR
	z.Reset()
	if err := z.checkStructure(); err != nil {
		t.Errorf("zero CSR after Reset: %v", err)
	}
}
