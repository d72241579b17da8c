package kernel_test

import (
	"os"
	"testing"
	"time"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/kernel"
)

func TestProf(t *testing.T) {
	if os.Getenv("NMFSTREAM_TUNE") == "" {
		t.Skip()
	}
	s := digitsValidation(t)
	start := time.Now()
	m := &kernel.Flexible{Common: model.Common{Rank: 40, MaxIter: 100, Tol: -1}, Kernel: kernel.Gaussian{Scale: 0.5, Rule: kernel.MeanDistance}}
	if err := m.Fit(model.DenseRows(s.xtr), nil); err != nil {
		t.Fatal(err)
	}
	t.Log("fit", time.Since(start))
	start = time.Now()
	mk := &kernel.MultiK{Common: model.Common{Rank: 40, MaxIter: 100, Tol: -1}, Kernels: []kernel.Kernel{kernel.Gaussian{Scale: 0.5, Rule: kernel.MeanDistance}}}
	if err := mk.Fit(model.DenseRows(s.xtr), nil); err != nil {
		t.Fatal(err)
	}
	t.Log("fit multik", time.Since(start))
}
