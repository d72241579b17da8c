package metrics

import (
	"math"
	"testing"
)

// TestMcNemar checks the exact test against cases worked by hand:
// b = 0, c = 5: 2·(1/2)⁵ = 0.0625; b = 1, c = 9: 2·(1 + 10)/2¹⁰;
// b = 2, c = 3: 2·(1 + 5 + 10)/2⁵ = 1 (capped); no discordant sample: 1;
// and symmetry in its arguments, and a large case against the normal
// approximation with continuity correction.
func TestMcNemar(t *testing.T) {
	cases := []struct {
		b, c int
		want float64
	}{
		{0, 5, 0.0625},
		{1, 9, 2 * 11.0 / 1024},
		{9, 1, 2 * 11.0 / 1024},
		{2, 3, 1},
		{0, 0, 1},
		{0, 1, 1},
		{3, 12, 2 * (1 + 15 + 105 + 455) / 32768.0},
	}
	for _, tc := range cases {
		if got := McNemar(tc.b, tc.c); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("McNemar(%d, %d) = %v, want %v", tc.b, tc.c, got, tc.want)
		}
	}
	// b = 400, c = 480: z = (|b − c| − 1)/√(b + c) = 2.663, two-sided
	// normal p ≈ 0.00775; the exact value is within a few percent of it.
	got := McNemar(400, 480)
	z := (80.0 - 1) / math.Sqrt(880)
	want := math.Erfc(z / math.Sqrt2)
	if math.Abs(got-want) > 0.05*want {
		t.Errorf("McNemar(400, 480) = %v, want about %v (normal approximation)", got, want)
	}
}
