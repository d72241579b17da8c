package stages

import (
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/graph"
)

func envInts(name, def string) []int {
	v := os.Getenv(name)
	if v == "" {
		v = def
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, _ := strconv.Atoi(f)
		out = append(out, n)
	}
	return out
}

// TestTunePrequential is the tuning harness behind the defaults; it runs
// only with NMFSTREAM_TUNE=1 (lists of values in TUNE_* variables;
// TUNE_WINDOW, TUNE_PREDICTOR and TUNE_REVISIT take one value).
func TestTunePrequential(t *testing.T) {
	if os.Getenv("NMFSTREAM_TUNE") == "" {
		t.Skip("set NMFSTREAM_TUNE=1")
	}
	recs, truth := digitsStream(0.1, 100)
	for _, rank := range envInts("TUNE_RANK", "20") {
		for _, k := range envInts("TUNE_K", "5") {
			for _, vote := range envInts("TUNE_VOTE", "1") {
				for _, met := range envInts("TUNE_METRIC", "0") {
					for _, bs := range envInts("TUNE_BATCH", "10") {
						for _, sw := range envInts("TUNE_SWEEPS", "0") {
							start := time.Now()
							win := envInts("TUNE_WINDOW", "0")[0]
							pred := Predictor(envInts("TUNE_PREDICTOR", "0")[0])
							rv := model.Revisit(envInts("TUNE_REVISIT", "0")[0])
							l := &Learner{Model: &model.Online{Rank: rank, Graph: graph.KNN{K: k, Window: win}, Sweeps: sw, Revisit: rv, Src: rand.NewPCG(1, 1)}, Neighbors: vote, Metric: classify.Metric(met), Predictor: pred}
							all, right := 0, 0
							for _, b := range batches(recs, bs) {
								st, err := l.Learn(b)
								if err != nil {
									t.Fatal(err)
								}
								for _, p := range st.Predictions {
									all++
									if p.Label == truth[p.ID] {
										right++
									}
								}
							}
							c := l.Counters()
							t.Logf("rank %d k %d vote %d metric %d batch %d sweeps %d: prequential %.4f (%d/%d, unpred %d) every-sample %.4f  %v", rank, k, vote, met, bs, sw, c.Accuracy(), c.Correct, c.Labeled, c.Unpredicted, float64(right)/float64(all), time.Since(start).Round(time.Millisecond))
						}
					}
				}
			}
		}
	}
}
