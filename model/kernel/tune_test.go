package kernel_test

import (
	"os"
	"testing"
	"time"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/kernel"
)

// TestTune prints validation accuracies of candidate settings. It runs only
// with NMFSTREAM_TUNE=1; it never looks at the test split.
func TestTune(t *testing.T) {
	if os.Getenv("NMFSTREAM_TUNE") == "" {
		t.Skip("set NMFSTREAM_TUNE=1")
	}
	s := digitsValidation(t)
	for _, sc := range []float64{0.1, 0.2, 0.3, 0.5} {
		for _, pr := range []kernel.Projection{kernel.ProjectNNLS, kernel.ProjectPaper, kernel.ProjectGraph} {
			start := time.Now()
			m := &kernel.Flexible{Common: model.Common{Rank: 40}, Kernel: kernel.Gaussian{Scale: sc, Rule: kernel.MeanDistance}, Projection: pr}
			acc := heldOut(t, m, s)
			t.Logf("flex gauss mean×%g %v: %.4f (%v, %d iters)", sc, pr, acc, time.Since(start).Round(time.Millisecond), m.Result().Iters)
		}
	}
}
