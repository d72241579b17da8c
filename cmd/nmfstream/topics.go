package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/report"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/stages"
)

func init() {
	register(command{
		name:    "topics",
		summary: "print the top terms of each factor of a model of documents",
		run:     runTopics,
	})
}

const topicsSynopsis = `topics --model M | --checkpoint C --in F [--top n] [--json] [CSV flags]

Prints, for a model of documents, the n terms of largest weight in each
column of the basis U: what each factor (topic) is about.

With --model M (fit on documents, with a text column), the terms are the
model's vocabulary, which it keeps. "nmfstream report" on documents lists
them too.

With --checkpoint C, the state "nmfstream stream --checkpoint C" saved
for a stream of documents, the stream's features are hashed terms
(feature hashing keeps no vocabulary): the terms are found again in the
stream's input F, each column named by the most frequent term of F that
hashes to it (stop words left out).

Examples:
  nmfstream topics --model brown.model
  nmfstream topics --model brown.model --top 5 --json
  nmfstream topics --checkpoint run.ckpt --in mails.csv --text-column body`

func runTopics(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("topics", topicsSynopsis, stderr)
	path := fs.String("model", "", "fitted model `file` of documents, written by fit --save")
	ckpt := fs.String("checkpoint", "", "checkpoint `file` of a stream of documents (with --in)")
	in := fs.String("in", "", "the stream's input `file`, for --checkpoint")
	var csvf csvFlags
	addCSVFlags(fs, &csvf)
	top := fs.Int("top", 10, "terms per factor (≥ 1)")
	asJSON := fs.Bool("json", false, "print one JSON object per factor: factor, terms, weights")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	case (*path == "") == (*ckpt == ""):
		return fmt.Errorf("%w: give --model M or --checkpoint C with --in F (see nmfstream topics -help)", errUsage)
	case (*ckpt == "") != (*in == ""):
		return fmt.Errorf("%w: --checkpoint and --in go together: the terms of a stream are found in its input", errUsage)
	case *top < 1:
		return fmt.Errorf("%w: --top %d: pass 1 or more", errUsage, *top)
	}
	if err := checkStart(checkInput("--model", *path), checkInput("--checkpoint", *ckpt), checkInput("--in", *in)); err != nil {
		return err
	}
	var topics []report.Topic
	var err error
	if *path != "" {
		topics, err = modelTopics(*path, *top)
	} else {
		topics, err = streamTopics(ctx, *ckpt, *in, csvf, *top)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		for _, t := range topics {
			if err := enc.Encode(t); err != nil {
				return err
			}
		}
		return nil
	}
	for _, t := range topics {
		fmt.Fprintf(stdout, "factor %2d: %s\n", t.Factor, strings.Join(t.Terms, ", "))
	}
	return nil
}

// modelTopics returns the top terms of each factor of a fitted model of
// documents.
func modelTopics(path string, top int) ([]report.Topic, error) {
	snap, err := loadModel(path)
	if err != nil {
		return nil, err
	}
	if snap.Form != "text" || snap.U == nil {
		return nil, fmt.Errorf("%s: a model of %s features has no terms: topics needs a model fitted on documents (fit --text-column)", path, snap.Form)
	}
	sp, err := spaceOf(snap)
	if err != nil {
		return nil, err
	}
	topics, err := topTerms(snap.U, sp.tf.Vocabulary(), top)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return topics, nil
}

// streamTopics returns the top terms of each factor of a stream's
// checkpoint, its hashed columns named by the terms of the stream's input
// (hashedTerms); columns no term of the input hashes to are left out.
func streamTopics(ctx context.Context, ckptPath, inPath string, csvf csvFlags, top int) ([]report.Topic, error) {
	cp, err := loadCheckpoint(ckptPath)
	if err != nil {
		return nil, err
	}
	l, err := cp.restore()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ckptPath, err)
	}
	tf := l.Featurize.TFIDF
	if tf == nil || !l.Model.Started() {
		return nil, fmt.Errorf("%s: not the checkpoint of a stream of documents that has learned (no text vectorizer or no basis yet)", ckptPath)
	}
	in, err := readInput(ctx, inPath, csvf.opener(os.Stdin), nil)
	if err != nil {
		return nil, err
	}
	if in.form != record.FormText {
		return nil, fmt.Errorf("%s: no documents (a CSV needs --text-column, or a column named text)", inPath)
	}
	u := l.Model.Basis()
	d, _ := u.Dims()
	vocab, err := hashedTerms(tf, in.text, d)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", inPath, err)
	}
	return topTerms(u, vocab, top)
}

// termPattern is the vectorizer's token: two or more word characters
// (scikit-learn's default token_pattern).
var termPattern = regexp.MustCompile(`\w\w+`)

// hashedTerms names the d columns of a hashing vectorizer by the terms of
// docs: column j gets the most frequent term (ties: the first seen) that
// tf maps to j alone, "" where none does. Stop words are left out, and so
// are terms tf maps to no column or to several. tf is only read.
func hashedTerms(tf *stages.TFIDF, docs []string, d int) ([]string, error) {
	stop := map[string]bool{}
	for _, w := range tf.StopWords {
		stop[w] = true
	}
	count := map[string]int{}
	var terms []string
	for _, doc := range docs {
		for _, t := range termPattern.FindAllString(strings.ToLower(doc), -1) {
			if stop[t] {
				continue
			}
			if count[t] == 0 {
				terms = append(terms, t)
			}
			count[t]++
		}
	}
	if len(terms) == 0 {
		return nil, fmt.Errorf("no term in the documents")
	}
	x, err := tf.Transform(terms)
	if err != nil {
		return nil, err
	}
	vocab := make([]string, d)
	best := make([]int, d)
	for i, t := range terms {
		ind, _ := x.Row(i)
		if len(ind) != 1 || ind[0] >= d {
			continue
		}
		if j := ind[0]; count[t] > best[j] {
			vocab[j], best[j] = t, count[t]
		}
	}
	return vocab, nil
}

// topTerms returns, for each column of u (D×K, row j the weights of term
// vocab[j]), the top terms of largest positive weight, largest first,
// ties in vocabulary order; rows whose term is "" are skipped. A column with fewer positive weights lists
// fewer terms. It is an error if vocab does not name every row of u.
func topTerms(u *mat.Dense, vocab []string, top int) ([]report.Topic, error) {
	d, k := u.Dims()
	if len(vocab) != d {
		return nil, fmt.Errorf("the vocabulary has %d terms for the %d rows of U", len(vocab), d)
	}
	var named []int // the rows with a term
	for j, t := range vocab {
		if t != "" {
			named = append(named, j)
		}
	}
	topics := make([]report.Topic, k)
	rows := make([]int, len(named))
	for c := range k {
		copy(rows, named)
		sort.SliceStable(rows, func(a, b int) bool { return u.At(rows[a], c) > u.At(rows[b], c) })
		t := report.Topic{Factor: c + 1}
		for _, j := range rows[:min(top, len(rows))] {
			w := u.At(j, c)
			if w <= 0 {
				break
			}
			t.Terms = append(t.Terms, vocab[j])
			t.Weights = append(t.Weights, report.Num(w))
		}
		topics[c] = t
	}
	return topics, nil
}
