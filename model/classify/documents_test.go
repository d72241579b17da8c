package classify_test

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/nmfstream/nmfstream/internal/testenv"
	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/metrics"
	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/stages"
)

// encodeSorted returns the classes of labels numbered in their sorted
// order.
func encodeSorted(labels []string) []int {
	var enc metrics.LabelEncoder
	enc.Fit(labels)
	y, _ := enc.Encode(nil, labels) // every label is known after Fit
	return y
}

func sub(texts []string, idx []int) []string {
	out := make([]string, len(idx))
	for r, i := range idx {
		out[r] = texts[i]
	}
	return out
}

// docCorpus reads a corpus of scripts/fetch-data.sh by name (brown: 3
// labels per genre; spam: 10 per class; sotu: the addresses of the three
// largest parties, 5 per party) and returns its texts, their classes and
// the labels per class of the protocol. It skips tb without the data.
func docCorpus(tb testing.TB, name string) (texts []string, y []int, perClass int) {
	tb.Helper()
	switch name {
	case "brown":
		texts, genres := testenv.BrownTexts(tb)
		return texts, encodeSorted(genres), 3
	case "spam":
		texts, labels := testenv.Spam(tb)
		return texts, encodeSorted(labels), 10 // ham 0, spam 1
	case "sotu":
		texts, y = expSotu(tb, testenv.Data(tb, "sotu"))
		return texts, y, 5
	}
	tb.Fatalf("unknown corpus %q", name)
	return nil, nil, 0
}

// lapRLSAccuracy returns the mean held-out accuracy of lr over the splits
// of seeds 1, …, seeds (metrics.Split: one third held out, perClass labels
// per class) of a corpus vectorized by stages.DefaultDocumentTFIDF.
func lapRLSAccuracy(tb testing.TB, texts []string, y []int, perClass, seeds int, lr *classify.LapRLS) float64 {
	tb.Helper()
	var sum float64
	for seed := 1; seed <= seeds; seed++ {
		xtr, ytr, xte, yte := splitDocuments(tb, texts, y, perClass, uint64(seed))
		if err := lr.Fit(xtr, ytr); err != nil {
			tb.Fatal(err)
		}
		sum += metrics.Accuracy(lr.PredictTo(nil, xte), yte)
	}
	return sum / float64(seeds)
}

// splitDocuments holds out a third of the documents (metrics.Split with
// seed, perClass labeled per class in the pool), and returns the pool's
// TF-IDF rows (the default document vectorizer fitted on the pool, empty
// rows dropped) with their labels (−1: unlabeled), and the held-out rows
// with their labels.
func splitDocuments(tb testing.TB, texts []string, y []int, perClass int, seed uint64) (xtr *sparse.CSR, ytr []int, xte *sparse.CSR, yte []int) {
	tb.Helper()
	split, err := metrics.Split(y, 1.0/3, perClass, rand.NewPCG(seed, 1))
	if err != nil {
		tb.Fatal(err)
	}
	tf := stages.DefaultDocumentTFIDF()
	if xtr, err = tf.FitTransform(sub(texts, split.Train)); err != nil {
		tb.Fatal(err)
	}
	if xte, err = tf.Transform(sub(texts, split.Test)); err != nil {
		tb.Fatal(err)
	}
	ytr, _ = split.PoolLabels(y)
	xtr, ytr = dropEmpty(xtr, ytr)
	return xtr, ytr, xte, sub2(y, split.Test)
}

// TestLapRLSDocuments checks LapRLS's held-out accuracy on the three text
// corpora of BENCHMARKS.md ("Documents: semi-supervised classification"),
// with γ_I picked by cross-validation between the graph (10⁵) and the
// supervised fit (0), against floors 0.005 under the measured means
// (in the comments). It needs NMFSTREAM_LONG=1 and the data: about a
// minute.
func TestLapRLSDocuments(t *testing.T) {
	testenv.SkipUnlessLong(t, "LapRLS on 13 splits of three text corpora")
	for _, c := range []struct {
		corpus string
		seeds  int
		floor  float64
	}{
		{"brown", 5, 0.388}, // measured 0.393
		{"spam", 3, 0.924},  // measured 0.929
		{"sotu", 5, 0.486},  // measured 0.491
	} {
		t.Run(c.corpus, func(t *testing.T) {
			texts, y, perClass := docCorpus(t, c.corpus)
			acc := lapRLSAccuracy(t, texts, y, perClass, c.seeds, &classify.LapRLS{Choices: []float64{1e5, 0}})
			t.Logf("mean held-out accuracy over seeds 1–%d: %.4f", c.seeds, acc)
			if acc < c.floor {
				t.Errorf("mean held-out accuracy over seeds 1–%d: %.4f, want at least %.3f", c.seeds, acc, c.floor)
			}
		})
	}
}

// BenchmarkLapRLSDocuments reports the held-out accuracy of BENCHMARKS.md's
// LapRLS table per corpus: the supervised fit (γ_I = 0), the graph (γ_I =
// 10⁵) and the choice between them by cross-validation, means over the
// seeds of TestLapRLSDocuments. It needs the data:
//
//	go test ./model/classify -run '^$' -bench LapRLSDocuments -benchtime 1x
func BenchmarkLapRLSDocuments(b *testing.B) {
	for _, c := range []struct {
		corpus string
		seeds  int
	}{{"brown", 5}, {"spam", 3}, {"sotu", 5}} {
		for _, g := range []struct {
			name string
			lr   classify.LapRLS
		}{
			{"supervised", classify.LapRLS{GammaI: -1}},
			{"graph", classify.LapRLS{GammaI: 1e5}},
			{"cross-validated", classify.LapRLS{Choices: []float64{1e5, 0}}},
		} {
			b.Run(c.corpus+"/"+g.name, func(b *testing.B) {
				texts, y, perClass := docCorpus(b, c.corpus)
				var acc float64
				for range b.N {
					lr := g.lr
					acc = lapRLSAccuracy(b, texts, y, perClass, c.seeds, &lr)
				}
				b.ReportMetric(acc, "accuracy")
			})
		}
	}
}

func sub2(y []int, idx []int) []int {
	out := make([]int, len(idx))
	for r, i := range idx {
		out[r] = y[i]
	}
	return out
}

func dropEmpty(x *sparse.CSR, y []int) (*sparse.CSR, []int) {
	_, d := x.Dims()
	out := sparse.Zeros(0, d)
	var yy []int
	for i := range y {
		ind, val := x.Row(i)
		if len(ind) == 0 {
			continue
		}
		out.AppendRow(ind, val)
		yy = append(yy, y[i])
	}
	return out, yy
}

// expSotu reads the State of the Union addresses of the Republican (0),
// Democratic (1) and Democratic-Republican (2) presidents.
func expSotu(tb testing.TB, dir string) (texts []string, y []int) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	cls := map[string]int{"Republican": 0, "Democratic": 1, "Democratic-Republican": 2}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var m struct {
			Party string `json:"party"`
			Text  string `json:"text"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			tb.Fatal(err)
		}
		c, ok := cls[m.Party]
		if !ok {
			continue
		}
		texts = append(texts, m.Text)
		y = append(y, c)
	}
	if len(texts) == 0 {
		tb.Skipf("no State of the Union addresses in %s (run scripts/fetch-data.sh)", dir)
	}
	return
}
