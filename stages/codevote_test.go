package stages

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/pipeline"
	"github.com/nmfstream/nmfstream/record"
)

// topicBatches returns a document stream of three topics, the third rare
// (a tenth of the documents), each document's words half from its topic
// and half from words common to all, in batches of ten with ids d<offset>: a
// fifth labeled with their sample, another fifth labeled by a late label
// in the next batch, so that predictions wait for their labels between
// batches.
func topicBatches(seed uint64, batches int) []*record.Batch {
	topics := [][]string{
		{"goal", "match", "team", "score", "league", "coach", "player"},
		{"market", "stock", "price", "bank", "trade", "profit", "investor"},
		{"storm", "rain", "flood", "wind", "forecast", "snow", "weather"},
	}
	common := []string{"year", "people", "report", "city", "week", "official", "group", "plan", "news", "local"}
	names := []string{"sport", "finance", "weather"}
	rnd := rand.New(rand.NewPCG(seed, seed))
	var bs []*record.Batch
	var late []record.LateLabel
	var off int64
	for range batches {
		b := &record.Batch{Form: record.FormText}
		for _, ll := range late {
			ll.Offset = off
			b.LateLabels = append(b.LateLabels, ll)
			off++
		}
		late = nil
		for range 10 {
			c := rnd.IntN(2)
			if rnd.Float64() < 0.1 {
				c = 2
			}
			var w []string
			for range 8 {
				if rnd.Float64() < 0.5 {
					w = append(w, topics[c][rnd.IntN(len(topics[c]))])
				} else {
					w = append(w, common[rnd.IntN(len(common))])
				}
			}
			id := fmt.Sprint("d", off)
			u := rnd.Float64()
			b.Text = append(b.Text, strings.Join(w, " "))
			b.IDs = append(b.IDs, id)
			b.Labels = append(b.Labels, names[c])
			b.Labeled = append(b.Labeled, u < 0.2)
			b.Offsets = append(b.Offsets, off)
			if u >= 0.2 && u < 0.4 {
				late = append(late, record.LateLabel{ID: id, Label: names[c]})
			}
			off++
		}
		bs = append(bs, b)
	}
	return bs
}

func newTopicLearner() *Learner {
	return &Learner{Model: &model.Online{Rank: 4, Graph: graph.KNN{K: 5, Metric: graph.Cosine}, InitSize: 20, Src: rand.NewPCG(1, 1)}}
}

// TestCodeExpert checks PredictGraph's code-space expert on documents:
// its shares against a brute-force vote of the k nearest labeled codes by
// cosine, smoothed by codeVotePseudo uniform pseudo-votes; its class kept
// with each waiting prediction and scored by the hedge; the two across a
// state round trip; and NoCodeExpert, which leaves it out (no class, the
// mixture's weights without it) and is refused where it changes nothing.
func TestCodeExpert(t *testing.T) {
	bs := topicBatches(7, 30)
	l, off := newTopicLearner(), &Learner{Model: newTopicLearner().Model, NoCodeExpert: true}
	var voted, differ int
	for i, b := range bs {
		if i == len(bs)-1 {
			break // the last batch goes through the state round trip below
		}
		sa, err := l.Learn(b)
		if err != nil {
			t.Fatal(err)
		}
		so, err := off.Learn(b)
		if err != nil {
			t.Fatal(err)
		}
		for p, pa := range sa.Predictions {
			if pa.codes >= 0 {
				voted++
			}
			if po := so.Predictions[p]; po.codes != noPrediction {
				t.Fatalf("NoCodeExpert: offset %d has the code-space expert's class %d", po.Offset, po.codes)
			} else if po.Label != pa.Label {
				differ++
			}
		}
	}
	if voted < 250 {
		t.Errorf("the code-space expert answered %d samples, want ≥ 250 of the 290 after the first fit", voted)
	}
	if differ == 0 {
		t.Error("NoCodeExpert changed no prediction: the expert does not reach the mixture")
	}
	if l.hd.loss[expertCodes] == 0 || l.hd.loss[expertCodes] == off.hd.loss[expertCodes] {
		t.Errorf("the code-space expert's decayed mistakes %v (without it %v): not scored", l.hd.loss[expertCodes], off.hd.loss[expertCodes])
	}

	// The shares of every live node against a brute-force vote.
	_, y, ref := l.liveCodes(true)
	ids, _, q := l.liveCodes(false)
	pc := l.codeVotes(ids)
	nc, k := len(l.classes), l.Model.Graph.K
	checked := 0
	for p := range ids {
		sims := make([]float64, len(y))
		for j := range y {
			a, b := q.RawRowView(p), ref.RawRowView(j)
			sims[j] = dot(a, b) / math.Sqrt(dot(a, a)*dot(b, b))
		}
		order := make([]int, len(y))
		for j := range order {
			order[j] = j
		}
		sort.SliceStable(order, func(i, j int) bool { return sims[order[i]] > sims[order[j]] })
		if sims[order[k-1]]-sims[order[k]] < 1e-9 {
			continue // a tie at the k-th: either neighbour is right
		}
		want := make([]float64, nc)
		for _, j := range order[:k] {
			want[y[j]]++
		}
		for c := range want {
			want[c] = (want[c] + codeVotePseudo/float64(nc)) / float64(k+codeVotePseudo)
			if got := pc[p*nc+c]; math.Abs(got-want[c]) > 1e-12 {
				t.Fatalf("node %d class %d: share %v, want %v", ids[p], c, got, want[c])
			}
		}
		checked++
	}
	if checked < len(ids)/2 {
		t.Fatalf("checked %d of %d nodes", checked, len(ids))
	}

	// A round trip keeps the expert's mistakes and the classes it gave the
	// waiting predictions, and the restored learner predicts the same.
	s, err := l.State()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(s.PredCodes, func(c int) bool { return c >= 0 }) {
		t.Fatalf("no waiting prediction carries the expert's class: %v", s.PredCodes)
	}
	r := newTopicLearner()
	if err := r.Restore(s); err != nil {
		t.Fatal(err)
	}
	_, want := l.preds.items()
	if _, got := r.preds.items(); r.hd != l.hd || !slices.Equal(got, want) {
		t.Fatalf("restored hedge %v, predictions %v; want %v, %v", r.hd, got, l.hd, want)
	}
	learnBoth(t, l, bs[len(bs)-1:], func(p, q Prediction) bool {
		return p.Label == q.Label && p.Score == q.Score && p.codes == q.codes
	}, r)
	if r.hd != l.hd {
		t.Errorf("after the last batch the restored hedge %v, want %v", r.hd, l.hd)
	}

	// NoCodeExpert where there is no such expert to leave out.
	for _, bad := range []*Learner{
		{Model: newTopicLearner().Model, NoCodeExpert: true, Predictor: PredictNearest},
		{Model: newTopicLearner().Model, NoCodeExpert: true, Predictor: PredictSpread},
		{Model: newTopicLearner().Model, NoCodeExpert: true, Codes: CodesOff},
	} {
		var se *SettingError
		if err := bad.Check(); !errors.As(err, &se) || se.Field != "NoCodeExpert" {
			t.Errorf("predictor %v, codes %v: Check() = %v, want a SettingError of NoCodeExpert", bad.Predictor, bad.Codes, err)
		}
	}
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// TestCodeExpertBesideSame: on documents, where the mixture's code-space
// expert reads the codes of the batch's step, the predictions made beside
// the step (Learner.Go), with the labels that arrive before a sample set
// while the step runs, are the same bits as with the step run first.
func TestCodeExpertBesideSame(t *testing.T) {
	seq, beside := newTopicLearner(), newTopicLearner()
	beside.Go = pipeline.Go
	learnBoth(t, seq, topicBatches(11, 30), func(p, q Prediction) bool {
		same := p.Score == q.Score || math.IsNaN(p.Score) && math.IsNaN(q.Score)
		return same && p.Label == q.Label && p.codes == q.codes && p.graph == q.graph && slices.Equal(p.Code, q.Code)
	}, beside)
	if seq.hd != beside.hd {
		t.Errorf("hedge %v beside the step, %v after it", beside.hd, seq.hd)
	}
}
