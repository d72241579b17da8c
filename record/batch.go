package record

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// MaxValue is the largest feature value a source, a stage or a model
// accepts (10⁶⁰). The factorization's updates form products of up to the
// fourth power of a feature value (a stream's first fit overflowed
// float64 between 10⁷⁷ and 10⁸⁰, and stopped the stream), and the k-NN
// graph the squares: below MaxValue the sum of up to 10⁶⁰ such powers
// stays finite. A record with a larger value would turn the model's
// objective or the graph's distances into Inf and NaN, and every
// prediction after it with them: it is rejected with its value named.
// Scale such features down first.
const MaxValue = 1e60

// DefaultMaxDim is the largest feature dimension D a source or a stage
// accepts unless told otherwise: 2²⁰, scikit-learn's HashingVectorizer default.
// The online model keeps a dense basis U of D×K float64 (and the statistics
// B of the same shape), so D = 2²⁰ at rank 40 already takes 320 MiB for U
// alone; a record or header claiming D = 10⁸ would ask for tens of
// gigabytes, and must fail instead of allocating.
const DefaultMaxDim = 1 << 20

// Form is the feature form of an input: how each record's features are
// given, and so which field of Batch holds them.
type Form int

const (
	// FormDense means dense numeric features (column x, decoded images,
	// IDX and CSV files), in Batch.Dense.
	FormDense Form = iota + 1
	// FormSparse means sparse numeric features (columns indices and values),
	// in Batch.Sparse.
	FormSparse
	// FormText means documents (column text), in Batch.Text.
	FormText
)

func (f Form) String() string {
	switch f {
	case FormDense:
		return "dense"
	case FormSparse:
		return "sparse"
	case FormText:
		return "text"
	}
	return "Form(" + strconv.Itoa(int(f)) + ")"
}

// Precision is the float type an input stored its dense features in: the
// narrowest type that holds every value exactly as the input gave it (an
// 8-bit pixel scaled by 1/255 counts as float32: the input held 8 bits).
// Consumers may run their products in that precision, as scikit-learn
// keeps float32 input as float32 (docs/DESIGN.md §5).
type Precision int

const (
	// Float64 is the zero value: float64 features, or features whose
	// type is not known to be narrower (CSV, JSON lines, sparse values
	// and text, decoded images).
	Float64 Precision = iota
	// Float32 means float32 features or narrower: Arrow and Parquet
	// lists of float32, IDX unsigned-byte, signed-byte and float32 data.
	Float32
)

func (p Precision) String() string {
	switch p {
	case Float64:
		return "float64"
	case Float32:
		return "float32"
	}
	return "Precision(" + strconv.Itoa(int(p)) + ")"
}

// Batch is a group of consecutive input records. Its sample rows are the
// records that carry usable features, in input order; the other records of
// the group are in LateLabels or Rejects. Every record of the group is in
// exactly one of the three.
type Batch struct {
	// Form says which one of Dense, Sparse and Text holds the features.
	Form Form
	// Dense holds the features for FormDense: one row per sample (n×D).
	// It is nil when the batch has no sample rows.
	Dense *mat.Dense
	// Sparse holds the features for FormSparse: one row per sample (n×D),
	// where D is the schema's dim. It is nil when the batch has no sample rows.
	Sparse *sparse.CSR
	// Text holds the documents for FormText, one per sample.
	Text []string
	// Precision is the type the input stored Dense's values in (Float64,
	// the zero value, unless the source knows them to be narrower). Dense
	// itself is float64 either way. It describes the whole input: every
	// batch of a source carries the same Precision.
	Precision Precision

	// IDs holds each sample's id, or "" if the input has no id column or
	// the id is null. Integer ids are formatted in decimal.
	IDs []string
	// Labels holds each sample's label ("" when unlabeled). Integer labels
	// are formatted in decimal.
	Labels []string
	// Labeled reports, per sample, whether it has a label; false means a
	// null label, i.e. an unlabeled sample.
	Labeled []bool
	// Offsets holds each sample's 0-based record position in the whole input.
	Offsets []int64

	// LateLabels lists, in input order, the records with an id and a label
	// but null or empty features: labels for samples seen earlier.
	LateLabels []LateLabel
	// Rejects lists, in input order, the records that cannot be used.
	Rejects []Reject
}

// Len returns the number of sample rows.
func (b *Batch) Len() int { return len(b.Offsets) }

// Records returns the number of input records the batch covers: samples,
// late labels and rejects.
func (b *Batch) Records() int { return len(b.Offsets) + len(b.LateLabels) + len(b.Rejects) }

// Span returns the smallest and largest record offsets of b, over samples,
// late labels and rejects (math.MaxInt64 and −1 when b is empty).
func (b *Batch) Span() (first, last int64) {
	first, last = math.MaxInt64, -1
	for _, o := range b.Offsets {
		first, last = min(first, o), max(last, o)
	}
	for _, x := range b.LateLabels {
		first, last = min(first, x.Offset), max(last, x.Offset)
	}
	for _, x := range b.Rejects {
		first, last = min(first, x.Offset), max(last, x.Offset)
	}
	return first, last
}

// Clone returns a deep copy of b that shares no memory with it.
func (b *Batch) Clone() *Batch {
	c := &Batch{
		Form:       b.Form,
		Precision:  b.Precision,
		Text:       slices.Clone(b.Text),
		IDs:        slices.Clone(b.IDs),
		Labels:     slices.Clone(b.Labels),
		Labeled:    slices.Clone(b.Labeled),
		Offsets:    slices.Clone(b.Offsets),
		LateLabels: slices.Clone(b.LateLabels),
		Rejects:    slices.Clone(b.Rejects),
	}
	if b.Dense != nil {
		c.Dense = mat.DenseCopyOf(b.Dense)
	}
	if b.Sparse != nil {
		n, d := b.Sparse.Dims()
		m := sparse.Zeros(0, d)
		for i := range n {
			m.AppendRow(b.Sparse.Row(i))
		}
		c.Sparse = m
	}
	return c
}

// LateLabel is a label that arrives without features, for the sample with
// the same ID seen earlier.
type LateLabel struct {
	Offset int64  // 0-based record position in the input
	ID     string // id of the labeled sample
	Label  string // its label
}

// Reject is a record that cannot be used, with the reason.
type Reject struct {
	Offset int64  // 0-based record position in the input
	ID     string // the record's id, or ""
	// Reason is a *Error naming the record and the problem.
	Reason error
}

// Error is the reason a record was rejected. Its message reads
// "sources: record N (id "ID"): problem", or without the id part when ID is
// empty: the form that reject files (sinks.Results) carry.
type Error struct {
	Offset int64  // 0-based record position in the input
	ID     string // the record's id, or ""
	Err    error  // the problem
}

// Rejectf returns a Reject of the record at offset off with id, whose
// reason is an *Error with the formatted problem.
func Rejectf(off int64, id string, format string, args ...any) Reject {
	return Reject{Offset: off, ID: id, Reason: &Error{Offset: off, ID: id, Err: fmt.Errorf(format, args...)}}
}

func (e *Error) Error() string {
	if e.ID != "" {
		return fmt.Sprintf("sources: record %d (id %q): %v", e.Offset, e.ID, e.Err)
	}
	return fmt.Sprintf("sources: record %d: %v", e.Offset, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrNoFeatures marks the reason of a record without features (an empty
// document, a document without a usable term, a record whose feature
// columns are all empty): errors.Is(reject.Reason, ErrNoFeatures). Such a
// record is rejected, since nothing can be learned from it, but it still
// gets an arrival prediction from the class shares of the labels before
// it (stages.Step.Featureless).
var ErrNoFeatures = errors.New("no features")

// NoFeatures returns the problem of a record without features: an error
// whose message is problem and that errors.Is reports as ErrNoFeatures.
func NoFeatures(problem string) error { return noFeatures(problem) }

type noFeatures string

func (e noFeatures) Error() string      { return string(e) }
func (noFeatures) Is(target error) bool { return target == ErrNoFeatures }
