package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/metrics"
	"github.com/nmfstream/nmfstream/sinks"
)

func init() {
	register(command{
		name:    "classify",
		summary: "predict the class of the records of a file with a saved model",
		run:     runClassify,
	})
}

const classifySynopsis = `classify --model M --in F --out F.arrow [--projector P] [--rejects R]

Codes every record of F on the saved model M (as "nmfstream project" does)
and predicts its class: the label of the nearest labeled training record in
code space (1-NN). Writes one row per usable record, in input order, to
F.arrow: id, code, pred (the label, as text) and score, the share of the 5
nearest labeled training codes that carry the predicted label (in (0, 1]).
An output ending in .jsonl writes JSON lines instead.
If F has labels, the accuracy on them is printed.

Examples:
  nmfstream classify --model digits.model --in test.arrow --out pred.arrow
  nmfstream classify --model docs.model --in new.parquet --out pred.arrow --rejects bad.jsonl`

func runClassify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("classify", classifySynopsis, stderr)
	f := bindCodeFlags(fs)
	snap, proj, err := f.load(fs, "classify", args)
	if err != nil {
		return err
	}
	cl, err := newClassifier(snap.V, snap.Labels, snap.Classes, *f.model)
	if err != nil {
		return err
	}
	in, codes, err := f.codeInput(ctx, snap, proj, stderr)
	if err != nil {
		return err
	}
	pred, score := cl.predict(codes)
	names, err := cl.enc.Decode(nil, pred)
	if err != nil {
		return err
	}
	_, k := codes.Dims()
	if err := writeResults(*f.out, k, sinks.Results{IDs: in.ids, Codes: codes, Preds: names, Scores: score}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "classified %d records of %s into %s; %d rejected\n", in.n(), *f.in, *f.out, len(in.rejects))
	if truth, nt := cl.truth(in); nt > 0 {
		fmt.Fprintf(stdout, "accuracy on the %d labeled records: %.4f\n", nt, metrics.Accuracy(pred, truth))
	}
	return nil
}

// classifier predicts classes from codes: 1-NN against all training codes,
// the unlabeled ones labeled first by self-training in code space
// (classify.SelfTraining), which measured 0.5–1.8 points above 1-NN on the
// labeled codes alone (see model.Auto). A prediction's score is the share of
// the 5 nearest labeled training codes that carry it.
type classifier struct {
	enc metrics.LabelEncoder
	st  classify.SelfTraining
}

func newClassifier(v *mat.Dense, labels []int, classes []string, path string) (*classifier, error) {
	c := &classifier{}
	c.enc.Fit(classes)
	if err := c.st.Fit(v, labels); err != nil {
		if errors.Is(err, classify.ErrNoLabels) {
			return nil, fmt.Errorf("%s: the model has no labeled training records, so it cannot classify: refit with labels (it can still project)", path)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// predict returns the class and score of each row of codes.
func (c *classifier) predict(codes *mat.Dense) ([]int, []float64) {
	return c.st.PredictScoresTo(nil, nil, codes)
}

func (c *classifier) truth(in *input) ([]int, int) {
	nc := len(c.enc.Classes())
	t := make([]int, in.n())
	n := 0
	for i := range t {
		t[i] = -1
		if !in.labeled[i] {
			continue
		}
		n++
		y, err := c.enc.Encode(nil, in.labels[i:i+1])
		if err != nil {
			t[i] = nc
			continue
		}
		t[i] = y[0]
	}
	return t, n
}
