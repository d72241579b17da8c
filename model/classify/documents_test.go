package classify_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/metrics"
	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/stages"
)

// dataDir returns the folder name under $NMFSTREAM_DATA, or else under
// $HOME/.cache/nmfstream-data (scripts/fetch-data.sh).
func dataDir(name string) string {
	if d := os.Getenv("NMFSTREAM_DATA"); d != "" {
		return filepath.Join(d, name)
	}
	h, _ := os.UserHomeDir()
	return filepath.Join(h, ".cache", "nmfstream-data", name)
}

// expBrown reads the Brown texts of dir without their tags, labeled by
// genre.
func expBrown(tb testing.TB, dir string) (texts []string, y []int) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		tb.Skipf("Brown corpus: %v (run scripts/fetch-data.sh)", err)
	}
	var names []string
	for _, e := range ents {
		n := e.Name()
		if len(n) == 4 && n[0] == 'c' && n[2] >= '0' && n[2] <= '9' {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	genre := map[byte]int{}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			tb.Fatal(err)
		}
		var sb strings.Builder
		for i, tok := range strings.Fields(string(b)) {
			if k := strings.LastIndexByte(tok, '/'); k >= 0 {
				tok = tok[:k]
			}
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(tok)
		}
		if _, ok := genre[n[1]]; !ok {
			genre[n[1]] = len(genre)
		}
		texts = append(texts, sb.String())
		y = append(y, genre[n[1]])
	}
	return
}

// expSpam reads the SpamAssassin mails of dir, ham 0 and spam 1.
func expSpam(tb testing.TB, dir string) (texts []string, y []int) {
	for _, g := range []string{"easy-ham-1", "easy-ham-2", "hard-ham-1", "spam-1", "spam-2"} {
		files, _ := filepath.Glob(filepath.Join(dir, g, "*.json"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				tb.Fatal(err)
			}
			var m struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal(b, &m); err != nil {
				tb.Fatal(err)
			}
			texts = append(texts, m.Text)
			c := 0
			if strings.HasPrefix(g, "spam") {
				c = 1
			}
			y = append(y, c)
		}
	}
	if len(texts) == 0 {
		tb.Skipf("no SpamAssassin mails in %s (run scripts/fetch-data.sh)", dir)
	}
	return
}

func sub(texts []string, idx []int) []string {
	out := make([]string, len(idx))
	for r, i := range idx {
		out[r] = texts[i]
	}
	return out
}

func envf(name string, def float64) float64 {
	if s := os.Getenv(name); s != "" {
		v, _ := strconv.ParseFloat(s, 64)
		return v
	}
	return def
}

// TestDocumentsGrid prints LapRLS's held-out accuracy on a corpus of
// scripts/fetch-data.sh (EXP_CORPUS: brown, 3 labels per genre; spam, 10
// per class; sotu, the addresses of the three largest parties, 5 per
// party) over the splits of seeds 1 … EXP_SEEDS (one third held out), for
// every K in EXP_K, γ_A in EXP_GA and γ_I in EXP_GI (comma-separated; a
// negative γ_I is the supervised fit), or γ_I picked among EXP_CHOICES by
// cross-validation. EXP_RAWTF, EXP_NOSTOP, EXP_STEM and EXP_MINDF change
// the vectorizer from stages.DefaultDocumentTFIDF. The figures of
// BENCHMARKS.md's "Documents" come from it, for example
//
//	EXP_CORPUS=brown EXP_SEEDS=5 EXP_K=10 EXP_GA=0.01 EXP_GI=1e5 EXP_CHOICES=1e5,0 go test ./model/classify -run TestDocumentsGrid -v
func TestDocumentsGrid(t *testing.T) {
	corpus := os.Getenv("EXP_CORPUS")
	if corpus == "" {
		t.Skip("EXP_CORPUS not set")
	}
	var texts []string
	var y []int
	L := 3
	switch corpus {
	case "brown":
		texts, y = expBrown(t, dataDir("brown"))
	case "sotu":
		texts, y = expSotu(t, dataDir("sotu"))
		L = 5
	case "spam":
		texts, y = expSpam(t, dataDir("spam"))
		L = 10
	}
	seeds := int(envf("EXP_SEEDS", 1))
	if os.Getenv("EXP_K") == "" || os.Getenv("EXP_GA") == "" || os.Getenv("EXP_GI") == "" {
		t.Fatal("set EXP_K, EXP_GA and EXP_GI")
	}
	gA := strings.Split(os.Getenv("EXP_GA"), ",")
	gI := strings.Split(os.Getenv("EXP_GI"), ",")
	ks := strings.Split(os.Getenv("EXP_K"), ",")
	for _, ka := range ks {
		for _, ga := range gA {
			for _, gi := range gI {
				var sum float64
				var lastIt int
				var accs []string
				start := time.Now()
				for seed := 1; seed <= seeds; seed++ {
					split, err := metrics.Split(y, 1.0/3, L, rand.NewPCG(uint64(seed), 1))
					if err != nil {
						t.Fatal(err)
					}
					tf := stages.DefaultDocumentTFIDF()
					tf.SublinearTF = os.Getenv("EXP_RAWTF") == ""
					tf.MinDF = stages.DocFreq{Count: int(envf("EXP_MINDF", 2))}
					tf.Stem = os.Getenv("EXP_STEM") != ""
					if os.Getenv("EXP_NOSTOP") != "" {
						tf.StopWords = nil
					}
					xtr, err := tf.FitTransform(sub(texts, split.Train))
					if err != nil {
						t.Fatal(err)
					}
					xte, _ := tf.Transform(sub(texts, split.Test))
					ytr, _ := split.PoolLabels(y)
					xtr, ytr = dropEmpty(xtr, ytr)
					k, _ := strconv.Atoi(ka)
					a, _ := strconv.ParseFloat(ga, 64)
					i, _ := strconv.ParseFloat(gi, 64)
					lr := &classify.LapRLS{K: k, GammaA: a, GammaI: i, Tol: envf("EXP_TOL", 0)}
					if os.Getenv("EXP_CHOICES") != "" {
						for _, c := range strings.Split(os.Getenv("EXP_CHOICES"), ",") {
							v, _ := strconv.ParseFloat(c, 64)
							lr.Choices = append(lr.Choices, v)
						}
					}
					if err := lr.Fit(xtr, ytr); err != nil {
						t.Fatal(err)
					}
					pred := lr.PredictTo(nil, xte)
					acc := metrics.Accuracy(pred, sub2(y, split.Test))
					sum += acc
					accs = append(accs, fmt.Sprintf("%.3f(%g %.2f)", acc, lr.GammaIChosen(), lr.Scores()))
					lastIt = lr.Iterations()
				}
				t.Logf("%s it=%d k=%s gA=%s gI=%s mean %.4f %v (%.1fs)", corpus, lastIt, ka, ga, gi, sum/float64(seeds), accs, time.Since(start).Seconds())
			}
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
