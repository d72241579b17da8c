package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/model/metrics"
	"github.com/nmfstream/nmfstream/sinks"
)

func init() {
	register(command{
		name:    "datasets",
		summary: "write the embedded data sets as files to try the other commands on",
		run:     runDatasets,
	})
}

const datasetsSynopsis = `datasets digits|brown --out DIR [--seed s] [--labels L] [--stream-labeled f] [--delay n]

Writes the data sets embedded in the binary (package datasets) as input
files, so that every command can be tried with no download.

digits: the 8×8 handwritten digits (1,797 samples, 64 pixels in [0, 16],
10 classes), as Arrow IPC files with columns x (fixed_size_list<float32>[64]),
label (int64, null when unlabeled) and id (int64, the digit's row):
  DIR/train.arrow   two thirds of the digits, L of each class labeled
  DIR/test.arrow    the other third, every one labeled (to score classify)
  DIR/stream.arrow  every digit in a random order, a share f labeled, each
                    label a label-only record (null x, the digit's id)
                    n records after its digit: the stream of "demo"
  DIR/digits.arrow  every digit with its label, in the data set's order:
                    the true classes of the stream (accuracy --truth)
  DIR/records.jsonl the first 20 digits of test.arrow as JSON lines
                    {"id":"new-1","x":[…]}, unlabeled: a body for serve's
                    POST /v1/records
brown: 45 texts of the Brown corpus, 3 of each of its 15 genres, as
  DIR/brown.csv     columns id, genre, text (one document per row)

The split and the order follow --seed; the same seed writes the same bytes.

Examples:
  nmfstream datasets digits --out data
  nmfstream datasets brown --out data
  nmfstream datasets digits --out data --labels 5 --stream-labeled 0.05 --delay 300`

func runDatasets(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("datasets", datasetsSynopsis, stderr)
	out := fs.String("out", "", "`directory` to write the files to, created if missing (required)")
	seed := fs.Uint64("seed", 1, "seed of the split and of the stream's order")
	labels := fs.Int("labels", 10, "digits: labeled training samples per class in train.arrow")
	share := fs.Float64("stream-labeled", 0.1, "digits: share of the stream's digits whose label arrives, in [0, 1]")
	delay := fs.Int("delay", 100, "digits: records between a digit and its label in stream.arrow (≥ 0)")
	name := ""
	if len(args) > 0 && !isHelpFlag(args[0]) && len(args[0]) > 0 && args[0][0] != '-' {
		name, args = args[0], args[1:]
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case name == "" && fs.NArg() > 0:
		return fmt.Errorf("%w: the data set comes before the flags: nmfstream datasets %s --out DIR", errUsage, fs.Arg(0))
	case name != "" && fs.NArg() > 0:
		return fmt.Errorf("%w: unexpected argument %q: give one data set, then flags only (nmfstream datasets %s --out DIR; flags take their value as --flag value)", errUsage, fs.Arg(0), name)
	case name != "digits" && name != "brown":
		return fmt.Errorf("%w: which data set? digits or brown%s (nmfstream datasets digits --out DIR)", errUsage, didYouMean(name, []string{"digits", "brown"}))
	case *out == "":
		return fmt.Errorf("%w: --out DIR is required", errUsage)
	case *labels < 1 || !(*share >= 0 && *share <= 1) || *delay < 0: // !(…) refuses NaN too
		return fmt.Errorf("%w: --labels %d, --stream-labeled %g, --delay %d: want at least 1 label per class, a share in [0, 1] and a delay ≥ 0", errUsage, *labels, *share, *delay)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("--out %s: %w", *out, err)
	}
	if name == "brown" {
		return writeBrown(stdout, *out)
	}
	return writeDigits(ctx, stdout, *out, *seed, *labels, *share, *delay)
}

// writeDigits writes train.arrow, test.arrow and stream.arrow (see
// datasetsSynopsis) into dir.
func writeDigits(ctx context.Context, stdout io.Writer, dir string, seed uint64, perClass int, share float64, delay int) error {
	x, y := datasets.Digits()
	sp, err := splitDigitsRows(y, perClass, seed)
	if err != nil {
		return fmt.Errorf("--labels %d: %w", perClass, err)
	}
	files := []struct {
		name string
		recs []digitRecord
	}{
		{"train.arrow", sp.train},
		{"test.arrow", sp.test},
		{"stream.arrow", digitsStream(y, seed, share, delay)},
		{"digits.arrow", allDigits(len(y))},
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		path := filepath.Join(dir, f.name)
		if err := writeDigitRecords(path, x, y, f.recs); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		labeled := 0
		for _, r := range f.recs {
			if r.label {
				labeled++
			}
		}
		fmt.Fprintf(stdout, "wrote %s: %d records, %d with a label\n", path, len(f.recs), labeled)
	}
	path := filepath.Join(dir, "records.jsonl")
	if err := writeRecordsJSONL(path, x, sp.test[:20]); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	fmt.Fprintf(stdout, "wrote %s: 20 unlabeled records for serve (ids new-1 to new-20)\n", path)
	return nil
}

// writeRecordsJSONL writes the features of recs as JSON lines of serve's
// POST /v1/records, ids new-1, new-2, ….
func writeRecordsJSONL(path string, x *mat.Dense, recs []digitRecord) error {
	var b strings.Builder
	for i, r := range recs {
		fmt.Fprintf(&b, `{"id":"new-%d","x":[`, i+1)
		for j, v := range x.RawRowView(r.row) {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		}
		b.WriteString("]}\n")
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// digitRecord is one record of a digits file: the digit's row of the data
// set, whether the record has its features (false: a label-only record)
// and whether it has its label.
type digitRecord struct {
	row      int
	features bool
	label    bool
}

// digitsSplitRecords are the records of train.arrow and test.arrow.
type digitsSplitRecords struct{ train, test []digitRecord }

// splitDigitsRows draws the split of demo (splitDigits, docs/DESIGN.md §7: one
// third held out, perClass labels per class in the rest) as records.
func splitDigitsRows(y []int, perClass int, seed uint64) (digitsSplitRecords, error) {
	s, err := metrics.Split(y, 1.0/3, perClass, rand.NewPCG(seed, seed))
	if err != nil {
		return digitsSplitRecords{}, err
	}
	trainY, _ := s.PoolLabels(y)
	var out digitsSplitRecords
	for r, i := range s.Train {
		out.train = append(out.train, digitRecord{row: i, features: true, label: trainY[r] >= 0})
	}
	for _, i := range s.Test {
		out.test = append(out.test, digitRecord{row: i, features: true, label: true})
	}
	return out, nil
}

// digitsStream returns the records of stream.arrow: every digit in the
// order demo streams them (seeded), the labels of a share of them as
// label-only records delay records after their digit.
func digitsStream(y []int, seed uint64, share float64, delay int) []digitRecord {
	n := len(y)
	rnd := rand.New(rand.NewPCG(seed, seed))
	order := rnd.Perm(n)
	isLabeled := map[int]bool{}
	for _, t := range rnd.Perm(n)[:int(share*float64(n)+0.5)] {
		isLabeled[t] = true
	}
	due := map[int][]int{}
	var recs []digitRecord
	for t := 0; t < n || len(due) > 0; t++ {
		if t < n {
			recs = append(recs, digitRecord{row: order[t], features: true})
			if isLabeled[t] {
				due[t+delay] = append(due[t+delay], order[t])
			}
		}
		for _, i := range due[t] {
			recs = append(recs, digitRecord{row: i, label: true})
		}
		delete(due, t)
	}
	return recs
}

// allDigits returns the records of digits.arrow: every digit, labeled.
func allDigits(n int) []digitRecord {
	recs := make([]digitRecord, n)
	for i := range recs {
		recs[i] = digitRecord{row: i, features: true, label: true}
	}
	return recs
}

// writeDigitRecords writes recs as an Arrow IPC file at path.
func writeDigitRecords(path string, x *mat.Dense, y []int, recs []digitRecord) error {
	_, d := x.Dims()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.FixedSizeListOf(int32(d), arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: "label", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	mem := memory.NewGoAllocator()
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	xb := b.Field(0).(*array.FixedSizeListBuilder)
	vb := xb.ValueBuilder().(*array.Float32Builder)
	lb, ib := b.Field(1).(*array.Int64Builder), b.Field(2).(*array.Int64Builder)
	for _, r := range recs {
		if r.features {
			xb.Append(true)
			for _, v := range x.RawRowView(r.row) {
				vb.Append(float32(v))
			}
		} else {
			xb.AppendNull()
		}
		if r.label {
			lb.Append(int64(y[r.row]))
		} else {
			lb.AppendNull()
		}
		ib.Append(int64(r.row))
	}
	rec := b.NewRecord()
	defer rec.Release()
	return sinks.WriteArrowFile(path, schema, mem, rec)
}

// writeBrown writes the embedded Brown sample as dir/brown.csv.
func writeBrown(stdout io.Writer, dir string) error {
	names, texts, genres, err := datasets.BrownSample()
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "brown.csv")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write([]string{"id", "genre", "text"})
	for i := range names {
		w.Write([]string{names[i], genres[i], texts[i]})
	}
	w.Flush()
	err = w.Error()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	fmt.Fprintf(stdout, "wrote %s: %d documents of %d genres (columns id, genre, text)\n", path, len(names), len(distinct(genres)))
	return nil
}

// distinct returns the distinct values of s in first-seen order.
func distinct(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
