package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/sinks"
	"github.com/nmfstream/nmfstream/sources"
	"github.com/nmfstream/nmfstream/stages"
)

// input is a whole data file read into memory: its usable samples in input
// order, their ids and labels, and the records that could not be used.
type input struct {
	path    string
	form    record.Form
	dense   []float64        // FormDense rows, row-major, d per row
	prec    record.Precision // record.Float32 if every batch with dense rows was, else record.Float64
	d       int              // dense or sparse dimension
	sp      *sparse.CSR
	text    []string
	ids     []string
	labels  []string
	labeled []bool
	offsets []int64
	rejects []record.Reject
	records int
}

func (in *input) n() int { return len(in.offsets) }

func (in *input) nLabeled() int {
	c := 0
	for _, l := range in.labeled {
		if l {
			c++
		}
	}
	return c
}

// readInput reads every record of path. Late labels are applied to the
// earlier sample with the same id; a late label for an unknown id is a
// reject. It returns an error when the file cannot be used at all.
// o gives the options of the input (CSV columns, image size, stdin).
func readInput(ctx context.Context, path string, o sources.Opener, pr *progress) (*input, error) {
	if err := csvOnly(o, path); err != nil {
		return nil, err
	}
	src, err := o.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: no such file", path)
	}
	if le := (*sources.LimitError)(nil); errors.As(err, &le) {
		return nil, err // it names the file and says what to do
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w\n(an input is Arrow IPC (.arrow), an Arrow stream (.arrows, - for stdin), Parquet, CSV or IDX; Arrow and Parquet need one feature column: x, indices+values, text or image, see \"nmfstream fit -help\")", path, err)
	}
	defer src.Close()
	form, err := src.Form()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	in := &input{path: path, form: form}
	byID := map[string]int{}
	f32 := form == record.FormDense // every dense batch so far is record.Float32
	for src.Next() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b := src.Batch()
		in.records += b.Records()
		if b.Len() > 0 {
			f32 = f32 && b.Precision == record.Float32
		}
		in.addRows(b)
		for i := range b.Offsets {
			if id := b.IDs[i]; id != "" {
				byID[id] = len(in.offsets) + i
			}
		}
		in.ids = append(in.ids, b.IDs...)
		in.labels = append(in.labels, b.Labels...)
		in.labeled = append(in.labeled, b.Labeled...)
		in.offsets = append(in.offsets, b.Offsets...)
		in.rejects = append(in.rejects, b.Rejects...)
		for _, ll := range b.LateLabels {
			j, ok := byID[ll.ID]
			if !ok {
				in.rejects = append(in.rejects, record.Reject{Offset: ll.Offset, ID: ll.ID,
					Reason: &record.Error{Offset: ll.Offset, ID: ll.ID, Err: errors.New("late label for an id not seen before")}})
				continue
			}
			in.labels[j], in.labeled[j] = ll.Label, true
		}
		pr.update(in.records, 0, "records read")
	}
	if err := src.Err(); err != nil {
		return nil, fmt.Errorf("%s: after %d records: %w", path, in.records, err)
	}
	if f32 && in.n() > 0 {
		in.prec = record.Float32
	}
	if in.n() == 0 {
		if len(in.rejects) > 0 {
			return in, fmt.Errorf("%s: all %d records rejected (first: %s); %s", path, len(in.rejects), shortReason(in.rejects[0].Reason), csvTextHint(path, o, in.rejects[0].Reason))
		}
		return in, fmt.Errorf("%s: no records", path)
	}
	return in, nil
}

// addRows appends the feature rows of b (dense, sparse or text) to in.
func (in *input) addRows(b *record.Batch) {
	switch b.Form {
	case record.FormDense:
		if b.Dense != nil {
			r, c := b.Dense.Dims()
			if in.d == 0 {
				in.d = c
			}
			for i := 0; i < r; i++ {
				in.dense = append(in.dense, b.Dense.RawRowView(i)...)
			}
		}
	case record.FormSparse:
		if b.Sparse != nil {
			r, c := b.Sparse.Dims()
			if in.sp == nil {
				in.sp = sparse.Zeros(0, c)
				in.d = c
			}
			if c > in.d {
				in.sp.Grow(c)
				in.d = c
			}
			for i := 0; i < r; i++ {
				ind, val := b.Sparse.Row(i)
				in.sp.AppendRow(ind, val)
			}
		}
	case record.FormText:
		in.text = append(in.text, b.Text...)
	}
}

// data returns the samples as model data, turning documents into TF-IDF
// rows with tf (fitting it first if fit is set). Documents with no known
// term become rejects, and are dropped from in.
func (in *input) data(tf *stages.TFIDF, fit bool) (model.Data, error) {
	switch in.form {
	case record.FormDense:
		return model.DenseRows(mat.NewDense(in.n(), in.d, in.dense)), nil
	case record.FormSparse:
		return model.SparseRows(in.sp), nil
	case record.FormText:
		if fit {
			if err := tf.Fit(in.text); err != nil {
				return nil, fmt.Errorf("%s: tf-idf: %w", in.path, err)
			}
		}
		x, err := tf.Transform(in.text)
		if err != nil {
			return nil, fmt.Errorf("%s: tf-idf: %w", in.path, err)
		}
		var keep []int
		for i := 0; i < in.n(); i++ {
			if x.Indptr[i+1] > x.Indptr[i] {
				keep = append(keep, i)
				continue
			}
			in.rejects = append(in.rejects, record.Reject{Offset: in.offsets[i], ID: in.ids[i],
				Reason: &record.Error{Offset: in.offsets[i], ID: in.ids[i], Err: record.NoFeatures("document has no term of the model's vocabulary")}})
		}
		if len(keep) == 0 {
			return nil, fmt.Errorf("%s: no document has a term of the vocabulary", in.path)
		}
		if len(keep) < in.n() {
			_, d := x.Dims()
			y := sparse.Zeros(0, d)
			for _, i := range keep {
				ind, val := x.Row(i)
				y.AppendRow(ind, val)
			}
			x = y
			in.keep(keep)
		}
		_, in.d = x.Dims()
		return model.SparseRows(x), nil
	}
	return nil, fmt.Errorf("%s: unknown feature form %v", in.path, in.form)
}

// capNorms rejects the samples of x (in's, as data returned them) whose
// Euclidean norm is above ratio times the geometric mean of the other
// samples' nonzero norms (model.NormOutliers; ratio is --max-norm-ratio,
// read by model.NormRatio), and returns x without them. Documents are not
// checked: their TF-IDF rows have norm 1. An error means no sample is left.
func (in *input) capNorms(x model.Data, ratio float64) (model.Data, error) {
	if ratio = model.NormRatio(ratio); ratio < 0 || in.form == record.FormText {
		return x, nil
	}
	nm := model.RowNorms(x)
	far, typical := model.NormOutliers(nm, ratio, 0, 0)
	if len(far) == 0 {
		return x, nil
	}
	keep := make([]int, 0, len(nm)-len(far))
	for i := range nm {
		if len(far) > 0 && far[0] == i {
			in.rejects = append(in.rejects, record.Reject{Offset: in.offsets[i], ID: in.ids[i], Reason: &record.Error{Offset: in.offsets[i], ID: in.ids[i],
				Err: model.NormOutlierError(nm[i], typical[0], ratio, "the file's")}})
			far, typical = far[1:], typical[1:]
			continue
		}
		keep = append(keep, i)
	}
	if len(keep) == 0 {
		return nil, fmt.Errorf("%s: no record is left within --max-norm-ratio", in.path)
	}
	in.keep(keep)
	return in.data(nil, false)
}

// keep restricts the samples to the given rows (ascending): their ids,
// labels, offsets and features.
func (in *input) keep(rows []int) {
	pick := func(s []string) []string {
		if s == nil {
			return nil
		}
		out := make([]string, len(rows))
		for r, i := range rows {
			out[r] = s[i]
		}
		return out
	}
	in.ids, in.labels, in.text = pick(in.ids), pick(in.labels), pick(in.text)
	if in.dense != nil {
		dense := make([]float64, 0, len(rows)*in.d)
		for _, i := range rows {
			dense = append(dense, in.dense[i*in.d:(i+1)*in.d]...)
		}
		in.dense = dense
	}
	if in.sp != nil {
		_, d := in.sp.Dims()
		sp := sparse.Zeros(0, d)
		for _, i := range rows {
			ind, val := in.sp.Row(i)
			sp.AppendRow(ind, val)
		}
		in.sp = sp
	}
	lab := make([]bool, len(rows))
	off := make([]int64, len(rows))
	for r, i := range rows {
		lab[r], off[r] = in.labeled[i], in.offsets[i]
	}
	in.labeled, in.offsets = lab, off
}

// reportRejects says on stderr how many records of in were rejected and,
// if rejectsPath is set, writes them there as JSON lines (sinks.Rejects),
// appending when appendTo is set. Each reason names the file.
func reportRejects(stderr io.Writer, in *input, rejectsPath string, appendTo bool) error {
	if len(in.rejects) > 0 {
		fmt.Fprintf(stderr, "nmfstream: %s: %d records rejected (first: %s)", in.path, len(in.rejects), shortReason(in.rejects[0].Reason))
		if rejectsPath == "" {
			fmt.Fprint(stderr, "; pass --rejects FILE to list them all")
		}
		fmt.Fprintln(stderr)
	}
	if rejectsPath == "" {
		return nil
	}
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if appendTo {
		flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(rejectsPath, flags, 0o644)
	if err != nil {
		return fmt.Errorf("--rejects: %w", err)
	}
	w := sinks.NewRejects(f)
	for _, r := range in.rejects {
		if err := w.Write(r.Offset, r.ID, fmt.Errorf("%s: %w", in.path, r.Reason)); err != nil {
			f.Close()
			return fmt.Errorf("--rejects %s: %w", rejectsPath, err)
		}
	}
	if err := w.Close(); err != nil {
		f.Close()
		return fmt.Errorf("--rejects %s: %w", rejectsPath, err)
	}
	return f.Close()
}

// allInts reports whether every labeled label is a decimal integer, so that
// predictions can be written as int64.
func allInts(labels []string, labeled []bool) bool {
	any := false
	for i, l := range labels {
		if !labeled[i] {
			continue
		}
		if _, err := strconv.ParseInt(l, 10, 64); err != nil {
			return false
		}
		any = true
	}
	return any
}

// csvTextHint says what to do when every record of an input was rejected:
// for a CSV read as numbers (no --text-column) whose records were refused
// for a field that is not a number, and that has a column of text (most of
// its first rows' fields hold a space), it suggests --text-column with
// that column, and --label-column for another non-numeric column if none
// was given. Otherwise it is the general advice.
func csvTextHint(path string, o sources.Opener, reason error) string {
	const general = "fix the data or see --rejects"
	if !isCSV(path) || o.TextColumn != (sources.Column{}) || reason == nil || !strings.Contains(reason.Error(), "is not a number") {
		return general
	}
	header, rows, err := sources.CSVHead(path, 20)
	if err != nil || len(rows) == 0 {
		return general
	}
	name := func(j int) string {
		if header != nil && header[j] != "" {
			return header[j]
		}
		return strconv.Itoa(j + 1)
	}
	text, other := -1, -1
	for j := range rows[0] {
		spaced, numeric := 0, 0
		for _, r := range rows {
			if j >= len(r) {
				continue
			}
			if strings.Contains(strings.TrimSpace(r[j]), " ") {
				spaced++
			}
			if _, err := strconv.ParseFloat(strings.TrimSpace(r[j]), 64); err == nil || strings.TrimSpace(r[j]) == "" {
				numeric++
			}
		}
		switch {
		case 2*spaced > len(rows) && text < 0:
			text = j
		case numeric < len(rows) && other < 0 && (o.LabelColumn == (sources.Column{}) || (o.LabelColumn.Name != name(j) && o.LabelColumn.Index != j+1)) && (o.IDColumn.Name != name(j) && o.IDColumn.Index != j+1) && !(o.IDColumn == (sources.Column{}) && name(j) == "id"):
			other = j
		}
	}
	if text < 0 {
		return general
	}
	hint := fmt.Sprintf("column %s holds text: if it holds the documents, pass --text-column %s", name(text), name(text))
	if o.LabelColumn == (sources.Column{}) && other >= 0 {
		hint += fmt.Sprintf(" (and --label-column %s if %s holds the labels)", name(other), name(other))
	}
	return hint
}

// shortReason is a reject's reason for a one-line summary: at most 200
// runes, the middle of a longer one (a whole document quoted) cut out and
// marked by "…". --rejects keeps the whole reason.
func shortReason(err error) string {
	const keep = 200
	r := []rune(err.Error())
	if len(r) <= keep {
		return string(r)
	}
	return string(r[:keep-40]) + " … " + string(r[len(r)-37:])
}
