package main

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/apache/arrow/go/v15/arrow/memory"
)

// runSplit writes a held-out split of a text corpus for nmfstream eval: a
// training file with a fraction of its labels and a test file with all of
// them. Passages cut from one text (an address, a Brown text, a chapter
// of the Bible) go to the same side, so the test texts are never seen in training.
func runSplit(args []string) error {
	fs := flag.NewFlagSet("split", flag.ExitOnError)
	data := fs.String("data", "", "a text corpus, as make --data (spam:DIR, sotu:DIR, brown:DIR, kjv:DIR)")
	rare := fs.String("rare", "", "CLASS:SHARE, as make --rare")
	nTrain := fs.Int("train-n", 2000, "training documents (at most; 0: all)")
	nTest := fs.Int("test-n", 1000, "test documents (at most; 0: all)")
	testFrac := fs.Float64("test-frac", 1.0/3, "fraction of the texts (or documents) held out for the test")
	frac := fs.Float64("frac", 0.1, "fraction of the training documents labeled")
	seed := fs.Uint64("seed", 1, "seed of the split, the samples and the labels")
	train := fs.String("train", "", "output training file (Arrow IPC; required)")
	test := fs.String("test", "", "output test file (Arrow IPC; required)")
	fs.Parse(args)
	if *train == "" || *test == "" {
		return errors.New("split: --train and --test are required")
	}
	docs, ok, err := loadText(*data)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("split: --data %q: not a text corpus", *data)
	}
	if *rare != "" {
		if docs, err = thin(docs, *rare, *seed); err != nil {
			return err
		}
	}
	rng := rand.New(rand.NewPCG(*seed, 11))
	// The groups, in order of first appearance, held out at random.
	held := map[string]bool{}
	var groups []string
	for i, d := range docs {
		g := d.group
		if g == "" {
			g = "doc" + strconv.Itoa(i)
		}
		if _, seen := held[g]; !seen {
			held[g] = false
			groups = append(groups, g)
		}
	}
	for _, p := range rng.Perm(len(groups))[:int(*testFrac*float64(len(groups))+0.5)] {
		held[groups[p]] = true
	}
	var tr, te []int
	for _, i := range rng.Perm(len(docs)) {
		g := docs[i].group
		if g == "" {
			g = "doc" + strconv.Itoa(i)
		}
		if held[g] {
			te = append(te, i)
		} else {
			tr = append(tr, i)
		}
	}
	if *nTrain > 0 && len(tr) > *nTrain {
		tr = tr[:*nTrain]
	}
	if *nTest > 0 && len(te) > *nTest {
		te = te[:*nTest]
	}
	labeled := map[int]bool{}
	for _, p := range rng.Perm(len(tr))[:int(*frac*float64(len(tr))+0.5)] {
		labeled[tr[p]] = true
	}
	if err := writeDocs(*train, docs, tr, labeled); err != nil {
		return err
	}
	all := map[int]bool{}
	for _, i := range te {
		all[i] = true
	}
	return writeDocs(*test, docs, te, all)
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
