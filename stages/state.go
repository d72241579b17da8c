package stages

import (
	"errors"
	"fmt"
	"slices"

	"github.com/nmfstream/nmfstream/model"
)

// LearnerState is the plain-data state of a Learner, for checkpoints: the
// model's state, the vectorizer, the id bookkeeping, the labels waiting
// for their sample, the predictions waiting for their label and the
// counters. Restoring it into a Learner configured like the original one
// continues the stream exactly as if it had not stopped.
type LearnerState struct {
	Online     *model.OnlineState
	Vectorizer []byte // TFIDF.MarshalBinary, or nil
	Dim        int    // the stream's dimension, 0 before the first sample

	Nodes   []NodeState // by node id
	Seq     int
	Classes []string

	PredIDs       []string // arrival predictions waiting for a label, oldest first
	PredClasses   []int
	PendingIDs    []string // labels waiting for their sample, oldest first
	PendingLabels []string

	Counters  Counters
	Confusion [][]int64 // scored predictions by true class, then predicted class (last: none)

	Spread        []float64 // PredictGraph's label scores, Slots×SpreadClasses
	SpreadClasses int

	// PredictGraph's linear model (nil before its first label), the
	// decayed mistakes of its experts (Hedge: the spreading and the linear
	// model; HedgeRecent: the recent labels; HedgeCodes: the nearest
	// labeled codes), the recent labels' class shares, and the experts'
	// classes of the predictions waiting for a label (beside PredClasses;
	// absent in older states, HedgeCodes read as 0 and PredCodes as none).
	Linear             *LinearState
	Hedge              [2]float64
	HedgeRecent        float64
	HedgeCodes         float64
	Recent             []float64
	PredGraph, PredLin []int
	PredRecent         []int
	PredCodes          []int
	// PredShares marks the waiting predictions of records without
	// features (Step.Featureless), which no expert made (absent in older
	// states: none).
	PredShares []bool
	// PriorCounts and PriorHits are the answer of records without
	// features (classPrior: the labels learned by class, the two
	// experts' decayed right answers; absent in older states).
	PriorCounts []float64
	PriorHits   [2]float64

	// spreadRows, set by ForkState only, is a copy of the spreading's
	// weights as of the model's last TakeGraphEdits, which Restore takes
	// with the model's copied graph instead of weighing every row again.
	// Unexported, so gob and JSON leave it out.
	spreadRows *weightRows
}

// NodeState is the bookkeeping of one graph node.
type NodeState struct {
	Live  bool
	ID    string
	Class int
	Seq   int
	// Revisits is the number of the linear model's passes the node's label
	// may still take part in.
	Revisits int
}

// State returns a copy of l's state.
func (l *Learner) State() (*LearnerState, error) { return l.state(false) }

// ForkState is State with a copy of the model's k-NN graph and of the
// spreading's weights attached (model.Online.ForkState), for Learners
// restored from it in this process: Restore then copies them instead of
// rebuilding the graph and weighing its rows again. Encoded (gob, JSON),
// it is State's.
func (l *Learner) ForkState() (*LearnerState, error) { return l.state(true) }

func (l *Learner) state(fork bool) (*LearnerState, error) {
	if l.Model == nil {
		return nil, errors.New("stages: learner: no model")
	}
	l.init()
	s := &LearnerState{Dim: l.Featurize.dim, Seq: l.seq, Classes: slices.Clone(l.classes), Counters: l.sc.c}
	var live []int
	for n, nd := range l.nodes {
		s.Nodes = append(s.Nodes, NodeState{Live: nd.live, ID: nd.id, Class: nd.class, Seq: nd.seq, Revisits: nd.revisits})
		if nd.live {
			live = append(live, n)
		}
	}
	slices.SortFunc(live, func(a, b int) int { return l.nodes[a].seq - l.nodes[b].seq })
	var err error
	if l.Model.KNN() == nil {
		live = nil
	}
	if fork {
		s.Online, err = l.Model.ForkState(live)
	} else {
		s.Online, err = l.Model.State(live)
	}
	if err != nil {
		return nil, err
	}
	if l.Featurize.TFIDF != nil && l.Featurize.TFIDF.Dim() > 0 {
		if s.Vectorizer, err = l.Featurize.TFIDF.MarshalBinary(); err != nil {
			return nil, err
		}
	}
	ids, ps := l.preds.items()
	s.PredIDs = ids
	for _, p := range ps {
		s.PredClasses = append(s.PredClasses, p.Class)
		s.PredGraph = append(s.PredGraph, p.Graph)
		s.PredLin = append(s.PredLin, p.Lin)
		s.PredRecent = append(s.PredRecent, p.Recent)
		s.PredCodes = append(s.PredCodes, p.Codes)
		s.PredShares = append(s.PredShares, p.Shares)
	}
	if l.lin.c > 0 || l.lin.off {
		s.Linear = l.lin.state()
	}
	s.Hedge = [2]float64{l.hd.loss[expertGraph], l.hd.loss[expertLinear]}
	s.HedgeRecent = l.hd.loss[expertRecent]
	s.HedgeCodes = l.hd.loss[expertCodes]
	s.Recent = slices.Clone(l.rc.share)
	s.PriorCounts, s.PriorHits = slices.Clone(l.cp.count), l.cp.hits
	s.PendingIDs, s.PendingLabels = l.pending.items()
	s.Confusion = l.sc.conf.dense()
	s.Spread, s.SpreadClasses = slices.Clone(l.sp.f), l.sp.c
	if fork && l.wr.valid {
		s.spreadRows = l.wr.clone()
	}
	return s, nil
}

// Restore replaces l's state with s. l.Model must be configured as the
// model s was taken from, and l's other fields as the original Learner's.
func (l *Learner) Restore(s *LearnerState) error {
	if l.Model == nil {
		return errors.New("stages: learner: no model")
	}
	if s.Online == nil || len(s.PredIDs) != len(s.PredClasses) || len(s.PendingIDs) != len(s.PendingLabels) ||
		(s.PredGraph == nil) != (s.PredLin == nil) || (s.PredGraph != nil && (len(s.PredGraph) != len(s.PredIDs) || len(s.PredLin) != len(s.PredIDs))) ||
		(s.PredRecent != nil && len(s.PredRecent) != len(s.PredIDs)) || (s.PredCodes != nil && len(s.PredCodes) != len(s.PredIDs)) || (s.PredShares != nil && len(s.PredShares) != len(s.PredIDs)) || len(s.Recent) > len(s.Classes) || len(s.PriorCounts) > len(s.Classes) {
		return errors.New("stages: learner: malformed state")
	}
	if err := l.Model.Restore(s.Online); err != nil {
		return err
	}
	l.wr = weightRows{}
	if s.spreadRows != nil {
		l.wr = *s.spreadRows.clone() // valid with the model's kept edits; weighed anew otherwise
	}
	l.Window, l.classOf = Window{}, nil
	l.init()
	l.seq, l.sc.c, l.Featurize.dim = s.Seq, s.Counters, s.Dim
	l.labelSeen = s.Counters.LateLabels > 0 || len(s.PendingIDs) > 0 // lateLabel has run (KnowsLabel)
	l.classes = slices.Clone(s.Classes)
	l.classOf = map[string]int{}
	for c, name := range l.classes {
		l.classOf[name] = c
	}
	for n, nd := range s.Nodes {
		if nd.Class >= len(l.classes) {
			return fmt.Errorf("stages: learner: state: node %d has class %d of %d", n, nd.Class, len(l.classes))
		}
		l.nodes = append(l.nodes, node{live: nd.Live, id: nd.ID, class: nd.Class, seq: nd.Seq, revisits: nd.Revisits})
		if g := l.Model.KNN(); nd.Live && g != nil {
			l.nodes[n].setNorm(g.Norm(n))
		}
		if nd.Live && nd.ID != "" {
			l.byID[nd.ID] = n
		}
	}
	if s.SpreadClasses < 0 || s.SpreadClasses > len(l.classes) || (s.SpreadClasses == 0) != (len(s.Spread) == 0) ||
		(s.SpreadClasses > 0 && len(s.Spread)%s.SpreadClasses != 0) {
		return errors.New("stages: learner: state: malformed label scores")
	}
	l.sp = spreader{f: slices.Clone(s.Spread), c: s.SpreadClasses}
	for i, row := range s.Confusion {
		if len(row) != len(s.Confusion)+1 {
			return fmt.Errorf("stages: learner: state: confusion row %d has %d entries, want %d", i, len(row), len(s.Confusion)+1)
		}
	}
	l.sc.conf.restore(s.Confusion)
	lim := max(l.horizon(), len(s.PredIDs), len(s.PendingIDs))
	for i, id := range s.PredIDs {
		p := pred{Class: s.PredClasses[i], Graph: noPrediction, Lin: noPrediction, Recent: noPrediction, Codes: noPrediction}
		if s.PredGraph != nil {
			p.Graph, p.Lin = s.PredGraph[i], s.PredLin[i]
		}
		if s.PredRecent != nil {
			p.Recent = s.PredRecent[i]
		}
		if s.PredCodes != nil {
			p.Codes = s.PredCodes[i]
		}
		if s.PredShares != nil {
			p.Shares = s.PredShares[i]
		}
		l.preds.put(id, p, lim)
	}
	if err := l.lin.restore(s.Linear); err != nil {
		return err
	}
	l.hd.loss = [experts]float64{expertGraph: s.Hedge[0], expertLinear: s.Hedge[1], expertRecent: s.HedgeRecent, expertCodes: s.HedgeCodes}
	l.rc = recent{share: slices.Clone(s.Recent)}
	l.cp = classPrior{count: slices.Clone(s.PriorCounts), hits: s.PriorHits}
	for i, id := range s.PendingIDs {
		l.pending.put(id, s.PendingLabels[i], lim)
	}
	if s.Vectorizer != nil {
		if l.Featurize.TFIDF == nil {
			l.Featurize.TFIDF = &TFIDF{}
		}
		if err := l.Featurize.TFIDF.UnmarshalBinary(s.Vectorizer); err != nil {
			return fmt.Errorf("stages: learner: state: %w", err)
		}
	}
	return nil
}
