package model

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// SnapshotVersion is the format version of Snapshot written by this code.
// Readers accept files of this version only: bump it when a field changes
// meaning, and say in the release notes how to refit.
const SnapshotVersion = 1

// ErrSnapshotVersion is returned (wrapped) when a saved model was written
// with another SnapshotVersion.
var ErrSnapshotVersion = errors.New("model: unsupported snapshot version")

// Snapshot is the plain-data state of a fitted model: everything a saved
// model file holds so that projection and classification after loading give
// the same numbers, bit for bit, as right after fitting. It holds no
// behaviour of its own beyond Validate and Projector, and no I/O: the sinks
// and sources packages write and read it (Arrow IPC with schema metadata).
//
// # Shapes
//
// U is D×K, V is N×K (one row per training sample), and the training rows
// are N×D, dense (TrainDense) or sparse (TrainSparse). Labels has length N.
type Snapshot struct {
	// Version is the format version, SnapshotVersion when written.
	Version int
	// Method is the command-line name of the method that was fitted
	// ("gnmf", "nmf", …).
	Method string
	// Params records the hyperparameters as given (flag name → value), for
	// the record and for refitting; the fitted state below does not depend
	// on reading them back.
	Params map[string]string

	// U is the basis (D×K).
	U *mat.Dense
	// V holds the codes of the training samples (N×K).
	V *mat.Dense
	// TrainDense or TrainSparse holds the training samples (N×D), which
	// graph-aware projection searches for each new sample's neighbours. At
	// most one is set; neither when the model cannot project on a graph.
	TrainDense  *mat.Dense
	TrainSparse *sparse.CSR

	// Graph is the k-NN configuration of graph-aware projection: K, Metric.
	Graph graph.KNN
	// Weighting is the edge weighting of that graph, with HeatT filled in
	// for heat-kernel weights.
	Weighting graph.Weighting
	// Alpha is the weight of the anchor term of graph-aware projection
	// (the fit's effective α for GNMF).
	Alpha float64
	// Projection is the default projection of new samples.
	Projection Projection
	// Linear marks a model whose codes are the linear map x·U (DPCA), not a
	// non-negative projection; Projection is then ignored.
	Linear bool

	// Classes holds the label of each class, class c being Classes[c].
	Classes []string
	// IntLabels reports that the training labels were integers, so that
	// predictions are written as integers too.
	IntLabels bool
	// Labels holds the class of each training sample, or −1 for the
	// unlabeled ones (length N).
	Labels []int

	// Form is the feature form of the training input: "dense", "sparse",
	// "text" or "image".
	Form string
	// ImageWidth and ImageHeight are the size images were resized to, when
	// Form is "image".
	ImageWidth, ImageHeight int
	// Vectorizer is the encoded state of the TF-IDF vectorizer
	// (stages.TFIDF.MarshalBinary) when Form is "text", or nil.
	Vectorizer []byte

	// Extra holds further named matrices a method needs (kernel
	// coefficients, for example). Names must not start with an underscore.
	Extra map[string]*mat.Dense
}

// Validate checks the version and that the shapes agree, and that every
// float is finite and the basis and codes of non-linear models are
// non-negative. Errors name the field and the numbers.
func (s *Snapshot) Validate() error {
	if s.Version != SnapshotVersion {
		return fmt.Errorf("%w %d (this build reads version %d): refit the model with this build",
			ErrSnapshotVersion, s.Version, SnapshotVersion)
	}
	if s.Method == "" {
		return errors.New("model: snapshot: no method name")
	}
	if s.U == nil || s.U.IsEmpty() {
		return errors.New("model: snapshot: no basis U")
	}
	d, k := s.U.Dims()
	if s.V == nil || s.V.IsEmpty() {
		return errors.New("model: snapshot: no training codes V")
	}
	n, vk := s.V.Dims()
	if vk != k {
		return fmt.Errorf("model: snapshot: U is %d×%d but V is %d×%d (ranks differ)", d, k, n, vk)
	}
	if s.TrainDense != nil && s.TrainSparse != nil {
		return errors.New("model: snapshot: both dense and sparse training rows")
	}
	var tr mat.Matrix
	if s.TrainDense != nil {
		tr = s.TrainDense
	} else if s.TrainSparse != nil {
		if err := s.TrainSparse.Validate(); err != nil {
			return fmt.Errorf("model: snapshot: training rows: %w", err)
		}
		tr = s.TrainSparse
	}
	if tr != nil {
		r, c := tr.Dims()
		if r != n || c != d {
			return fmt.Errorf("model: snapshot: training rows are %d×%d, want N×D = %d×%d", r, c, n, d)
		}
	}
	if len(s.Labels) != n {
		return fmt.Errorf("model: snapshot: %d labels for %d training samples", len(s.Labels), n)
	}
	for i, y := range s.Labels {
		if y < -1 || y >= len(s.Classes) {
			return fmt.Errorf("model: snapshot: label %d of training sample %d outside [-1, %d)", y, i, len(s.Classes))
		}
	}
	if !sort.StringsAreSorted(s.Classes) {
		return errors.New("model: snapshot: classes are not sorted")
	}
	if s.Projection < ProjectGraph || s.Projection > ProjectClampedPinv {
		return fmt.Errorf("model: snapshot: unknown projection %d", int(s.Projection))
	}
	if s.Graph.K < 0 || math.IsNaN(s.Alpha) || math.IsInf(s.Alpha, 0) || s.Alpha < 0 {
		return fmt.Errorf("model: snapshot: bad graph settings (k %d, α %g)", s.Graph.K, s.Alpha)
	}
	check := func(name string, m *mat.Dense, nonNeg bool) error {
		if m == nil {
			return nil
		}
		r, c := m.Dims()
		for i := 0; i < r; i++ {
			for j, v := range m.RawRowView(i)[:c] {
				if math.IsNaN(v) || math.IsInf(v, 0) || (nonNeg && v < 0) {
					return fmt.Errorf("model: snapshot: %s has entry %g at (%d, %d)", name, v, i, j)
				}
			}
		}
		return nil
	}
	if err := check("U", s.U, !s.Linear); err != nil {
		return err
	}
	if err := check("V", s.V, !s.Linear); err != nil {
		return err
	}
	if err := check("training rows", s.TrainDense, true); err != nil {
		return err
	}
	for name, m := range s.Extra {
		if m == nil || m.IsEmpty() {
			return fmt.Errorf("model: snapshot: extra matrix %q is empty", name)
		}
		if err := check(name, m, false); err != nil {
			return err
		}
	}
	if s.Form == "image" && (s.ImageWidth <= 0 || s.ImageHeight <= 0 || s.ImageWidth*s.ImageHeight != d) {
		return fmt.Errorf("model: snapshot: image size %d×%d does not match D = %d", s.ImageWidth, s.ImageHeight, d)
	}
	if s.Form == "text" && len(s.Vectorizer) == 0 {
		return errors.New("model: snapshot: text model without a vectorizer")
	}
	return nil
}

// Train returns the training rows as Data, or nil if the snapshot has none.
func (s *Snapshot) Train() Data {
	switch {
	case s.TrainDense != nil:
		return DenseRows(s.TrainDense)
	case s.TrainSparse != nil:
		return SparseRows(s.TrainSparse)
	}
	return nil
}

// Projector returns a Projector for new samples with projection p. For
// ProjectGraph it searches the training rows with s.Graph and s.Weighting
// and uses s.Alpha, as GNMF.Projector does on the fitted model, so that a
// loaded model projects exactly as the fitted one did. It returns an error
// for ProjectGraph when the snapshot holds no training rows, and for a
// linear model (use x·U).
func (s *Snapshot) Projector(p Projection) (*Projector, error) {
	if s.Linear {
		return nil, fmt.Errorf("model: snapshot: %s codes are linear (x·U), not projected", s.Method)
	}
	if _, ok := s.Params["kernel.method"]; ok {
		// A kernel model's basis lives in kernel space; its U is descriptive
		// only, so projecting on it would give wrong codes.
		return nil, fmt.Errorf("model: snapshot: %s is a kernel model: project with kernel.StateFromSnapshot and kernel.NewProjector", s.Method)
	}
	pr := &Projector{Method: p, U: s.U, TrainCodes: s.V, Alpha: s.Alpha}
	if name, ok := s.Params["loss"]; ok {
		loss, err := ParseLoss(name)
		if err != nil {
			return nil, fmt.Errorf("model: snapshot: %w", err)
		}
		pr.Loss = loss
	}
	if p == ProjectGraph {
		train := s.Train()
		if train == nil {
			return nil, fmt.Errorf("model: snapshot: %s model has no training rows for graph projection: use nnls", s.Method)
		}
		q := &Query{Train: train, K: s.Graph.K, Metric: s.Graph.Metric, Weighting: s.Weighting}
		pr.Neighbors = q.Weights
	}
	return pr, nil
}
