package kernel_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/kernel"
)

// TestTune prints validation accuracies of candidate settings. It runs only
// with NMFSTREAM_TUNE set to a comma-separated list of groups (flex, nmfk,
// multik, adap, xmultik, xgraph; a group runs if its name is a substring
// of the list); it never looks at the test split.
func TestTune(t *testing.T) {
	groups := os.Getenv("NMFSTREAM_TUNE")
	if groups == "" {
		t.Skip("set NMFSTREAM_TUNE=flex,nmfk,multik,adap")
	}
	s := digitsValidation(t)
	run := func(name string, m fitProjector) {
		start := time.Now()
		acc, self := heldOut2(t, m, s)
		extra := ""
		if mk, ok := m.(*kernel.MultiK); ok && len(mk.Tau()) > 1 {
			extra = " τ=" + fmtTau(mk.Tau())
			if a := mk.Alignments(); a != nil {
				extra += " A=" + fmtTau(a)
			}
		}
		t.Logf("%-40s val 1-NN %.4f self %.4f (%v)%s", name, acc, self, time.Since(start).Round(time.Millisecond), extra)
	}
	has := func(g string) bool { return strings.Contains(groups, g) }
	projs := []kernel.Projection{kernel.ProjectNNLS, kernel.ProjectPaper, kernel.ProjectGraph}
	if has("flex") {
		for _, sc := range []float64{0.5, 0.8, 1.2} {
			for _, pr := range projs {
				run("flex gauss mean×"+ftoa(sc)+" "+pr.String(), &kernel.Flexible{Common: model.Common{Rank: 40}, Kernel: kernel.Gaussian{Scale: sc, Rule: kernel.MeanDistance}, Projection: pr})
			}
		}
		for _, p := range []int{2, 4} {
			for _, pr := range projs {
				run("flex poly "+ftoa(float64(p))+" "+pr.String(), &kernel.Flexible{Common: model.Common{Rank: 40}, Kernel: kernel.Polynomial{Degree: p}, Projection: pr})
			}
		}
	}
	if has("nmfk") {
		for _, sc := range []float64{0.3, 0.5, 1, 2} {
			for _, pr := range projs {
				run("nmfk gauss mean×"+ftoa(sc)+" "+pr.String(), &kernel.MultiK{Common: model.Common{Rank: 40}, Kernels: []kernel.Kernel{kernel.Gaussian{Scale: sc, Rule: kernel.MeanDistance}}, Projection: pr})
			}
		}
	}
	if has("multik") {
		for _, st := range []kernel.TauStep{kernel.TauLP, kernel.TauEntropy, kernel.TauSimplex} {
			run("multik "+st.String()+" graph", &kernel.MultiK{Common: model.Common{Rank: 40}, Step: st, Projection: kernel.ProjectGraph})
			run("multik "+st.String()+" nnls", &kernel.MultiK{Common: model.Common{Rank: 40}, Step: st})
		}
	}
	if has("var") {
		for _, st := range []kernel.TauStep{kernel.TauLP, kernel.TauEntropy, kernel.TauSimplex} {
			run("multik variance "+st.String()+" graph", &kernel.MultiK{Common: model.Common{Rank: 40}, Step: st, Scaling: kernel.ScaleVariance})
			run("adap α=1 variance "+st.String()+" graph", &kernel.MultiK{Common: model.Common{Rank: 40}, Alpha: 1, Step: st, Scaling: kernel.ScaleVariance})
		}
	}
	if has("round2") {
		for _, ga := range []float64{10, 100} {
			for _, st := range []kernel.TauStep{kernel.TauLP, kernel.TauEntropy} {
				run("multik "+st.String()+" graph α_proj="+ftoa(ga), &kernel.MultiK{Common: model.Common{Rank: 40}, Step: st, GraphAlpha: ga})
			}
			run("nmfk gauss mean×1 graph α_proj="+ftoa(ga), &kernel.MultiK{Common: model.Common{Rank: 40}, Kernels: []kernel.Kernel{kernel.Gaussian{Scale: 1, Rule: kernel.MeanDistance}}, GraphAlpha: ga})
			run("adap α=10 lp iters=400 α_proj="+ftoa(ga), &kernel.MultiK{Common: model.Common{Rank: 40, MaxIter: 400}, Alpha: 10, GraphAlpha: ga})
		}
		run("adap α=10 lp iters=400", &kernel.MultiK{Common: model.Common{Rank: 40, MaxIter: 400}, Alpha: 10})
		run("flex gauss α_proj=10", &kernel.Flexible{Common: model.Common{Rank: 40}, GraphAlpha: 10})
	}
	if has("round3") {
		for _, g := range []float64{0.3, 1} {
			run("multik entropy γ="+ftoa(g), &kernel.MultiK{Common: model.Common{Rank: 40}, Step: kernel.TauEntropy, Gamma: g})
			run("multik simplex γ="+ftoa(g), &kernel.MultiK{Common: model.Common{Rank: 40}, Step: kernel.TauSimplex, Gamma: g})
		}
		run("adap α=10 entropy γ=1", &kernel.MultiK{Common: model.Common{Rank: 40}, Alpha: 10, Step: kernel.TauEntropy, Gamma: 1})
	}
	if has("round4") {
		run("adap α=1 lp P=10", &kernel.MultiK{Common: model.Common{Rank: 40}, Alpha: 1, Neighbors: 10})
		run("adap α=1 lp rank 50", &kernel.MultiK{Common: model.Common{Rank: 50}, Alpha: 1})
		run("adap α=1 lp kernel weights", &kernel.MultiK{Common: model.Common{Rank: 40}, Alpha: 1, Weighting: kernel.KernelWeight})
		run("adap α=1 lp P=3", &kernel.MultiK{Common: model.Common{Rank: 40}, Alpha: 1, Neighbors: 3})
	}
	mk := func(pool []kernel.Kernel, alpha float64, st kernel.TauStep, c kernel.TauCost, minVar float64) *kernel.MultiK {
		return &kernel.MultiK{Common: model.Common{Rank: 40}, Kernels: pool, Alpha: alpha, Step: st, Cost: c, MinVariance: minVar}
	}
	if has("xmultik") {
		for _, st := range []kernel.TauStep{kernel.TauLP, kernel.TauEntropy} {
			run("multik minvar=0.05 "+st.String(), mk(nil, 0, st, kernel.CostReconstruction, 0.05))
			run("multik relative "+st.String(), mk(nil, 0, st, kernel.CostRelative, 0))
			run("multik align "+st.String(), mk(nil, 0, st, kernel.CostAlignment, 0))
			run("multik scalepool "+st.String(), mk(kernel.ScalePool(), 0, st, kernel.CostReconstruction, 0))
			run("multik scalepool relative "+st.String(), mk(kernel.ScalePool(), 0, st, kernel.CostRelative, 0))
			run("multik scalepool align "+st.String(), mk(kernel.ScalePool(), 0, st, kernel.CostAlignment, 0))
		}
	}
	if has("xgraph") {
		for _, st := range []kernel.TauStep{kernel.TauLP, kernel.TauEntropy} {
			run("adap α=1 relative "+st.String(), mk(nil, 1, st, kernel.CostRelative, 0))
			run("adap α=1 scalepool relative "+st.String(), mk(kernel.ScalePool(), 1, st, kernel.CostRelative, 0))
			run("adap α=10 scalepool relative "+st.String(), mk(kernel.ScalePool(), 10, st, kernel.CostRelative, 0))
			run("adap α=1 scalepool align "+st.String(), mk(kernel.ScalePool(), 1, st, kernel.CostAlignment, 0))
		}
	}
	if has("xbase") {
		run("adap α=1 lp (paper)", mk(nil, 1, kernel.TauLP, kernel.CostReconstruction, 0))
		run("flex gauss mean×0.8 (default)", &kernel.Flexible{Common: model.Common{Rank: 40}})
		run("nmfk poly2", mk([]kernel.Kernel{kernel.Polynomial{Degree: 2}}, 0, kernel.TauLP, kernel.CostReconstruction, 0))
		run("nmfk gauss mean×0.5", mk([]kernel.Kernel{kernel.Gaussian{Scale: 0.5, Rule: kernel.MeanDistance}}, 0, kernel.TauLP, kernel.CostReconstruction, 0))
		run("nmfk cosine", mk([]kernel.Kernel{kernel.Cosine{}}, 0, kernel.TauLP, kernel.CostReconstruction, 0))
		run("nmfk gauss mean×1", mk([]kernel.Kernel{kernel.Gaussian{Scale: 1, Rule: kernel.MeanDistance}}, 0, kernel.TauLP, kernel.CostReconstruction, 0))
	}
	if has("adap") {
		for _, a := range []float64{1, 10, 100} {
			for _, st := range []kernel.TauStep{kernel.TauLP, kernel.TauEntropy} {
				run("adap α="+ftoa(a)+" "+st.String()+" graph", &kernel.MultiK{Common: model.Common{Rank: 40}, Alpha: a, Step: st, Projection: kernel.ProjectGraph})
			}
		}
	}
}

func ftoa(f float64) string { return strings.TrimRight(strings.TrimRight(strconvF(f), "0"), ".") }
