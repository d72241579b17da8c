package stages

import (
	"cmp"
	"errors"
	"slices"

	"github.com/nmfstream/nmfstream/record"
)

// The arrival predictions of records without features. A record whose
// reason of rejection is record.ErrNoFeatures (an empty document, one
// without a usable term, a row of empty feature columns) teaches the
// model nothing, but it is still a record of the stream that a
// prequential scorer counts, where one left without a prediction is
// wrong. Its only evidence is the labels before it, so it is answered
// from their class shares (classPrior). The prediction waits for its label like any
// arrival prediction (Scorer), without scoring PredictGraph's experts,
// which did not answer it.

// featurelessQueue returns the rejects of rejects that have no features,
// by offset, in a new slice.
func featurelessQueue(rejects []record.Reject) []record.Reject {
	var q []record.Reject
	for _, rj := range rejects {
		if errors.Is(rj.Reason, record.ErrNoFeatures) {
			q = append(q, rj)
		}
	}
	slices.SortStableFunc(q, func(a, b record.Reject) int { return cmp.Compare(a.Offset, b.Offset) })
	return q
}

// predictFeatureless predicts the records of l.featureless (records
// without features, by offset) whose offset is below before, with the
// labels learned so far, appends the predictions to l.featurelessOut and
// keeps those with an id for their labels.
func (l *Learner) predictFeatureless(before int64) {
	for len(l.featureless) > 0 && l.featureless[0].Offset < before {
		rj := l.featureless[0]
		l.featureless = l.featureless[1:]
		p := l.classShares(rj)
		l.featurelessOut = append(l.featurelessOut, p)
		if p.ID != "" {
			l.preds.put(p.ID, l.predOf(&p), l.horizon())
		}
	}
}

// classPrior answers records without features: two constant experts, the
// class with the largest share of the recent labels (recent, PredictGraph's
// no-change expert on documents) and the class with the most labels so far
// (count), each scored on every label learned, before it is learned, its
// right answers forgetting as the hedge's mistakes do (hedgeDecay); the
// better one so far answers. A stream in time order, whose classes come in
// runs or drift, is answered by its last labels; a shuffled one by its
// most frequent class. O(classes) per label.
type classPrior struct {
	count []float64  // labels learned, by class
	hits  [2]float64 // decayed right answers of the recent class and of the most frequent class
}

// learn scores both experts on a label of class c, recent being the recent
// labels' shares before it (recent.share, unnormalized; nil: none), and
// counts it.
func (cp *classPrior) learn(c int, recent []float64) {
	for i := range cp.hits {
		cp.hits[i] *= hedgeDecay
	}
	if recent != nil && argmax(recent) == c {
		cp.hits[0]++
	}
	if len(cp.count) > 0 && argmax(cp.count) == c && cp.count[c] > 0 {
		cp.hits[1]++
	}
	for len(cp.count) <= c {
		cp.count = append(cp.count, 0)
	}
	cp.count[c]++
}

// classShares returns the arrival prediction of the record without
// features rj: Node −1, no code, classPrior's answer (the recent labels'
// class or the most frequent one, with its share as the score), and rj's
// id (the sources give a record without an id its offset in decimal where
// they do so for samples: docs/DESIGN.md §5).
func (l *Learner) classShares(rj record.Reject) Prediction {
	p := unanswered(rj.ID, rj.Offset, -1)
	p.shares = true
	if !l.KnowsLabel() {
		p.early = true
		return p
	}
	l.answerFromShares(&p)
	return p
}

// answerFromShares sets p's label and score to classPrior's answer (the
// recent labels' class or the most frequent one, with its share as the
// score), and marks it as answered from the class shares, so that the
// experts, which did not answer it, are not scored on it; it leaves p as
// it is if no label has been learned.
func (l *Learner) answerFromShares(p *Prediction) {
	if pr := l.rc.probs(nil, len(l.classes)); pr != nil && l.cp.hits[0] >= l.cp.hits[1] {
		c := argmax(pr)
		p.Label, p.Score, p.shares = l.classes[c], pr[c], true
		return
	}
	count := l.cp.count
	if len(count) == 0 { // a state saved before classPrior: the window's labels
		n, _ := l.labelCounts()
		count = make([]float64, len(n))
		for j, k := range n {
			count[j] = float64(k)
		}
	}
	var total float64
	for _, k := range count {
		total += k
	}
	if total == 0 {
		return
	}
	c := argmax(count)
	p.Label, p.Score, p.shares = l.classes[c], count[c]/total, true
}
