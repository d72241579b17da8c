package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/sources"
	"github.com/nmfstream/nmfstream/stages"
)

// A learner is an incremental peer of the stream: predict is asked about
// each sample on arrival, before add and learn see it; add sees every
// sample, learn each label (of a sample added before) in input order.
type learner interface {
	predict(s sample) (class string, score float64, ok bool)
	add(id string, s sample)
	learn(id, class string)
}

// sample is one sample of a stream: its text (a text stream) or its
// pixels (an image stream).
type sample struct {
	text string
	x    []float64
}

func runPeer(args []string) error {
	fs := flag.NewFlagSet("peer", flag.ExitOnError)
	in := fs.String("in", "", "the stream (a text or image stream that make wrote)")
	out := fs.String("out", "", "predictions, JSON lines as stream --out writes them")
	method := fs.String("method", "knn", "knn: TF-IDF 1-NN (cosine) over the labeled samples, on images the Euclidean 1-NN on their pixels; nb: multinomial naive Bayes on the labeled samples' term counts; svm: a linear SVM (LinearSVC's defaults) on the labeled samples' TF-IDF rows, refitted as they grow; last: the last label known (the no-change classifier); nb and svm read text only")
	fs.Parse(args)
	if *in == "" || *out == "" {
		return errors.New("peer: --in and --out are required")
	}
	switch *method {
	case "knn", "nb", "svm", "last":
	default:
		return fmt.Errorf("peer: unknown --method %q: want knn, nb, svm or last", *method)
	}
	var l learner // made at the first batch, which says the stream's form
	src, err := sources.Open(*in)
	if err != nil {
		return err
	}
	defer src.Close()
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	type line struct {
		ID     string   `json:"id"`
		Offset int64    `json:"offset"`
		Pred   *string  `json:"pred"`
		Score  *float64 `json:"score"`
	}
	for src.Next() {
		b := src.Batch()
		if b.Len() > 0 && b.Form != record.FormText && b.Form != record.FormDense {
			return fmt.Errorf("peer: %s: not a text or image stream", *in)
		}
		if b.Len() > 0 && l == nil {
			if l, err = newLearner(*method, b.Form); err != nil {
				return fmt.Errorf("peer: %s: %w", *in, err)
			}
		}
		at := func(i int) sample {
			if b.Form == record.FormDense {
				return sample{x: b.Dense.RawRowView(i)}
			}
			return sample{text: b.Text[i]}
		}
		// Records in offset order, as the stream takes them.
		si, li := 0, 0
		for si < b.Len() || li < len(b.LateLabels) {
			if li < len(b.LateLabels) && (si == b.Len() || b.LateLabels[li].Offset < b.Offsets[si]) {
				if l != nil {
					l.learn(b.LateLabels[li].ID, b.LateLabels[li].Label)
				}
				li++
				continue
			}
			rec := line{ID: b.IDs[si], Offset: b.Offsets[si]}
			if c, s, ok := l.predict(at(si)); ok {
				rec.Pred, rec.Score = &c, &s
			}
			if err := enc.Encode(rec); err != nil {
				return err
			}
			l.add(b.IDs[si], at(si))
			if b.Labeled[si] {
				l.learn(b.IDs[si], b.Labels[si])
			}
			si++
		}
	}
	if err := src.Err(); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// newLearner returns the peer method for a stream of the given form.
func newLearner(method string, form record.Form) (learner, error) {
	dense := form == record.FormDense
	switch {
	case method == "last":
		return &lastLabel{}, nil
	case method == "knn" && dense:
		return &pixelKNN{rows: map[string][]float64{}}, nil
	case dense:
		return nil, fmt.Errorf("--method %s reads text; an image stream has knn and last", method)
	case method == "knn":
		return newKNN(), nil
	case method == "nb":
		return newNB(), nil
	}
	return newSVM(), nil
}

// pixelKNN is the incremental 1-NN of an image stream: each sample is
// predicted with the class of the labeled sample nearest to it in
// Euclidean distance among those whose label has arrived (the first one on
// a tie). A prediction costs the labeled samples times the pixels.
type pixelKNN struct {
	rows  map[string][]float64 // id → pixels, kept until its label arrives
	x     [][]float64          // labeled samples' pixels
	class []string
}

func (k *pixelKNN) predict(s sample) (string, float64, bool) {
	best, bd := -1, math.Inf(1)
	for i, r := range k.x {
		var d float64
		for j, v := range r {
			t := v - s.x[j]
			d += t * t
			if d >= bd {
				break
			}
		}
		if d < bd {
			best, bd = i, d
		}
	}
	if best < 0 {
		return "", 0, false
	}
	return k.class[best], 1, true
}

func (k *pixelKNN) add(id string, s sample) { k.rows[id] = slices.Clone(s.x) }

func (k *pixelKNN) learn(id, class string) {
	r, ok := k.rows[id]
	if !ok {
		return
	}
	delete(k.rows, id)
	k.x = append(k.x, r)
	k.class = append(k.class, class)
}

// knn is the incremental TF-IDF 1-NN: every sample is vectorized on arrival
// by the stream's own vectorizer (stages.DefaultStreamTFIDF, its document
// frequencies updated with the sample first, as the stream's Featurize
// does), and predicted with the class of its most cosine-similar sample
// among those whose label has arrived. An inverted index over the labeled
// rows makes a prediction cost the postings of its terms.
type knn struct {
	tf     *stages.TFIDF
	cur    []entry            // the row of the sample predict saw last
	rows   map[string][]entry // id → its l2-normalized row, kept until its label arrives
	post   [][]entry          // column → (labeled sample, value)
	class  []string           // labeled sample → class
	acc    []float64          // labeled sample → dot product, workspace
	counts map[string]int     // class → labels, for rows that meet none
}

type entry struct {
	j int32
	v float64
}

func newKNN() *knn {
	return &knn{tf: stages.DefaultStreamTFIDF(), rows: map[string][]entry{}, counts: map[string]int{}}
}

// vectorize sets k.cur to text's row, the vectorizer's document
// frequencies updated with it first (nil if it has no term).
func (k *knn) vectorize(text string) {
	k.cur = nil
	if k.tf.Update([]string{text}) == nil {
		if m, err := k.tf.Transform([]string{text}); err == nil {
			ind, val := m.Row(0)
			for p, j := range ind {
				k.cur = append(k.cur, entry{int32(j), val[p]})
			}
		}
	}
}

func (k *knn) predict(s sample) (string, float64, bool) {
	k.vectorize(s.text)
	if len(k.class) == 0 {
		return "", 0, false
	}
	for _, e := range k.cur {
		if int(e.j) < len(k.post) {
			for _, p := range k.post[e.j] {
				k.acc[p.j] += e.v * p.v
			}
		}
	}
	best, bs := -1, 0.0
	for i, s := range k.acc {
		if s > bs {
			best, bs = i, s
		}
		k.acc[i] = 0
	}
	if best < 0 { // no term in common with a labeled sample
		return majority(k.counts), 0, true
	}
	return k.class[best], bs, true
}

func (k *knn) add(id string, _ sample) { k.rows[id] = k.cur }

func (k *knn) learn(id, class string) {
	r, ok := k.rows[id]
	if !ok {
		return
	}
	delete(k.rows, id)
	i := int32(len(k.class))
	k.class = append(k.class, class)
	k.acc = append(k.acc, 0)
	k.counts[class]++
	for _, e := range r {
		for int(e.j) >= len(k.post) {
			k.post = append(k.post, nil)
		}
		k.post[e.j] = append(k.post[e.j], entry{i, e.v})
	}
}

// majority returns the most frequent class of counts (the smallest name on
// a tie).
func majority(counts map[string]int) string {
	best, bn := "", -1
	for c, n := range counts {
		if n > bn || n == bn && c < best {
			best, bn = c, n
		}
	}
	return best
}

// nb is online multinomial naive Bayes (McCallum and Nigam 1998) on the term
// counts of the labeled samples: terms lower-cased, English stop words
// dropped (the stream's analyzer), Laplace smoothing (α = 1) over the terms
// seen in labeled samples so far, the class prior from the labels' counts.
type nb struct {
	stop   map[string]bool
	toks   []string
	rows   map[string]map[string]int // id → term counts, kept until its label arrives
	vocab  map[string]int            // term → column
	counts map[string][]float64      // class → term column → count
	total  map[string]float64        // class → terms
	labels map[string]int            // class → labeled samples
	n      int                       // labeled samples
}

func newNB() *nb {
	stop := map[string]bool{}
	for _, w := range stages.EnglishStopWords() {
		stop[w] = true
	}
	return &nb{stop: stop, rows: map[string]map[string]int{}, vocab: map[string]int{},
		counts: map[string][]float64{}, total: map[string]float64{}, labels: map[string]int{}}
}

func (m *nb) terms(text string) map[string]int {
	m.toks = stages.Tokenize(m.toks[:0], text)
	tc := map[string]int{}
	for _, t := range m.toks {
		t = strings.ToLower(t)
		if !m.stop[t] {
			tc[t]++
		}
	}
	return tc
}

func (m *nb) predict(s sample) (string, float64, bool) {
	text := s.text
	if m.n == 0 {
		return "", 0, false
	}
	tc := m.terms(text)
	v := float64(len(m.vocab))
	best, bs := "", math.Inf(-1)
	var logs []float64
	for c, cc := range m.counts {
		s := math.Log(float64(m.labels[c]) / float64(m.n))
		den := math.Log(m.total[c] + v) // α = 1
		for t, n := range tc {
			j, ok := m.vocab[t]
			if !ok {
				continue
			}
			var x float64
			if j < len(cc) {
				x = cc[j]
			}
			s += float64(n) * (math.Log(x+1) - den)
		}
		logs = append(logs, s)
		if s > bs || s == bs && c < best {
			best, bs = c, s
		}
	}
	// The posterior of the class predicted, as its score.
	var z float64
	for _, s := range logs {
		z += math.Exp(s - bs)
	}
	return best, 1 / z, true
}

func (m *nb) add(id string, s sample) { m.rows[id] = m.terms(s.text) }

func (m *nb) learn(id, class string) {
	tc, ok := m.rows[id]
	if !ok {
		return
	}
	delete(m.rows, id)
	cc := m.counts[class]
	for t, n := range tc {
		j, ok := m.vocab[t]
		if !ok {
			j = len(m.vocab)
			m.vocab[t] = j
		}
		for j >= len(cc) {
			cc = append(cc, 0)
		}
		cc[j] += float64(n)
		m.total[class] += float64(n)
	}
	m.counts[class] = cc
	m.labels[class]++
	m.n++
}

// lastLabel predicts the last label that arrived, whatever the sample: the
// no-change classifier, the floor of a stream whose classes come in runs
// (Žliobaitė, Bifet, Read, Pfahringer and Holmes, "Evaluation methods and
// decision theory for classification of streaming data with temporal
// dependence", Machine Learning 98, 2015).
type lastLabel struct {
	last string
	seen map[string]bool
}

func (l *lastLabel) predict(sample) (string, float64, bool) { return l.last, 1, l.last != "" }

func (l *lastLabel) add(id string, _ sample) {
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	l.seen[id] = true
}

func (l *lastLabel) learn(id, class string) {
	if l.seen[id] {
		l.last = class
	}
}
