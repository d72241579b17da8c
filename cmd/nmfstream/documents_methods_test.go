package main

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/nmfstream/nmfstream/model/methods"
)

// TestEvalBrownEveryMethod runs eval with each method on the Brown split of
// TestEvalBrownDocuments (3 labels per genre, seed 1): every method must
// beat raw TF-IDF 1-NN on it (0.313), the figure the README's table lists
// per method. It fits every method on 333 documents (minutes), so it runs
// only with NMFSTREAM_LONG=1.
func TestEvalBrownEveryMethod(t *testing.T) {
	if testing.Short() || os.Getenv("NMFSTREAM_LONG") == "" {
		t.Skip("fits every method on 333 documents: set NMFSTREAM_LONG=1")
	}
	texts, labels := brownDocs(t, docsDir(t, "brown", "ca01"))
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
			if sum.Accuracy <= 0.313 {
				t.Errorf("accuracy %.4f, want above raw TF-IDF 1-NN's 0.313", sum.Accuracy)
			}
		})
	}
}
