package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestPeers runs the peers on a small stream of two topics whose documents
// share their topic's words: each peer writes one line per sample, no
// prediction before the first label arrives, and (knn, nb and svm) predicts the
// documents of the second half right (once both topics have labels).
func TestPeers(t *testing.T) {
	var docs []doc
	for i := range 400 {
		if i%2 == 0 {
			docs = append(docs, doc{text: fmt.Sprintf("goal striker match league keeper %d", i), class: "sport"})
		} else {
			docs = append(docs, doc{text: fmt.Sprintf("ballot senate election vote campaign %d", i), class: "politics"})
		}
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "s.arrow")
	if err := makeText(docs, 1, 0, 0.1, 20, 1, "", 0, in); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"knn", "nb", "svm", "last"} {
		out := filepath.Join(dir, m+".jsonl")
		if err := runPeer([]string{"--in", in, "--out", out, "--method", m}); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		f, err := os.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		lines, nulls, right, scored := 0, 0, 0, 0 // scored: in the second half
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var r struct {
				ID   string  `json:"id"`
				Pred *string `json:"pred"`
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			lines++
			if r.Pred == nil {
				nulls++
				continue
			}
			var id int
			fmt.Sscan(r.ID, &id)
			if lines <= len(docs)/2 {
				continue
			}
			scored++
			if *r.Pred == docs[id].class {
				right++
			}
		}
		f.Close()
		if lines != len(docs) {
			t.Errorf("%s: %d lines, want %d", m, lines, len(docs))
		}
		// The first label comes 20 samples after its sample.
		if nulls < 20 || nulls == len(docs) {
			t.Errorf("%s: %d samples without a prediction, want the first 20 or more and not all", m, nulls)
		}
		if m != "last" && right != scored {
			t.Errorf("%s: %d of %d right, want all", m, right, scored)
		}
	}
}

// TestSVMOptimality checks the svm peer's fit against the optimality
// conditions of its dual (Hsieh et al. 2008): for each class, w is
// Σ α_i y_i x_i (the bias feature included), and each α_i ≥ 0 has a
// projected gradient of at most the solver's tolerance, y_i·f(x_i) − 1 +
// α_i/(2C) = 0 where α_i > 0 and ≥ 0 where α_i = 0. Three classes of
// overlapping rows, refitted as they grow, as the stream does.
func TestSVMOptimality(t *testing.T) {
	m := newSVM()
	rng := rand.New(rand.NewPCG(5, 5))
	for i := range 300 {
		c := i % 3
		var r []entry
		for j := range 12 {
			v := rng.Float64()
			if j/4 == c {
				v += 0.6 // each class leans on four columns of its own
			}
			r = append(r, entry{int32(j), v})
		}
		id := fmt.Sprint(i)
		m.vec.rows[id] = r
		m.learn(id, fmt.Sprint("class", c))
	}
	m.fit()
	d := 1 / (2 * svmC)
	for c := range m.classes {
		w, a := m.w[c], m.alpha[c]
		want := make([]float64, len(w))
		for i, r := range m.x {
			y := sign(m.y[i] == c)
			want[len(w)-1] += a[i] * y
			for _, e := range r {
				want[e.j] += a[i] * y * e.v
			}
		}
		for j := range w {
			if math.Abs(w[j]-want[j]) > 1e-9 {
				t.Fatalf("class %d: w[%d] = %v, Σ α y x = %v", c, j, w[j], want[j])
			}
		}
		worst, support := 0.0, 0
		for i, r := range m.x {
			if a[i] < 0 {
				t.Fatalf("class %d: α[%d] = %v < 0", c, i, a[i])
			}
			g := sign(m.y[i] == c)*decision(w, r) - 1 + d*a[i]
			if a[i] == 0 {
				g = min(g, 0)
			} else {
				support++
			}
			worst = max(worst, math.Abs(g))
		}
		if worst > 2*svmTol || support == 0 {
			t.Errorf("class %d: largest projected gradient %.3g (want ≤ %g), %d support rows", c, worst, 2*svmTol, support)
		}
	}
}
