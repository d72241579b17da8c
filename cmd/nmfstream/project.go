package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/kernel"
	"github.com/nmfstream/nmfstream/model/methods"
	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/pipeline"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/sinks"
	"github.com/nmfstream/nmfstream/sources"
	"github.com/nmfstream/nmfstream/stages"
)

func init() {
	register(command{
		name:    "project",
		summary: "code the records of a file on a saved model's basis",
		run:     runProject,
	})
}

const projectSynopsis = `project --model M --in F --out F.arrow [--projector P] [--rejects R]

Codes every record of F on the basis U of the saved model M (from
"nmfstream fit") and writes one row per usable record, in input order, to F.arrow: id and
code (fixed_size_list<float32>[K]). An output ending in .jsonl writes JSON
lines instead, and - an Arrow stream on stdout (the summary line then
goes to stderr).
F has the same feature column as the training file (see "nmfstream fit
-help"); its labels, if any, are ignored.

Projections (--projector):
  graph    the record joins the training k-NN graph, min ‖x − Uv‖² + α Σ S_j ‖v − v_j‖² (default, most accurate)
  nnls     non-negative least squares, min ‖x − Uv‖², v ≥ 0
  clamped  max(0, (UᵀU)⁻¹Uᵀx), as in Cai et al.'s code
  pinv     (UᵀU)⁻¹Uᵀx, may be negative
The default is the one the model was fitted with (fit --projector). A
dpca model codes records by x·U, its linear transform, and takes no
--projector.

Examples:
  nmfstream project --model digits.model --in new.arrow --out codes.arrow
  nmfstream project --model digits.model --in new.arrow --out codes.arrow --projector nnls`

func runProject(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("project", projectSynopsis, stderr)
	f := bindCodeFlags(fs)
	snap, proj, err := f.load(fs, "project", args)
	if err != nil {
		return err
	}
	if err := checkLinearProjector(snap, *f.projector, *f.model); err != nil {
		return err
	}
	in, codes, err := f.codeInput(ctx, snap, proj, stderr)
	if err != nil {
		return err
	}
	_, k := codes.Dims()
	if err := writeResults(*f.out, k, sinks.Results{IDs: in.ids, Codes: codes}); err != nil {
		return err
	}
	fmt.Fprintf(summaryOut(*f.out, stdout, stderr), "coded %d records of %s (rank %d, %s projection) into %s; %d rejected\n",
		in.n(), *f.in, k, codingName(snap, proj), *f.out, len(in.rejects))
	return nil
}

// summaryOut is where project, classify and stream print their summary:
// standard error when --out is "-", whose standard output carries the
// binary Arrow stream, else standard output.
func summaryOut(out string, stdout, stderr io.Writer) io.Writer {
	if out == "-" {
		return stderr
	}
	return stdout
}

// codingName names how the model codes new records: "linear" for a
// linear model (dpca: x·U, its own transform, codeData), else proj.
func codingName(s *model.Snapshot, proj model.Projection) string {
	if s.Linear {
		return "linear"
	}
	return proj.String()
}

// checkLinearProjector refuses --projector for a linear model (dpca), whose
// codes are x·U whatever --projector says (codeData).
func checkLinearProjector(s *model.Snapshot, projector, path string) error {
	if !s.Linear || projector == "" {
		return nil
	}
	return fmt.Errorf("%w: --projector %s: %s is a %s model, linear: its records are coded by x·U, which no --projector changes: drop --projector", errUsage, projector, path, s.Method)
}

// writeResults writes r to path (Arrow IPC by default; see sinks.Create).
func writeResults(path string, k int, r sinks.Results) error {
	w, err := sinks.Create(path, k)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := w.Write(r); err != nil {
		w.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// loadModel reads a saved model, saying what to do when it cannot.
func loadModel(path string) (*model.Snapshot, error) {
	s, err := sources.LoadModel(path)
	if err != nil {
		return nil, fmt.Errorf("%w\n(the --model file must be written by \"nmfstream fit --save\" with this version)", err)
	}
	return s, nil
}

// codeFile reads path and codes its samples with the model.
// o gives the input's options; its image size is the model's.
func codeFile(ctx context.Context, s *model.Snapshot, proj model.Projection, path string, o sources.Opener, stderr io.Writer) (*input, *mat.Dense, error) {
	pr := newProgress(stderr, "reading "+path)
	o.Width, o.Height = s.ImageWidth, s.ImageHeight
	in, err := readInput(ctx, path, o, pr)
	pr.done()
	if err != nil {
		return in, nil, err
	}
	sp, err := spaceOf(s)
	if err != nil {
		return in, nil, err
	}
	x, err := modelData(sp, in)
	if err != nil {
		return in, nil, err
	}
	codes, err := codeData(ctx, s, proj, x, stderr)
	if err != nil {
		return in, nil, err
	}
	codes, err = rejectBadCodes(in, codes, math.MaxFloat32)
	return in, codes, err
}

// space is the feature space of a fitted model: what new records must look
// like to be coded.
type space struct {
	form   string        // "dense", "sparse" or "text"
	tf     *stages.TFIDF // the vectorizer, for text
	d      int           // number of features
	sparse bool          // training rows were sparse
}

// spaceOf returns the feature space of a saved model.
func spaceOf(s *model.Snapshot) (space, error) {
	d, _ := s.U.Dims()
	sp := space{form: s.Form, d: d, sparse: s.TrainSparse != nil || s.Form == "text" || s.Form == "sparse"}
	if s.Form == "text" {
		sp.tf = &stages.TFIDF{}
		if err := sp.tf.UnmarshalBinary(s.Vectorizer); err != nil {
			return space{}, fmt.Errorf("model's vectorizer: %w", err)
		}
	}
	return sp, nil
}

// modelData turns in's samples into data in the model's feature space:
// TF-IDF with the saved vectorizer for text, and a check of the dimension.
func modelData(sp space, in *input) (model.Data, error) {
	wantText := sp.form == "text"
	if isText := in.form == record.FormText; isText != wantText {
		return nil, fmt.Errorf("%s: %s features, but the model was fitted on %s features: give a file with the training file's feature column",
			in.path, formName(in.form), sp.form)
	}
	x, err := in.data(sp.tf, false)
	if err != nil {
		return nil, err
	}
	xd, _ := x.Dims()
	_, isSparse := model.Rows(x).(*sparse.CSR)
	if isSparse != sp.sparse {
		return nil, fmt.Errorf("%s: %s features, but the model was fitted on %s ones: give a file with the training file's feature column",
			in.path, formName(in.form), sp.form)
	}
	if r, ok := model.Rows(x).(*sparse.CSR); ok && xd < sp.d {
		r.Grow(sp.d) // a smaller dim only means unused trailing features
		x, xd = model.SparseRows(r), sp.d
	}
	if xd != sp.d {
		return nil, fmt.Errorf("%s: records have %d features, the model was fitted on %d: give records of the training file's dimension", in.path, xd, sp.d)
	}
	return x, nil
}

// codeBlock is the number of samples projected per call, so that progress
// moves and a cancel is noticed on large files.
const codeBlock = 1024

// codeData codes x's samples (N×K) with the snapshot, in blocks of
// codeBlock samples shared out among up to GOMAXPROCS goroutines
// (pipeline.Share), each with a projector of its own (a projector is not
// safe for concurrent use; codeWorkers says how many). A block's codes do
// not depend on the goroutine that codes it, so they are those of one
// projector coding the blocks in order. It returns ctx's error once ctx
// is done.
func codeData(ctx context.Context, s *model.Snapshot, proj model.Projection, x model.Data, stderr io.Writer) (*mat.Dense, error) {
	_, n := x.Dims()
	_, k := s.U.Dims()
	codes := mat.NewDense(n, k, nil)
	if s.Linear {
		x.TMulTo(codes, s.U)
		return codes, nil
	}
	workers := codeWorkers(s, proj, n)
	pool := make(chan projector, workers) // a projector per goroutine of Share
	for range workers {
		p, err := snapshotProjector(s, proj)
		if err != nil {
			return nil, err
		}
		pool <- p
	}
	pr := newProgress(stderr, "projecting")
	defer pr.done()
	var (
		mu    sync.Mutex // guards coded, first and pr
		coded int        // samples coded
		first error
	)
	pipeline.Share(workers)((n+codeBlock-1)/codeBlock, func(lo, hi int) {
		p := <-pool
		defer func() { pool <- p }()
		for b := lo; b < hi; b++ {
			i, e := b*codeBlock, min((b+1)*codeBlock, n)
			err := ctx.Err()
			if err == nil {
				err = projectBlock(codes.Slice(i, e, 0, k).(*mat.Dense), p, rowBlock(x, i, e))
			}
			mu.Lock()
			if err != nil && first == nil {
				first = err
			}
			stop := first != nil
			coded += e - i
			pr.update(coded, n, "records")
			mu.Unlock()
			if stop {
				return
			}
		}
	})
	if first != nil {
		return nil, first
	}
	return codes, nil
}

// codeWorkerBytes bounds the scratch of codeData's projectors together,
// in bytes: a graph projector's neighbour search holds a block of
// model.DefaultQueryBlock queries' products with every training sample
// (model.Query), and with sparse training samples their transpose.
const codeWorkerBytes = 512 << 20

// codeWorkers returns how many projectors codeData runs for n samples: one
// per block of codeBlock samples, at most GOMAXPROCS, and no more than
// codeWorkerBytes holds the scratch of; one for a kernel model, whose
// projector holds its training samples' kernel features, which each would
// build again.
func codeWorkers(s *model.Snapshot, proj model.Projection, n int) int {
	w := max(1, min(runtime.GOMAXPROCS(0), (n+codeBlock-1)/codeBlock))
	if i, err := methods.Lookup(s.Method); err == nil && i.Kernel() {
		return 1
	}
	if proj != model.ProjectGraph {
		return w
	}
	var per int
	if t := s.Train(); t != nil {
		_, m := t.Dims()
		per = 8 * model.DefaultQueryBlock * m
	}
	if s.TrainSparse != nil {
		per += 16 * s.TrainSparse.NNZ()
	}
	return max(1, min(w, codeWorkerBytes/max(per, 1)))
}

// projectBlock stores p's codes of blk into dst, a view of blk's rows of
// the codes.
func projectBlock(dst *mat.Dense, p projector, blk model.Data) error {
	var tmp mat.Dense
	if err := p.ProjectTo(&tmp, blk); err != nil {
		return err
	}
	dst.Copy(&tmp)
	return nil
}

// rejectBadCodes moves to in's rejects the records whose code has an entry
// that is NaN or above limit in magnitude (math.MaxFloat32 where the codes
// are written, as float32; math.MaxFloat64 where they are only
// classified), and returns the codes of the others; in keeps the others
// only (input.keep). Such a code comes from a record of values far larger
// than the training records' (its code scales with it): the record is
// rejected, naming the entry, and the rest go on. If every record's code
// is bad, the model is: rejectBadCodes then returns an error.
func rejectBadCodes(in *input, codes *mat.Dense, limit float64) (*mat.Dense, error) {
	n, k := codes.Dims()
	var keep []int
	var first error
	for i := 0; i < n; i++ {
		bad := -1
		for j, v := range codes.RawRowView(i) {
			if math.IsNaN(v) || math.Abs(v) > limit {
				bad = j
				break
			}
		}
		if bad < 0 {
			keep = append(keep, i)
			continue
		}
		what := "not finite"
		if limit == math.MaxFloat32 {
			what = "not a finite float32 (the type codes are written in)"
		}
		err := &record.Error{Offset: in.offsets[i], ID: in.ids[i],
			Err: fmt.Errorf("its code is %g in column %d, %s: its values are too large for the model, scale them down", codes.At(i, bad), bad, what)}
		in.rejects = append(in.rejects, record.Reject{Offset: in.offsets[i], ID: in.ids[i], Reason: err})
		if first == nil {
			first = err
		}
	}
	if len(keep) == n {
		return codes, nil
	}
	if len(keep) == 0 {
		return nil, fmt.Errorf("the model codes every record badly (first: %v): refit it (a fit that diverged?)", first)
	}
	out := mat.NewDense(len(keep), k, nil)
	for r, i := range keep {
		out.SetRow(r, codes.RawRowView(i))
	}
	in.keep(keep)
	return out, nil
}

// projector codes a block of samples.
type projector interface {
	ProjectTo(dst *mat.Dense, x model.Data) error
}

// snapshotProjector returns the projector of a saved model: the kernel
// methods' rebuilt from their state (--projector mapped as for fit, see
// kernelProjection), the others' from U and the training codes.
func snapshotProjector(s *model.Snapshot, proj model.Projection) (projector, error) {
	if i, err := methods.Lookup(s.Method); err == nil && i.Kernel() {
		st, err := kernel.StateFromSnapshot(s)
		if err != nil {
			return nil, err
		}
		st.Projection = methods.KernelProjection(proj)
		pr, err := kernel.NewProjector(st)
		if errors.Is(err, kernel.ErrNeedsExact) {
			return nil, fmt.Errorf("%w: --projector %v: %v", errUsage, proj, err)
		}
		return pr, err
	}
	return s.Projector(proj)
}

// rowBlock returns samples [lo, hi) of x as data.
func rowBlock(x model.Data, lo, hi int) model.Data {
	_, n := x.Dims()
	if lo == 0 && hi == n {
		return x
	}
	switch r := model.Rows(x).(type) {
	case *mat.Dense:
		_, d := r.Dims()
		return model.DenseRows(r.Slice(lo, hi, 0, d).(*mat.Dense))
	case *sparse.CSR:
		_, d := r.Dims()
		b := sparse.Zeros(0, d)
		for i := lo; i < hi; i++ {
			ind, val := r.Row(i)
			b.AppendRow(ind, val)
		}
		return model.SparseRows(b)
	}
	panic(fmt.Sprintf("nmfstream: unsupported data %T", x))
}
