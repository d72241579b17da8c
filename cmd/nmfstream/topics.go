package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/report"
)

func init() {
	register(command{
		name:    "topics",
		summary: "print the top terms of each factor of a model of documents",
		run:     runTopics,
	})
}

const topicsSynopsis = `topics --model M [--top n] [--json]

Prints, for a model fitted on documents (fit with a text column), the n
terms of largest weight in each column of the basis U: what each factor
(topic) is about. The terms are the model's vocabulary (the vectorizer it
keeps). "nmfstream report" on documents lists them too.

Examples:
  nmfstream topics --model brown.model
  nmfstream topics --model brown.model --top 5 --json`

func runTopics(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("topics", topicsSynopsis, stderr)
	path := fs.String("model", "", "fitted model `file` of documents, written by fit --save (required)")
	top := fs.Int("top", 10, "terms per factor (≥ 1)")
	asJSON := fs.Bool("json", false, "print one JSON object per factor: factor, terms, weights")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	case *path == "":
		return fmt.Errorf("%w: --model is required (see nmfstream topics -help)", errUsage)
	case *top < 1:
		return fmt.Errorf("%w: --top %d: pass 1 or more", errUsage, *top)
	}
	if err := checkInput("--model", *path); err != nil {
		return err
	}
	snap, err := loadModel(*path)
	if err != nil {
		return err
	}
	if snap.Form != "text" || snap.U == nil {
		return fmt.Errorf("%s: a model of %s features has no terms: topics needs a model fitted on documents (fit --text-column)", *path, snap.Form)
	}
	sp, err := spaceOf(snap)
	if err != nil {
		return err
	}
	topics, err := topTerms(snap.U, sp.tf.Vocabulary(), *top)
	if err != nil {
		return fmt.Errorf("%s: %w", *path, err)
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

// topTerms returns, for each column of u (D×K, row j the weights of term
// vocab[j]), the top terms of largest positive weight, largest first,
// ties in vocabulary order. A column with fewer positive weights lists
// fewer terms. It is an error if vocab does not name every row of u.
func topTerms(u *mat.Dense, vocab []string, top int) ([]report.Topic, error) {
	d, k := u.Dims()
	if len(vocab) != d {
		return nil, fmt.Errorf("the vocabulary has %d terms for the %d rows of U", len(vocab), d)
	}
	topics := make([]report.Topic, k)
	rows := make([]int, d)
	for c := range k {
		for j := range rows {
			rows[j] = j
		}
		sort.SliceStable(rows, func(a, b int) bool { return u.At(rows[a], c) > u.At(rows[b], c) })
		t := report.Topic{Factor: c + 1}
		for _, j := range rows[:min(top, d)] {
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
