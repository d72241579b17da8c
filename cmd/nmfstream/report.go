package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/internal/report"
	"github.com/nmfstream/nmfstream/model/metrics"
)

func init() {
	register(command{
		name:    "report",
		summary: "fit on your training file, score your test file, and write report.md, report.json and figures",
		run:     runReport,
	})
}

const reportSynopsis = `report --out DIR [--train F --test F] [--quick] [fit flags] [text flags] [--rejects R]

Fits a model on the training file and scores the test file exactly as
"nmfstream eval" does, then writes a report to DIR: report.md (the scores,
the fit, per-class recall and precision, the confusion matrix),
report.json (the same, for programs) and PNG figures: the objective per
update, the held-out recall of each class, the confusion matrix, and the
basis images when the features are square images (D = s×s); for
documents, the top terms of each factor. Without --train and --test it
reports on the embedded 8×8 digits (one third held out, 10 labels per
class of the rest, --seed's split). --quick bounds the fit to 50 updates.

The experiments of the papers and the comparisons with scikit-learn are
not here: see bench/paper in the source tree.

Examples:
  nmfstream report --quick --out /tmp/report
  nmfstream report --train train.arrow --test test.arrow --out report
  nmfstream report --train train.csv --test test.csv --method gnmf --rank 20 --out report`

func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report", reportSynopsis, stderr)
	var p fitParams
	addFitFlags(fs, &p)
	var tp textParams
	addTextFlags(fs, &tp)
	out := fs.String("out", "", "output `directory` for report.md, report.json and the PNG figures (required)")
	train := fs.String("train", "", "training `file` (default: the embedded digits)")
	test := fs.String("test", "", "test `file` with labels (default: the embedded digits)")
	rejects := fs.String("rejects", "", "write rejected records of both files to this `file` (JSON lines)")
	quick := fs.Bool("quick", false, "at most 50 updates (a first look, and CI)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	p.given = givenFlags(fs)
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("%w: unexpected argument %q (flags go before, as --flag value)", errUsage, fs.Arg(0))
	case *out == "":
		return fmt.Errorf("%w: --out is required (see nmfstream report -help)", errUsage)
	case (*train == "") != (*test == ""):
		return fmt.Errorf("%w: give both --train and --test, or neither (the embedded digits)", errUsage)
	case *train == "-" && *test == "-":
		return fmt.Errorf("%w: --train and --test cannot both be stdin", errUsage)
	}
	if *quick && (p.iters == 0 || p.iters > 50) {
		p.iters = 50
	}
	trainName, testName := *train, *test
	if *train == "" {
		dir, err := os.MkdirTemp("", "nmfstream-report-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		if *train, *test, err = writeDigitsSplit(dir, p.seed); err != nil {
			return err
		}
		trainName = fmt.Sprintf("embedded digits, training two thirds (10 labels per class, seed %d)", p.seed)
		testName = fmt.Sprintf("embedded digits, held-out third (seed %d)", p.seed)
	}
	if err := checkStart(checkInput("--train", *train), checkInput("--test", *test), checkOutput("--rejects", *rejects), checkOutputDir("--out", *out)); err != nil {
		return err
	}
	var objective []float64
	p.objective = &objective
	ev, err := evaluate(ctx, p, tp, *train, *test, *rejects, defaultClassifier, stderr)
	if err != nil {
		return err
	}
	rep := newReport(ev, objective, strings.Join(append([]string{"nmfstream report"}, args...), " "), trainName, testName)
	var basis *mat.Dense
	if !ev.f.spec.Kernel() {
		basis = mat.DenseCopyOf(ev.f.m.Basis())
		rep.Sparsity = report.Num(metrics.Hoyer(basis))
		if ev.f.tf != nil { // documents: the top terms of each factor
			if rep.Topics, err = topTerms(basis, ev.f.tf.Vocabulary(), 10); err != nil {
				return err
			}
		}
	}
	if err := report.Write(*out, rep, basis); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %s held-out accuracy %.4f on %d test records (balanced %.4f, macro-F1 %.4f)\n",
		filepath.Join(*out, "report.md"), rep.Method, float64(rep.Accuracy), rep.NTest, float64(rep.BalancedAccuracy), float64(rep.MacroF1))
	return nil
}

// newReport fills a report from an evaluation and the objective per
// update of its fit.
func newReport(ev *evaluation, objective []float64, command, train, test string) *report.Report {
	s := ev.sum
	r := &report.Report{
		Command: command, Train: train, Test: test,
		Method: s.Method, Rank: s.Rank, Projection: s.Projection, Classifier: s.Classifier, Seed: s.Seed,
		NTrain: s.NTrain, NLabeled: s.NLabeled, NTest: s.NTest, Features: s.Features, Rejected: s.Rejected,
		Accuracy: report.Num(s.Accuracy), BalancedAccuracy: report.Num(s.BalancedAccuracy), MacroF1: report.Num(s.MacroF1),
		FitSeconds: report.Num(s.FitSeconds), ProjectSeconds: report.Num(s.ProjectSeconds),
		Sparsity: report.Num(math.NaN()),
	}
	for _, v := range objective {
		r.Objective = append(r.Objective, report.Num(v))
	}
	// Classes of the training file, and one more for test labels that it
	// lacks (classifier.truth), shown only when such records exist.
	c := len(ev.f.classes) + 1
	conf := metrics.ConfusionMatrix(ev.pred, ev.truth, c)
	for i := range c {
		name := "(not in training)"
		if i < len(ev.f.classes) {
			name = ev.f.classes[i]
		} else if ev.cs.Support[i] == 0 {
			conf = conf[:i]
			break
		}
		r.Classes = append(r.Classes, report.Class{Name: name, Support: ev.cs.Support[i],
			Recall: report.Num(ev.cs.Recall[i]), Precision: report.Num(ev.cs.Precision[i]), F1: report.Num(ev.cs.F1[i])})
	}
	for _, row := range conf {
		r.Confusion = append(r.Confusion, row[:len(r.Classes)])
	}
	return r
}

// writeDigitsSplit writes the embedded digits as two CSV files in dir, the
// split of docs/DESIGN.md §7 (one third held out, 10 labels per class of the
// rest) drawn with seed, and returns their paths.
func writeDigitsSplit(dir string, seed uint64) (train, test string, err error) {
	x, y := datasets.Digits()
	sp, err := splitDigits(x, y, 10, seed)
	if err != nil {
		return "", "", err
	}
	train, test = filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv")
	if err := writeLabeledCSV(train, sp.train, sp.trainY); err != nil {
		return "", "", err
	}
	if err := writeLabeledCSV(test, sp.test, sp.testY); err != nil {
		return "", "", err
	}
	return train, test, nil
}

// writeLabeledCSV writes the rows of x with a label column (empty where y
// is −1) as a CSV file that the CSV source reads.
func writeLabeledCSV(path string, x *mat.Dense, y []int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	_, d := x.Dims()
	w.WriteString("label")
	for j := range d {
		fmt.Fprintf(w, ",x%d", j)
	}
	w.WriteByte('\n')
	for i, c := range y {
		if c >= 0 {
			w.WriteString(strconv.Itoa(c))
		}
		for _, v := range x.RawRowView(i) {
			w.WriteByte(',')
			w.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		}
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
