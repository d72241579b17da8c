package model

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// TestTuneLabelAware prints validation accuracies over a grid; it is how
// the defaults were chosen. Run with NMFSTREAM_TUNE=1 go test -run TuneLabelAware -v ./model
func TestTuneLabelAware(t *testing.T) {
	if os.Getenv("NMFSTREAM_TUNE") == "" {
		t.Skip("set NMFSTREAM_TUNE=1")
	}
	task := newDigitsTask(10, 1, true)
	run := func(name string, m Method, alpha float64) {
		t0 := time.Now()
		for _, p := range []Projection{ProjectNNLS, ProjectGraph} {
			acc, err := task.score(m, p, alpha)
			if err != nil {
				t.Logf("%s: %v", name, err)
				return
			}
			t.Logf("%-40s %-6v acc %.4f  (%v)", name, p, acc, time.Since(t0).Round(time.Millisecond))
		}
	}
	_ = run
	for _, spec := range tuneSpecs() {
		run(spec.name, spec.m, spec.alpha)
	}
}

type tuneSpec struct {
	name  string
	m     Method
	alpha float64
}

func tuneSpecs() []tuneSpec {
	var out []tuneSpec
	sel := os.Getenv("NMFSTREAM_TUNE")
	c := Common{Rank: 40, MaxIter: 200}
	if sel == "1" || sel == "nmf" {
		out = append(out, tuneSpec{"nmf", &NMF{Common: c}, 1})
	}
	if sel == "1" || sel == "dgnmf" {
		for _, r := range []int{40, 64} {
			for _, a := range []float64{0.003, 0.01, 0.03, 0.1} {
				cc := c
				cc.Rank = r
				out = append(out, tuneSpec{fmtName("dgnmf K=%d a=%g", r, a), &DGNMF{Common: cc, Alpha: a}, 1})
			}
		}
	}
	if sel == "1" || sel == "ssknmf" {
		for _, a := range []float64{0.1, 1, 10} {
			for _, b := range []float64{10, 100, 1000} {
				out = append(out, tuneSpec{fmtName("ssknmf a=%g b=%g", a, b), &SSKNMF{Common: c, Alpha: a, Beta: b}, b})
			}
		}
	}
	if sel == "1" || sel == "n2s2l" {
		for _, a := range []float64{1, 10, 100} {
			for _, b := range []float64{1, 10, 100, 1000} {
				out = append(out, tuneSpec{fmtName("n2s2l a=%g b=%g", a, b), &N2S2L{Common: c, Alpha: a, Beta: b}, b})
			}
		}
	}
	if sel == "1" || sel == "nge" {
		out = append(out, tuneSpecsNGE(c)...)
	}
	return out
}

func fmtName(f string, a ...any) string { return fmt.Sprintf(f, a...) }

func tuneSpecsNGE(c Common) []tuneSpec {
	var out []tuneSpec
	for _, a := range []float64{2, 20, 200} {
		for _, b := range []float64{0, 100, 1000} {
			out = append(out, tuneSpec{fmtName("nge a=%g b=%g", a, b), &NGE{Common: c, Alpha: a, Beta: b}, max(b, 1)})
		}
	}
	return out
}
