package main

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/bench/internal/benchrun"
	"github.com/nmfstream/nmfstream/model/metrics"
)

// runSplit writes a held-out split of a corpus for nmfstream eval: a
// training file with some of its labels and a test file with all of them.
// For a text corpus, a fraction of the training documents is labeled (or,
// with --per-class, that many of each class, fewer where a class has
// fewer: balanced by design, as issue 26's skewed protocol is,
// BENCHMARKS.md, "Skewed text"; --versus makes the corpus two classes
// first), and passages cut from one text (an address, a Brown text, a
// chapter of the Bible) go to the same side, so the test texts are never
// seen in training. For an image set (digits, mnist:N, fashion:N, csv:FILE) the split is
// docs/DESIGN.md §7's (metrics.Split): a stratified third held out and
// --per-class labels per class in the training pool.
func runSplit(args []string) error {
	fs := flag.NewFlagSet("split", flag.ExitOnError)
	data := fs.String("data", "", "a text corpus, as make --data (spam:DIR, sotu:DIR, brown:DIR, kjv:DIR, tsv:FILE), or an image set (digits, mnist:N, fashion:N, csv:FILE)")
	mnist := fs.String("mnist", benchrun.DataDir("mnist"), "folder of the MNIST IDX files")
	fashion := fs.String("fashion", benchrun.DataDir("fashion"), "folder of Fashion-MNIST's class files")
	perClass := fs.Int("per-class", 10, "labeled training samples per class (text corpora: instead of --frac when given)")
	rare := fs.String("rare", "", "CLASS:SHARE, as make --rare")
	versus := fs.String("versus", "", "text corpora: two classes, CLASS against all the others (named rest), before --rare")
	nTrain := fs.Int("train-n", 2000, "training documents (at most; 0: all)")
	nTest := fs.Int("test-n", 1000, "test documents (at most; 0: all)")
	testFrac := fs.Float64("test-frac", 1.0/3, "fraction of the texts (or documents) held out for the test")
	frac := fs.Float64("frac", 0.1, "text corpora: fraction of the training documents labeled")
	seed := fs.Uint64("seed", 1, "seed of the split, the samples and the labels")
	train := fs.String("train", "", "output training file (Arrow IPC; required)")
	test := fs.String("test", "", "output test file (Arrow IPC; required)")
	fs.Parse(args)
	if *train == "" || *test == "" {
		return errors.New("split: --train and --test are required")
	}
	f := splitFlags{data: *data, perClass: *perClass, rare: *rare, versus: *versus, nTrain: *nTrain, nTest: *nTest,
		testFrac: *testFrac, frac: *frac, set: map[string]bool{}}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	if err := checkSplit(f); err != nil {
		return err
	}
	docs, ok, err := loadText(*data)
	if err != nil {
		return err
	}
	if !ok {
		x, y, err := load(*data, *mnist, *fashion)
		if err != nil {
			return fmt.Errorf("split: %w", err)
		}
		return splitImages(x, y, *testFrac, *perClass, *seed, *train, *test)
	}
	return splitText(docs, f, *seed, *train, *test)
}

// splitText writes the split of the text corpus docs that f asks for (its
// flags checked by checkSplit) to train and test, drawn with seed.
func splitText(docs []doc, f splitFlags, seed uint64, train, test string) error {
	var err error
	if f.versus != "" {
		if docs, err = versusRest(docs, f.versus); err != nil {
			return fmt.Errorf("split: %w", err)
		}
	}
	if f.rare != "" {
		if docs, err = thin(docs, f.rare, seed); err != nil {
			return err
		}
	}
	rng := rand.New(rand.NewPCG(seed, 11))
	tr, te := holdOut(docs, f.testFrac, rng)
	if f.nTrain > 0 && len(tr) > f.nTrain {
		tr = tr[:f.nTrain]
	}
	if f.nTest > 0 && len(te) > f.nTest {
		te = te[:f.nTest]
	}
	labeled := map[int]bool{}
	if f.set["per-class"] {
		taken := map[string]int{}
		for _, p := range rng.Perm(len(tr)) {
			if c := docs[tr[p]].class; taken[c] < f.perClass {
				taken[c]++
				labeled[tr[p]] = true
			}
		}
	} else {
		k := labeledCount(f.frac, len(tr))
		if k == 0 {
			return fmt.Errorf("split: --frac %v labels none of the %d training documents", f.frac, len(tr))
		}
		for _, p := range rng.Perm(len(tr))[:k] {
			labeled[tr[p]] = true
		}
	}
	if err := writeDocs(train, docs, tr, labeled); err != nil {
		return err
	}
	all := map[int]bool{}
	for _, i := range te {
		all[i] = true
	}
	return writeDocs(test, docs, te, all)
}

// versusRest returns docs with every class but class renamed rest (two
// classes: class against all the others), or an error if no document is of
// class or class is rest.
func versusRest(docs []doc, class string) ([]doc, error) {
	if class == "rest" {
		return nil, errors.New("--versus rest: the others are named rest; name another class")
	}
	out := make([]doc, len(docs))
	in := 0
	for i, d := range docs {
		if d.class == class {
			in++
		} else {
			d.class = "rest"
		}
		out[i] = d
	}
	if in == 0 {
		return nil, fmt.Errorf("--versus: no document of class %q", class)
	}
	return out, nil
}

// holdOut holds out a fraction testFrac of the texts of docs (the groups,
// or the documents one by one where they have none), drawn with rng, and
// returns the documents of the others (tr) and of the held out (te), in a
// random order.
func holdOut(docs []doc, testFrac float64, rng *rand.Rand) (tr, te []int) {
	groupOf := func(i int) string {
		if g := docs[i].group; g != "" {
			return g
		}
		return "doc" + strconv.Itoa(i)
	}
	// The groups, in order of first appearance, held out at random.
	held := map[string]bool{}
	var groups []string
	for i := range docs {
		g := groupOf(i)
		if _, seen := held[g]; !seen {
			held[g] = false
			groups = append(groups, g)
		}
	}
	for _, p := range rng.Perm(len(groups))[:labeledCount(testFrac, len(groups))] {
		held[groups[p]] = true
	}
	for _, i := range rng.Perm(len(docs)) {
		if held[groupOf(i)] {
			te = append(te, i)
		} else {
			tr = append(tr, i)
		}
	}
	return tr, te
}

// writeDocs writes docs[idx] as an Arrow IPC file (columns text, label,
// id), with the labels of the documents in labeled only.
func writeDocs(out string, docs []doc, idx []int, labeled map[int]bool) error {
	tb, lb, ib, b := newTextBuilder()
	defer b.Release()
	for _, i := range idx {
		tb.Append(docs[i].text)
		if labeled[i] {
			lb.Append(docs[i].class)
		} else {
			lb.AppendNull()
		}
		ib.Append(int64(i))
	}
	return writeArrow(out, b.Schema(), memory.DefaultAllocator, b)
}

// splitImages writes the split metrics.Split draws of the images x (one per
// row, classes y) with seed: the training pool, with the labels of its
// perClass labeled samples a class, to train, and the held-out third, with
// every label, to test (columns x, label, id as make writes them; id is the
// row of x).
func splitImages(x *mat.Dense, y []int, testFrac float64, perClass int, seed uint64, train, test string) error {
	sp, err := metrics.Split(y, testFrac, perClass, rand.NewPCG(seed, seed))
	if err != nil {
		return fmt.Errorf("split: %w", err)
	}
	labeled := map[int]bool{}
	for _, i := range sp.Labeled {
		labeled[i] = true
	}
	if err := writeImages(train, x, y, sp.Train, labeled); err != nil {
		return err
	}
	all := map[int]bool{}
	for _, i := range sp.Test {
		all[i] = true
	}
	return writeImages(test, x, y, sp.Test, all)
}

// writeImages writes the rows idx of x as an Arrow IPC file (columns x,
// label, id), with the labels y of the rows in labeled only.
func writeImages(out string, x *mat.Dense, y []int, idx []int, labeled map[int]bool) error {
	_, d := x.Dims()
	w := newImageWriter(d)
	defer w.b.Release()
	for _, i := range idx {
		c := -1
		if labeled[i] {
			c = y[i]
		}
		w.sample(x.RawRowView(i), i, c)
	}
	return writeArrow(out, w.schema, w.mem, w.b)
}
