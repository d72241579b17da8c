package datasets

import (
	"bytes"
	"testing"
)

func TestDigits(t *testing.T) {
	x, y := Digits()
	r, c := x.Dims()
	if r != 1797 || c != 64 || len(y) != r {
		t.Fatalf("got %d×%d and %d labels, want 1797×64 and 1797", r, c, len(y))
	}
	counts := make([]int, 10)
	for i, l := range y {
		if l < 0 || l > 9 {
			t.Fatalf("label %d at row %d outside [0, 10)", l, i)
		}
		counts[l]++
		for _, v := range x.RawRowView(i) {
			if v < 0 || v > 16 {
				t.Fatalf("pixel %g at row %d outside [0, 16]", v, i)
			}
		}
	}
	// scikit-learn's digits: 178 zeros, …, 180 nines.
	if counts[0] != 178 || counts[9] != 180 {
		t.Errorf("class counts %v, want 178 zeros and 180 nines", counts)
	}
	// Each call returns fresh memory.
	x.Set(0, 0, 99)
	if x2, _ := Digits(); x2.At(0, 0) == 99 {
		t.Error("Digits shares memory between calls")
	}
	if _, _, err := parseDigits(bytes.NewReader([]byte("not gzip"))); err == nil {
		t.Error("parseDigits on junk: no error")
	}
}
