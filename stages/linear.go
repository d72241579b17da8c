package stages

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
)

// Defaults of the linear component of PredictGraph.
const (
	// linearRate is AdaGrad's base step size.
	linearRate = 0.5
	// linearMaxWeights bounds C·D, the weights of the linear model: a
	// stream whose classes times dimension exceed it predicts by the graph
	// alone. 2²² float64 weights and as many accumulators take 64 MiB.
	linearMaxWeights = 1 << 22
	// hedgeDecay is the factor by which each predictor's past mistakes
	// shrink per scored sample: an effective memory of 1/(1−decay) = 100
	// scored samples.
	hedgeDecay = 0.99
	// recentDecay is the factor by which the recent labels' class shares
	// forget per label learned: a memory of about 1/(1−decay) labels.
	recentDecay = 0.8
	// linearRevisits is the number of passes, one per batch, that a label
	// takes part in after the step taken when it is learned. Revisiting
	// only recent labels lets the model follow a drifting stream: passes
	// over every label of the window kept old labels' weight growing and
	// scored up to 12 points lower on a stream in time order (BENCHMARKS.md,
	// "Document streams").
	linearRevisits = 3
)

// linear is an online multinomial logistic regression on the stream's
// feature rows (dense or sparse, each scaled to unit Euclidean norm), fitted
// by stochastic gradient steps with AdaGrad step sizes (Duchi, Hazan and
// Singer, JMLR 12, 2011): one step on each label as it is learned, and
// one pass per batch, in a shuffled order, over the labels learned in the
// last linearRevisits batches. It is the supervised expert of PredictGraph's
// mixture: on documents a linear model of the raw features separates
// classes that the k-NN graph mixes (BENCHMARKS.md).
//
// The zero value is an empty model; it grows its classes as labels arrive.
type linear struct {
	c, d   int
	w, g   []float64 // C×D weights and AdaGrad accumulators, row-major
	b, gb  []float64 // C biases and accumulators
	epochs uint64    // passes run, the seed of the next pass's order
	steps  uint64    // steps taken; no prediction before the first
	off    bool      // C·D above linearMaxWeights: no linear model
	p      []float64 // workspace: class probabilities
}

// fit makes w cover c classes of dimension d, keeping what was learned.
// It reports whether the model is in use.
func (m *linear) fit(c, d int) bool {
	if m.off || d == 0 {
		return false
	}
	if c*d > linearMaxWeights || (m.d != 0 && m.d != d) {
		m.off = true
		m.w, m.g = nil, nil
		return false
	}
	if c > m.c {
		m.w = append(m.w, make([]float64, (c-m.c)*d)...)
		m.g = append(m.g, make([]float64, (c-m.c)*d)...)
		m.b = append(m.b, make([]float64, c-m.c)...)
		m.gb = append(m.gb, make([]float64, c-m.c)...)
		m.c = c
	}
	m.d = d
	return true
}

// norm returns the Euclidean norm of a row's values.
func norm(val []float64) float64 {
	s := 0.0
	for _, v := range val {
		s += v * v
	}
	return math.Sqrt(s)
}

// probs sets m.p to the class probabilities of the row (dense, or ind and
// val) and returns it; nil for a zero row.
func (m *linear) probs(dense []float64, ind []int, val []float64) []float64 {
	if m.c == 0 || m.steps == 0 {
		return nil
	}
	vals := val
	if dense != nil {
		vals = dense
	}
	nr := norm(vals)
	if nr == 0 {
		return nil
	}
	m.p = slices.Grow(m.p[:0], m.c)[:m.c]
	top := math.Inf(-1)
	for c := range m.c {
		w := m.w[c*m.d : (c+1)*m.d]
		s := 0.0
		if dense != nil {
			for j, x := range dense {
				s += w[j] * x
			}
		} else {
			for k, j := range ind {
				s += w[j] * val[k]
			}
		}
		m.p[c] = s/nr + m.b[c]
		top = max(top, m.p[c])
	}
	tot := 0.0
	for c := range m.p {
		m.p[c] = math.Exp(m.p[c] - top)
		tot += m.p[c]
	}
	for c := range m.p {
		m.p[c] /= tot
	}
	return m.p
}

// step takes one AdaGrad step of the log-loss on the row with class y.
func (m *linear) step(dense []float64, ind []int, val []float64, y int) {
	if y >= m.c {
		return
	}
	steps := m.steps
	m.steps = 1 // probs answers from the first step on
	p := m.probs(dense, ind, val)
	m.steps = steps
	if p == nil {
		return
	}
	m.steps++
	vals := val
	if dense != nil {
		vals = dense
	}
	nr := norm(vals)
	for c := range m.c {
		e := p[c]
		if c == y {
			e--
		}
		if e == 0 {
			continue
		}
		w, g := m.w[c*m.d:(c+1)*m.d], m.g[c*m.d:(c+1)*m.d]
		if dense != nil {
			for j, x := range dense {
				if x == 0 {
					continue
				}
				gr := e * x / nr
				g[j] += gr * gr
				if g[j] == 0 {
					continue // gr² underflows (|gr| < 1e-162): no step, and 0/0 below
				}
				w[j] -= linearRate * gr / math.Sqrt(g[j])
			}
		} else {
			for k, j := range ind {
				if val[k] == 0 {
					continue // a stored zero: no gradient, and 0/0 below
				}
				gr := e * val[k] / nr
				g[j] += gr * gr
				if g[j] == 0 {
					continue // as above
				}
				w[j] -= linearRate * gr / math.Sqrt(g[j])
			}
		}
		m.gb[c] += e * e
		if m.gb[c] != 0 {
			m.b[c] -= linearRate * e / math.Sqrt(m.gb[c])
		}
	}
}

// pass runs one step on each of the samples nodes (with classes y), in an
// order drawn from the pass count, row(n) giving node n's features.
func (m *linear) pass(nodes, y []int, row func(n int) ([]float64, []int, []float64)) {
	if len(nodes) == 0 {
		return
	}
	m.epochs++
	rng := rand.New(rand.NewPCG(m.epochs, 0x9e3779b97f4a7c15))
	order := rng.Perm(len(nodes))
	for _, i := range order {
		d, ind, val := row(nodes[i])
		m.step(d, ind, val, y[i])
	}
}

// hedgeRate is the rate η of the hedge's weights exp(−η·mistakes): experts
// some ten mistakes apart over the losses' memory (100 scored samples) are
// averaged, and the mixture moves to an expert that is right where the
// others err within about a hundred scored samples. How it was chosen, and
// against which rates: BENCHMARKS.md, "The hedge's rate".
const hedgeRate = 0.1

// The experts of PredictGraph's mixture, as indices of hedge's arrays.
const (
	expertGraph  = iota // the label spreading over the k-NN graph
	expertLinear        // the linear model of the feature rows
	expertRecent        // the class shares of the last labels learned
	expertCodes         // the class shares of the nearest labeled codes (codeVotes); last: weights leaves it out by slicing
	experts
)

// hedge weighs PredictGraph's experts by their recent mistakes
// (exponential weights, Littlestone and Warmuth's weighted majority with
// decaying losses): a prediction mixes their class probabilities with
// weights proportional to exp(−η·mistakes) (η = hedgeRate), so that the
// mixture leans toward whichever has been more accurate on the stream
// lately by tens of mistakes, and averages experts a few mistakes apart.
type hedge struct {
	loss [experts]float64 // decayed mistakes of each expert
}

// weights returns the mixture's weight of each expert; they sum to one.
// The code-space expert takes part only if codes is set (the mixture has
// its shares), and has weight 0 otherwise.
func (h *hedge) weights(codes bool) [experts]float64 {
	n := experts
	if !codes {
		n = expertCodes
	}
	lo := slices.Min(h.loss[:n])
	var w [experts]float64
	tot := 0.0
	for i, l := range h.loss[:n] {
		w[i] = math.Exp(-hedgeRate * (l - lo))
		tot += w[i]
	}
	for i := range w {
		w[i] /= tot
	}
	return w
}

// score counts a scored sample's expert predictions (classes, indexed by
// expert; −1: the expert made none, a mistake) against its class.
func (h *hedge) score(pred [experts]int, truth int) {
	for i, p := range pred {
		h.loss[i] *= hedgeDecay
		if p != truth {
			h.loss[i]++
		}
	}
}

// recent is PredictGraph's no-change expert: the class shares of the last
// labels learned, each label's weight shrinking by recentDecay per later
// label. A stream whose labels come in runs (the posts of one thread, a
// burst of spam, the passages of one speech) is predicted well by its last
// labels while a run lasts; the hedge gives this expert weight only while
// it is right, and a stream without runs costs it nothing.
type recent struct {
	share []float64 // by class; sums to one once a label is learned
}

// learn adds a label of class c, of c classes or more.
func (r *recent) learn(c int) {
	for len(r.share) <= c {
		r.share = append(r.share, 0)
	}
	for i := range r.share {
		r.share[i] *= recentDecay
	}
	r.share[c] += 1 - recentDecay
}

// probs returns the class shares over nc classes in p (grown as needed),
// renormalized, or nil before the first label.
func (r *recent) probs(p []float64, nc int) []float64 {
	tot := 0.0
	for _, x := range r.share {
		tot += x
	}
	if tot == 0 {
		return nil
	}
	p = slices.Grow(p[:0], nc)[:nc]
	clear(p)
	for c, x := range r.share[:min(nc, len(r.share))] {
		p[c] = x / tot
	}
	return p
}

// linear reports whether PredictGraph's linear component is in use, making
// its model cover the classes seen so far. It is used on sparse rows
// (documents): on the dense image streams (digits, MNIST) the spreading
// alone scored higher from the first label on, the mixture costing up to
// half a point early in the stream (BENCHMARKS.md).
func (l *Learner) linear() bool {
	if l.Predictor != PredictGraph || !l.Model.Sparse() {
		return false
	}
	if l.Codes == CodesOnly {
		if !l.Model.Started() {
			return false
		}
		lo, hi := l.Model.ClassCols()
		return l.lin.fit(len(l.classes), hi-lo)
	}
	return l.lin.fit(len(l.classes), l.Featurize.dim)
}

// linRow is the row the linear model reads for node n: its feature row, or
// with CodesOnly its code.
func (l *Learner) linRow(n int) (dense []float64, ind []int, val []float64) {
	if l.Codes == CodesOnly {
		return l.classCodes(l.Model.Codes()).RawRowView(n), nil, nil
	}
	return l.Model.Row(n)
}

// linearPass runs one pass of the linear model over the labeled samples of
// the window that have revisits left, and counts it against them.
func (l *Learner) linearPass() {
	if !l.linear() {
		return
	}
	var nodes, y []int
	for n, nd := range l.nodes {
		if nd.live && nd.class >= 0 && nd.revisits > 0 {
			l.nodes[n].revisits--
			nodes = append(nodes, n)
			y = append(y, nd.class)
		}
	}
	l.lin.pass(nodes, y, l.linRow)
}

// LinearState is the plain-data state of PredictGraph's linear model.
type LinearState struct {
	Classes, Dim int
	W, G         []float64 // Classes×Dim weights and AdaGrad accumulators
	B, GB        []float64 // Classes biases and accumulators
	Passes       uint64
	Steps        uint64
	Off          bool // the model does not fit in linearMaxWeights
}

func (m *linear) state() *LinearState {
	return &LinearState{Classes: m.c, Dim: m.d, W: slices.Clone(m.w), G: slices.Clone(m.g),
		B: slices.Clone(m.b), GB: slices.Clone(m.gb), Passes: m.epochs, Steps: m.steps, Off: m.off}
}

func (m *linear) restore(s *LinearState) error {
	if s == nil {
		*m = linear{}
		return nil
	}
	n := s.Classes * s.Dim
	if s.Classes < 0 || s.Dim < 0 || len(s.W) != n || len(s.G) != n || len(s.B) != s.Classes || len(s.GB) != s.Classes {
		return errors.New("stages: learner: state: malformed linear model")
	}
	*m = linear{c: s.Classes, d: s.Dim, w: slices.Clone(s.W), g: slices.Clone(s.G),
		b: slices.Clone(s.B), gb: slices.Clone(s.GB), epochs: s.Passes, steps: s.Steps, off: s.Off}
	return nil
}
