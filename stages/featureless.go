package stages

import (
	"cmp"
	"errors"
	"math"
	"slices"

	"github.com/nmfstream/nmfstream/record"
)

// The arrival predictions of records without features. A record whose
// reason of rejection is record.ErrNoFeatures (an empty document, one
// without a usable term, a row of empty feature columns) teaches the
// model nothing, but it is still a record of the stream that a
// prequential scorer counts, where one left without a prediction is
// wrong. Its only evidence is the labels before it, so it is answered
// from their class shares: the recent labels' shares where PredictGraph
// keeps them (documents: the same shares its no-change expert answers,
// which follow a stream whose classes drift), else the class with the
// most labels in the window. The prediction waits for its label like any
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
			kept := l.predOf(&p)
			kept.Shares = true
			l.preds.put(p.ID, kept, l.horizon())
		}
	}
}

// classShares returns the arrival prediction of the record without
// features rj: Node −1, no code, the class with the largest share of the
// recent labels' (PredictGraph on documents) or of the window's labels,
// its share as the score, and rj's id (the sources give a record without
// an id its offset in decimal where they do so for samples: docs/DESIGN.md
// §5).
func (l *Learner) classShares(rj record.Reject) Prediction {
	p := Prediction{ID: rj.ID, Offset: rj.Offset, Node: -1, Score: math.NaN(), graph: noPrediction, lin: noPrediction, recent: noPrediction}
	if !l.KnowsLabel() {
		p.early = true
		return p
	}
	if pr := l.rc.probs(nil, len(l.classes)); pr != nil {
		c := argmax(pr)
		p.Label, p.Score = l.classes[c], pr[c]
		return p
	}
	count, total := l.labelCounts()
	if total == 0 {
		return p
	}
	c := 0
	for j, k := range count {
		if k > count[c] {
			c = j
		}
	}
	p.Label, p.Score = l.classes[c], float64(count[c])/float64(total)
	return p
}
