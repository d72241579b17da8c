package main

import (
	"encoding/json"
	"testing"

	"github.com/nmfstream/nmfstream/internal/testenv"
	"github.com/nmfstream/nmfstream/model/methods"
)

// TestEvalBrownEveryMethod runs eval with each method on the Brown split of
// TestEvalBrownDocuments (3 labels per genre, seed 1), the figures of the
// README's table: every method whose model keeps its training rows is
// classified by LapRLS and must beat raw TF-IDF 1-NN on the split (0.313);
// DPCA, a linear map that keeps none, is classified by 1-NN on its codes
// (0.207 measured) and must beat twice chance (2/15). It fits every method
// on 333 documents (minutes), so it runs only with NMFSTREAM_LONG=1.
func TestEvalBrownEveryMethod(t *testing.T) {
	testenv.SkipUnlessLong(t, "fits every method on 333 documents, minutes")
	texts, labels := testenv.BrownTexts(t)
	train, test := docFiles(t, t.TempDir(), texts, labels, 3)
	for _, m := range methods.List() {
		t.Run(m.Name, func(t *testing.T) {
			code, out, errb := runCmd(t, "eval", "--train", train, "--test", test, "--method", m.Name, "--json")
			if code != 0 {
				t.Fatalf("eval --method %s: exit %d: %s", m.Name, code, errb)
			}
			var sum evalSummary
			if err := json.Unmarshal([]byte(out), &sum); err != nil {
				t.Fatalf("eval --json output %q: %v", out, err)
			}
			t.Logf("%-8s accuracy %.4f balanced %.4f macro-F1 %.4f classifier %s fit %.1fs",
				m.Name, sum.Accuracy, sum.BalancedAccuracy, sum.MacroF1, sum.Classifier, sum.FitSeconds)
			floor := 0.313
			if sum.Classifier == "codes-1nn" {
				floor = 2.0 / 15
			}
			if sum.Accuracy <= floor {
				t.Errorf("accuracy %.4f (%s), want above %.3f", sum.Accuracy, sum.Classifier, floor)
			}
		})
	}
}
