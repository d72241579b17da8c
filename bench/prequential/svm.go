package main

import (
	"math"
	"math/rand/v2"
)

// Defaults of the svm peer.
const (
	// svmC is the cost C of the linear SVM, scikit-learn's LinearSVC
	// default, which BENCHMARKS.md's held-out tables use.
	svmC = 1.0
	// svmTol stops dual coordinate descent when no dual variable's
	// projected gradient exceeds it in an epoch: liblinear's ε of 0.1.
	// scikit-learn passes 1e-4; at 1e-3 the peer's accuracy, balanced
	// accuracy and macro-F1 on spam7, brown7, kjv and sotub moved by at
	// most 0.002.
	svmTol = 0.1
	// svmMaxEpochs bounds the epochs of one fit.
	svmMaxEpochs = 100
	// svmRefit: the model is fitted again after every svmRefit new labels
	// or when the labels have grown by a tenth, whichever comes first, so
	// that a stream's first predictions see their first labels.
	svmRefit = 20
)

// svm is a linear SVM peer: scikit-learn's LinearSVC (one-vs-rest, squared
// hinge loss, C = 1, a bias feature of 1; its tolerance aside, svmTol)
// refitted on the labeled samples
// seen so far as they grow, each fit warm-started from the last one's dual
// variables. Rows are the knn peer's (the stream's own vectorizer,
// l2-normalized TF-IDF). It is the "linear SVM on the same labels" of
// issue 26's check on skewed text, in the prequential protocol: a sample
// is predicted by the model fitted before it arrived.
//
// The fit is the dual coordinate descent of Hsieh, Chang, Lin, Keerthi and
// Sundararajan ("A dual coordinate descent method for large-scale linear
// SVM", ICML 2008), liblinear's solver for LinearSVC's default: for each
// class, α_i ≥ 0 per labeled row, D = 1/(2C), and w = Σ α_i y_i x_i.
type svm struct {
	vec     *knn           // vectorizer and the rows until their labels arrive
	x       [][]entry      // labeled rows, in label order
	y       []int          // their classes
	classes []string       // class index → name
	index   map[string]int // class name → index
	alpha   [][]float64    // class → dual variable per labeled row
	w       [][]float64    // class → weights by column, the bias last
	dim     int            // columns of the labeled rows
	fitted  int            // labeled rows at the last fit
	epochs  uint64         // fits run, the seed of the next fit's orders
}

func newSVM() *svm { return &svm{vec: newKNN(), index: map[string]int{}} }

func (m *svm) predict(s sample) (string, float64, bool) {
	text := s.text
	m.vec.vectorize(text)
	if len(m.w) == 0 {
		return "", 0, false
	}
	best, bs := -1, math.Inf(-1)
	for c, w := range m.w {
		if s := decision(w, m.vec.cur); s > bs {
			best, bs = c, s
		}
	}
	return m.classes[best], bs, true
}

func (m *svm) add(id string, _ sample) { m.vec.rows[id] = m.vec.cur }

func (m *svm) learn(id, class string) {
	r, ok := m.vec.rows[id]
	if !ok {
		return
	}
	delete(m.vec.rows, id)
	c, ok := m.index[class]
	if !ok {
		c = len(m.classes)
		m.index[class] = c
		m.classes = append(m.classes, class)
	}
	m.x = append(m.x, r)
	m.y = append(m.y, c)
	for _, e := range r {
		m.dim = max(m.dim, int(e.j)+1)
	}
	n := len(m.x)
	if n-m.fitted >= min(svmRefit, max(1, m.fitted/10)) {
		m.fit()
	}
}

// fit runs dual coordinate descent for every class, one against the rest,
// warm-started from the dual variables of the last fit (new rows at 0).
func (m *svm) fit() {
	n := len(m.x)
	m.fitted = n
	m.epochs++
	d := 1 / (2 * svmC)
	q := make([]float64, n) // ‖x_i‖² + 1 (the bias feature) + D
	for i, r := range m.x {
		s := 1.0
		for _, e := range r {
			s += e.v * e.v
		}
		q[i] = s + d
	}
	for len(m.alpha) < len(m.classes) {
		m.alpha = append(m.alpha, nil)
		m.w = append(m.w, nil)
	}
	for c := range m.classes {
		a := m.alpha[c]
		a = append(a, make([]float64, n-len(a))...)
		m.alpha[c] = a
		w := append(m.w[c][:0], make([]float64, m.dim+1)...)
		m.w[c] = w
		for i, r := range m.x { // w = Σ α_i y_i x_i (and the bias)
			if a[i] != 0 {
				addRow(w, a[i]*sign(m.y[i] == c), r)
			}
		}
		rng := rand.New(rand.NewPCG(m.epochs, uint64(c)))
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		for range svmMaxEpochs {
			rng.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
			worst := 0.0
			for _, i := range order {
				yi := sign(m.y[i] == c)
				g := yi*decision(w, m.x[i]) - 1 + d*a[i]
				pg := g
				if a[i] == 0 {
					pg = min(g, 0)
				}
				worst = max(worst, math.Abs(pg))
				if pg == 0 {
					continue
				}
				na := max(a[i]-g/q[i], 0)
				if da := (na - a[i]) * yi; da != 0 {
					addRow(w, da, m.x[i])
				}
				a[i] = na
			}
			if worst <= svmTol {
				break
			}
		}
	}
}

// decision returns w·x plus the bias, w's last entry (w holds the columns of
// the last fit and the bias; x's columns past them weigh nothing).
func decision(w []float64, x []entry) float64 {
	b := len(w) - 1
	s := w[b]
	for _, e := range x {
		if int(e.j) < b {
			s += w[e.j] * e.v
		}
	}
	return s
}

// addRow adds a·(x, 1) to w, the bias last; x's columns are within w's.
func addRow(w []float64, a float64, x []entry) {
	w[len(w)-1] += a
	for _, e := range x {
		w[e.j] += a * e.v
	}
}

// sign returns +1 for the class's own rows, −1 for the rest.
func sign(own bool) float64 {
	if own {
		return 1
	}
	return -1
}
