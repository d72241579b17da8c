// Command skewedsplit writes a held-out text split as nmfstream's own TF-IDF
// rows in svmlight format, so that a peer (bench/skewedsplit/ref.py, scikit-learn's
// LinearSVC) is scored on the same features and the same labeled subset as
// `nmfstream eval`. Usage:
//
//	skewedsplit --train TR.arrow --test TE.arrow --out DIR
//
// It writes DIR/labeled.svm (the labeled training documents), DIR/test.svm
// (every test document) and DIR/classes.txt (class names, line i is class
// i). The vectorizer is stages.DefaultDocumentTFIDF fitted on every
// training document, labeled or not, as eval fits it; documents with no term
// of the vocabulary are left out, as eval rejects them.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/sources"
	"github.com/nmfstream/nmfstream/stages"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "skewedsplit:", err)
		os.Exit(1)
	}
}

// docs are the text samples of one file with their labels.
type docs struct {
	text    []string
	labels  []string
	labeled []bool
}

func read(path string) (*docs, error) {
	var o sources.Opener
	src, err := o.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer src.Close()
	form, err := src.Form()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if form != record.FormText {
		return nil, fmt.Errorf("%s: not a text file (no text column)", path)
	}
	d := &docs{}
	for src.Next() {
		b := src.Batch()
		d.text = append(d.text, b.Text...)
		d.labels = append(d.labels, b.Labels...)
		d.labeled = append(d.labeled, b.Labeled...)
	}
	if err := src.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(d.text) == 0 {
		return nil, fmt.Errorf("%s: no documents", path)
	}
	return d, nil
}

func run(args []string) error {
	fs := flag.NewFlagSet("skewedsplit", flag.ExitOnError)
	train := fs.String("train", "", "training file (Arrow IPC, a text column, some labels)")
	test := fs.String("test", "", "test file (Arrow IPC, a text column, every label)")
	out := fs.String("out", "", "output directory")
	fs.Parse(args)
	if *train == "" || *test == "" || *out == "" {
		return errors.New("--train, --test and --out are required")
	}
	tr, err := read(*train)
	if err != nil {
		return err
	}
	te, err := read(*test)
	if err != nil {
		return err
	}
	tf := stages.DefaultDocumentTFIDF()
	if err := tf.Fit(tr.text); err != nil {
		return fmt.Errorf("%s: tf-idf: %w", *train, err)
	}
	xtr, err := tf.Transform(tr.text)
	if err != nil {
		return err
	}
	xte, err := tf.Transform(te.text)
	if err != nil {
		return err
	}
	class := map[string]int{}
	for i, l := range tr.labels {
		if tr.labeled[i] {
			class[l] = 0
		}
	}
	for _, l := range te.labels {
		class[l] = 0
	}
	names := make([]string, 0, len(class))
	for c := range class {
		names = append(names, c)
	}
	sort.Strings(names)
	for i, c := range names {
		class[c] = i
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	keepTr := func(i int) bool { return tr.labeled[i] }
	if err := writeSVM(filepath.Join(*out, "labeled.svm"), xtr, tr.labels, class, keepTr); err != nil {
		return err
	}
	if err := writeSVM(filepath.Join(*out, "test.svm"), xte, te.labels, class, func(int) bool { return true }); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(*out, "classes.txt"))
	if err != nil {
		return err
	}
	for _, c := range names {
		fmt.Fprintln(f, c)
	}
	return f.Close()
}

// writeSVM writes the rows i with keep(i) and at least one term as
// "class col:val ..." lines, columns from 1.
func writeSVM(path string, x *sparse.CSR, labels []string, class map[string]int, keep func(int) bool) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for i := range labels {
		lo, hi := x.Indptr[i], x.Indptr[i+1]
		if !keep(i) || lo == hi {
			continue
		}
		fmt.Fprintf(w, "%d", class[labels[i]])
		for k := lo; k < hi; k++ {
			fmt.Fprintf(w, " %d:%.9g", x.Ind[k]+1, x.Val[k])
		}
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
