package distributed

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/stages"
)

// The locality-preserving split of the chain (distributed/DESIGN.md, "The
// chain on the owners", "Locality"): with P > 1 partitions a dense sample
// goes to the partition of its nearest anchor, one of P unit vectors fixed
// once for the namespace, so that its neighbours in the k-NN graph and the
// labels near it sit on the same owner. The anchors are chosen by spherical
// k-means (k-means++ seeding from a fixed seed, then lloydRounds Lloyd
// rounds) on the first AnchorSamples dense samples a driver sees, and
// stored in the namespace's model bucket under keyAnchors, first writer
// wins: every driver of the namespace routes with the same anchors.

// keyAnchors is the model bucket's key of the namespace's anchors.
const keyAnchors = "anchors"

// Locality defaults.
const (
	// anchorsPerPartition is the samples per partition a driver gathers
	// before it fixes the anchors: 50 per anchor give k-means++ and the
	// Lloyd rounds a few dozen points per cluster.
	anchorsPerPartition = 50
	// lloydRounds is the number of Lloyd rounds after the seeding.
	lloydRounds = 5
	// defaultRemember bounds the ids a Router keeps (id → partition): 2¹⁷
	// ids, about 10 MB of map with ids of a dozen bytes. A late label or a
	// duplicate whose sample is older than that goes to every partition
	// (late labels) or to its nearest anchor (duplicates).
	defaultRemember = 1 << 17
	// defaultSlack is the capacity rule's slack: a partition takes a new
	// sample only while its share of the samples routed by anchor is
	// below 1/P + defaultSlack (after capacityWarm samples). At 0.10 it cost
	// digits 1.0 point at P = 3 (largest share 43% instead of 48%); at 0.20
	// the measured streams (largest share 48% on digits, 44% on MNIST 10k)
	// are not held back and a skewed stream still cannot load one owner
	// beyond 1/P + 0.20.
	defaultSlack = 0.20
	// capacityWarm is the number of samples routed by anchor before the
	// capacity rule applies: the shares of a few dozen samples are noise.
	capacityWarm = 100
)

// Router assigns the records of a driver's batches to P partitions. Until
// it has anchors it routes by PartitionOf (the id hash); once it has them,
// a dense sample goes to the nearest anchor (largest cosine) among the
// partitions under their capacity, a sample whose id it routed before
// (a duplicate) to that id's partition, a late label to its sample's
// partition if it knows the id and to every partition otherwise, a sparse
// or text sample, a reject and an unusable sample by the id hash.
//
// A Router is not safe for concurrent use.
type Router struct {
	// Slack is the capacity rule's slack: a partition whose share of the
	// samples routed by anchor is 1/P + Slack or more takes no new sample
	// (the next nearest anchor under its capacity does). If zero, 0.20;
	// negative disables the rule.
	Slack float64
	// Remember is the number of sample ids whose partition the Router
	// keeps, oldest forgotten first. If zero, 2¹⁷.
	Remember int
	// KeepRows is the number of samples whose row the Router keeps
	// (oldest forgotten first) to send, once their label comes, to the
	// other partitions as context (Split). If zero, 10,000 (the default
	// window: 63 MB of dense rows at D = 784; a sparse row keeps its
	// nonzeros only, a text sample its document, each within the source's
	// bound on a record); negative sends no context.
	KeepRows int
	// KeepBytes bounds the bytes of the rows kept (KeepRows), oldest
	// forgotten first: a row counts its values (8 bytes each; a sparse
	// row's indices too), its document, its id and keptRowOverhead. If
	// zero, 256 MiB (10,000 dense rows of D = 3,355); negative, no bound
	// but KeepRows. A row larger than the bound is not kept.
	KeepBytes int64
	// Warm is the number of the stream's first unlabeled dense samples
	// routed by anchor that are also sent to every other partition as
	// context (Split), learned there but not predicted for the driver.
	// Each goes with its id under ContextID, and its late label goes to
	// the other partitions as a late label of that id in their context.
	Warm int
	// Once, with Warm, makes the common start a prefix of whole batches
	// learned once, by partition 0, instead of context sent to every
	// partition: every record of a batch goes to partition 0 (the other
	// shares are empty) while fewer than Warm unlabeled samples were
	// routed so and the batches are dense (or hold no rows); the first
	// batch after them Forks, and its owners other than partition 0's
	// start from partition 0's state after the common start (ChainDriver,
	// Worker; distributed/DESIGN.md, "A common start"). The late label of
	// a sample of the common start then goes to partition 0 and, under its
	// own id, in the context of the others.
	Once bool

	p        int
	start    int                 // batches of the common start routed so far (Once)
	started  bool                // the common start (Once) has ended
	forks    bool                // the last Split's batch is the first after the common start
	warmed   int                 // unlabeled samples sent as context so far, or routed in the common start (Once)
	warmIDs  map[string]struct{} // the ids of those (≤ Warm), or of every sample of the common start (Once)
	locality bool                // dense samples seen: late labels of unknown ids go to every partition
	anchors  *mat.Dense          // P×D unit rows; nil until fixed
	counts   []int64             // samples routed by anchor per partition
	shares   []int64             // samples routed per partition, every way
	ids      map[string]int
	ring     []string // ids in routing order, for forgetting (len ≤ Remember)
	next     int      // ring's oldest entry once it is full
	rows     map[string]row
	rowRing  []string // ids of rows in the order kept, for forgetting: those from rowHead on are in rows
	rowHead  int
	rowBytes int64 // bytes of the rows kept (keptSize)
}

// NewRouter returns a Router for p partitions, without anchors.
func NewRouter(p int) *Router {
	return &Router{p: max(p, 1), counts: make([]int64, max(p, 1)), shares: make([]int64, max(p, 1)), ids: map[string]int{}, rows: map[string]row{}, warmIDs: map[string]struct{}{}}
}

// Anchors returns the Router's anchors (P×D, unit rows), or nil.
// The caller must not modify it.
func (r *Router) Anchors() *mat.Dense { return r.anchors }

// Shares returns the number of samples routed to each partition so far.
func (r *Router) Shares() []int64 { return append([]int64(nil), r.shares...) }

// SetAnchors fixes the Router's anchors: a P×D matrix whose rows are
// normalized to unit length here (a zero row is an error).
func (r *Router) SetAnchors(a *mat.Dense) error {
	n, d := a.Dims()
	if n != r.p {
		return fmt.Errorf("distributed: %d anchors for %d partitions", n, r.p)
	}
	u := mat.NewDense(n, d, nil)
	for i := range n {
		row := u.RawRowView(i)
		copy(row, a.RawRowView(i))
		if !unit(row) {
			return fmt.Errorf("distributed: anchor %d is zero or not finite", i)
		}
	}
	r.anchors, r.locality = u, true
	return nil
}

// unit scales v to unit length and reports whether it could (v nonzero
// and finite).
func unit(v []float64) bool {
	var s float64
	for _, x := range v {
		s += x * x
	}
	if s == 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return false
	}
	s = 1 / math.Sqrt(s)
	for i := range v {
		v[i] *= s
	}
	return true
}

// ChooseAnchors returns P anchors for the dense rows x (n×D, n ≥ P nonzero
// rows): spherical k-means on the rows scaled to unit length, seeded by
// k-means++ with rand.NewPCG(1, 1) and refined by lloydRounds Lloyd rounds
// (an empty cluster keeps its seed). The result depends on x only.
func ChooseAnchors(x *mat.Dense, p int) (*mat.Dense, error) {
	n, d := x.Dims()
	var rows [][]float64
	for i := range n {
		row := append([]float64(nil), x.RawRowView(i)...)
		if unit(row) {
			rows = append(rows, row)
		}
	}
	if len(rows) < p {
		return nil, fmt.Errorf("distributed: %d nonzero rows to choose %d anchors", len(rows), p)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	cos := func(a, b []float64) float64 {
		var s float64
		for i := range a {
			s += a[i] * b[i]
		}
		return s
	}
	// k-means++: each next seed with probability ∝ its squared distance to
	// the nearest seed so far (unit rows: ‖a−b‖² = 2 − 2 cos).
	a := mat.NewDense(p, d, nil)
	copy(a.RawRowView(0), rows[rng.IntN(len(rows))])
	dist := make([]float64, len(rows))
	for i := range dist {
		dist[i] = math.Inf(1)
	}
	for k := 1; k < p; k++ {
		var tot float64
		for i, row := range rows {
			dist[i] = min(dist[i], max(0, 2-2*cos(row, a.RawRowView(k-1))))
			tot += dist[i]
		}
		pick := rng.IntN(len(rows))
		if tot > 0 {
			u := rng.Float64() * tot
			for i, w := range dist {
				if u -= w; u < 0 {
					pick = i
					break
				}
			}
		}
		copy(a.RawRowView(k), rows[pick])
	}
	sum := mat.NewDense(p, d, nil)
	cnt := make([]int, p)
	for range lloydRounds {
		sum.Zero()
		clear(cnt)
		for _, row := range rows {
			best, bc := 0, math.Inf(-1)
			for k := range p {
				if c := cos(row, a.RawRowView(k)); c > bc {
					best, bc = k, c
				}
			}
			cnt[best]++
			s := sum.RawRowView(best)
			for j, v := range row {
				s[j] += v
			}
		}
		for k := range p {
			if s := sum.RawRowView(k); cnt[k] > 0 && unit(s) {
				copy(a.RawRowView(k), s)
			}
		}
	}
	return a, nil
}

// nearest returns the partition of the dense row v: the anchor of largest
// cosine among the partitions under their capacity (all of them if none
// is), ties to the lower partition.
func (r *Router) nearest(v []float64) int {
	var tot int64
	for _, c := range r.counts {
		tot += c
	}
	slack := r.Slack
	if slack == 0 {
		slack = defaultSlack
	}
	limit := math.Inf(1)
	if slack > 0 && tot >= capacityWarm {
		limit = (1/float64(r.p) + slack) * float64(tot+1)
	}
	best, bc := -1, math.Inf(-1)
	all, ac := 0, math.Inf(-1)
	for k := range r.p {
		a := r.anchors.RawRowView(k)
		var c float64
		for j, x := range v {
			c += x * a[j]
		}
		if c > ac {
			all, ac = k, c
		}
		if float64(r.counts[k]+1) <= limit && c > bc {
			best, bc = k, c
		}
	}
	if best < 0 {
		best = all
	}
	r.counts[best]++
	return best
}

// remember records that the sample id went to partition q.
func (r *Router) remember(id string, q int) {
	if id == "" {
		return
	}
	if _, ok := r.ids[id]; ok {
		r.ids[id] = q
		return
	}
	lim := r.Remember
	if lim <= 0 {
		lim = defaultRemember
	}
	if len(r.ring) < lim {
		r.ring = append(r.ring, id)
	} else {
		delete(r.ids, r.ring[r.next])
		r.ring[r.next] = id
		r.next = (r.next + 1) % lim
	}
	r.ids[id] = q
}

// contextPrefix begins the id of a sample of the common start in the
// context of the partitions other than its own (ContextID).
const contextPrefix = "\x00context\x00"

// ContextID is the id under which the partitions other than its own hold
// a sample of the common start whose id is id (Router.Warm): "" for "",
// else id after a prefix that begins with a NUL byte. Record ids that
// begin with that prefix are reserved: such a sample could be taken for a
// duplicate of a context sample (distributed/DESIGN.md, "A common start").
func ContextID(id string) string {
	if id == "" {
		return ""
	}
	return contextPrefix + id
}

// isContextID reports whether id is a context sample's (ContextID, or
// none).
func isContextID(id string) bool { return id == "" || strings.HasPrefix(id, contextPrefix) }

// defaultKeepRows is KeepRows' default: the default window of 10,000.
const defaultKeepRows = 10000

// row is a sample kept or sent as context: a dense row (d), the nonzeros
// of a sparse one (ind, val), both of dim columns, or a document not yet
// vectorized (text), which each owner vectorizes with its own TF-IDF.
type row struct {
	kind rowKind
	d    []float64
	ind  []int
	val  []float64
	dim  int
	text string
}

// rowKind is the form of a row.
type rowKind uint8

const (
	rowDense rowKind = iota
	rowSparse
	rowText
)

// rowOf returns a copy of sample i of f: its row of x (f's rows, a
// *mat.Dense or a *sparse.CSR), or its document when f is text.
func rowOf(f *stages.Features, x mat.Matrix, i int) row {
	if f.Text != nil {
		return row{kind: rowText, text: f.Text[i]}
	}
	_, dim := x.Dims()
	if sp, ok := x.(*sparse.CSR); ok {
		ind, val := sp.Row(i)
		return row{kind: rowSparse, ind: slices.Clone(ind), val: slices.Clone(val), dim: dim}
	}
	return row{kind: rowDense, d: slices.Clone(x.(*mat.Dense).RawRowView(i)), dim: dim}
}

// defaultKeepBytes is KeepBytes' default.
const defaultKeepBytes = 256 << 20

// keptRowOverhead is what KeepBytes counts for a kept row beyond its
// values, document and id: its map entry and slice headers.
const keptRowOverhead = 96

// keptSize is the bytes KeepBytes counts for the row rw of the sample id.
func keptSize(id string, rw row) int64 {
	return int64(keptRowOverhead + len(id) + 8*(len(rw.d)+len(rw.ind)+len(rw.val)) + len(rw.text))
}

// keepRow keeps the row of the sample id (rw, which nobody changes
// afterwards; a context may read it too), forgetting the oldest rows kept
// while more than KeepRows rows or KeepBytes bytes would be held.
func (r *Router) keepRow(id string, rw row) {
	lim := r.KeepRows
	if lim == 0 {
		lim = defaultKeepRows
	}
	if id == "" || lim < 0 {
		return
	}
	if _, ok := r.rows[id]; ok {
		return
	}
	size, limBytes := keptSize(id, rw), r.KeepBytes
	if limBytes == 0 {
		limBytes = defaultKeepBytes
	}
	if limBytes > 0 && size > limBytes {
		return
	}
	for len(r.rowRing)-r.rowHead >= lim || limBytes > 0 && r.rowBytes+size > limBytes {
		old := r.rowRing[r.rowHead]
		r.rowBytes -= keptSize(old, r.rows[old])
		delete(r.rows, old)
		r.rowRing[r.rowHead] = ""
		r.rowHead++
	}
	if r.rowHead > len(r.rowRing)/2 { // the forgotten half's room, given back
		r.rowRing = append(r.rowRing[:0], r.rowRing[r.rowHead:]...)
		r.rowHead = 0
	}
	r.rowRing = append(r.rowRing, id)
	r.rows[id] = rw
	r.rowBytes += size
}

// Split returns the P shares of f (each in f's input order; with one
// partition, f itself), their contexts, and the number of f's late labels
// sent to every partition because their id is unknown. The shares copy
// f's rows. Rows other than dense or sparse are an error.
//
// The context of partition q (nil if none) holds, as labeled samples
// without an id, the samples of f routed elsewhere that came with a label
// (dense, sparse or text), and the kept rows (KeepRows) of the samples elsewhere whose late
// label f holds: its owner learns them, so that every owner has every
// label near its samples, but neither predicts them for the driver nor
// counts them (distributed/DESIGN.md, "Labels across partitions").
func (r *Router) Split(f *stages.Features) (shares, context []*stages.Features, broadcast int, err error) {
	p := r.p
	if p <= 1 {
		return []*stages.Features{f}, nil, 0, nil
	}
	r.forks = false
	if r.Once && !r.started {
		if start, warmed := r.startBatch(f, r.warmed); start {
			shares, err := r.splitStart(f)
			if err == nil {
				r.warmed = warmed
			}
			return shares, nil, 0, err
		}
		r.started, r.forks = true, r.start > 0
	}
	type labeled struct {
		label   string
		off     int64
		row     row
		labeled bool
		id      string // the context's id (ContextID), "" for none
	}
	var elsewhere []labeled // labeled rows, each for every partition but its own
	var home []int          // their own partitions
	var dense *mat.Dense
	var rowsOf mat.Matrix // f's rows when dense or sparse: the context's source
	if f.X != nil {
		switch x := model.Rows(f.X).(type) {
		case *mat.Dense:
			dense, rowsOf = x, x
		case *sparse.CSR:
			rowsOf = x
		}
	}
	if dense != nil && r.anchors != nil {
		if _, d := dense.Dims(); d != r.anchors.RawMatrix().Cols {
			dense = nil // another dimension: the owners reject these samples
		}
	}
	dest := make([]int, len(f.Offsets))
	var v []float64
	for i, off := range f.Offsets {
		id := f.IDs[i]
		q, known := r.ids[id]
		switch {
		case known && id != "":
		case r.anchors != nil && dense != nil:
			v = append(v[:0], dense.RawRowView(i)...)
			if unit(v) {
				q = r.nearest(v)
			} else {
				q = PartitionOf(id, off, p)
			}
		default:
			q = PartitionOf(id, off, p)
		}
		dest[i] = q
		if (rowsOf != nil || f.Text != nil) && (dense == nil || r.locality) && !known {
			switch {
			case f.Labeled[i] && r.KeepRows >= 0:
				elsewhere = append(elsewhere, labeled{f.Labels[i], off, rowOf(f, rowsOf, i), true, ""})
				home = append(home, q)
			case !f.Labeled[i]:
				rw := rowOf(f, rowsOf, i) // kept, and read only by the context below
				r.keepRow(id, rw)
				if !r.Once && r.anchors != nil && r.warmed < r.Warm {
					r.warmed++
					if id != "" {
						r.warmIDs[id] = struct{}{}
					}
					elsewhere = append(elsewhere, labeled{"", off, rw, false, ContextID(id)})
					home = append(home, q)
				}
			}
		}
		r.shares[q]++
		r.remember(id, q)
	}
	out, err := shareOut(f, p, dest)
	if err != nil {
		return nil, nil, 0, err
	}
	var warmLate []record.LateLabel // late labels of the common start's samples
	var warmHome []int              // their samples' partitions
	for _, ll := range f.LateLabels {
		switch q, ok := r.ids[ll.ID]; {
		case ok && ll.ID != "":
			out[q].LateLabels = append(out[q].LateLabels, ll)
			if _, warm := r.warmIDs[ll.ID]; warm {
				id := ContextID(ll.ID)
				if r.Once {
					id = ll.ID // every owner holds the sample under its id
				}
				warmLate = append(warmLate, record.LateLabel{Offset: ll.Offset, ID: id, Label: ll.Label})
				warmHome = append(warmHome, q)
			} else if rw, ok := r.rows[ll.ID]; ok {
				elsewhere = append(elsewhere, labeled{ll.Label, ll.Offset, rw, true, ""})
				home = append(home, q)
			}
		case !r.locality:
			s := out[PartitionOf(ll.ID, ll.Offset, p)]
			s.LateLabels = append(s.LateLabels, ll)
		default:
			broadcast++
			for _, s := range out {
				s.LateLabels = append(s.LateLabels, ll)
			}
		}
	}
	if len(elsewhere) == 0 && len(warmLate) == 0 {
		return out, nil, broadcast, nil
	}
	context = make([]*stages.Features, p)
	// Every row of a context has the form (dense, sparse or text) and dimension
	// of the first one sent elsewhere: the owners reject the others anyway.
	var first row
	if len(elsewhere) > 0 {
		first = elsewhere[0].row
	}
	for q := range p {
		var rows []float64
		sp := sparse.Zeros(0, max(first.dim, 1))
		c := &stages.Features{}
		for k, ll := range warmLate {
			if warmHome[k] != q {
				c.LateLabels = append(c.LateLabels, ll)
			}
		}
		for k, e := range elsewhere {
			if home[k] == q || e.row.dim != first.dim || e.row.kind != first.kind {
				continue
			}
			switch first.kind {
			case rowDense:
				rows = append(rows, e.row.d...)
			case rowSparse:
				sp.AppendRow(e.row.ind, e.row.val)
			case rowText:
				c.Text = append(c.Text, e.row.text)
			}
			c.IDs, c.Labels = append(c.IDs, e.id), append(c.Labels, e.label)
			c.Labeled, c.Offsets = append(c.Labeled, e.labeled), append(c.Offsets, e.off)
		}
		if len(c.IDs) == 0 {
			if len(c.LateLabels) > 0 {
				context[q] = c
			}
			continue
		}
		switch first.kind {
		case rowDense:
			c.Dim, c.X = first.dim, model.DenseRows(mat.NewDense(len(c.IDs), first.dim, rows))
		case rowSparse:
			c.Dim, c.X = first.dim, model.SparseRows(sp)
		}
		context[q] = c
	}
	return out, context, broadcast, nil
}

// startBatch reports whether f belongs to the common start learned once
// (Once) when warmed unlabeled samples were routed in it before f: fewer
// than Warm, and f's rows dense or absent. It returns warmed after f.
func (r *Router) startBatch(f *stages.Features, warmed int) (bool, int) {
	if warmed >= r.Warm || f.Text != nil {
		return false, warmed
	}
	if f.X != nil {
		if _, dense := model.Rows(f.X).(*mat.Dense); !dense {
			return false, warmed
		}
	}
	for _, ok := range f.Labeled {
		if !ok {
			warmed++
		}
	}
	return true, warmed
}

// StartLen returns how many of fs, the next batches Split would route, are
// batches of the common start learned once (Once): 0 without one, or once
// it has ended.
func (r *Router) StartLen(fs []*stages.Features) int {
	if !r.Once || r.started || r.p <= 1 {
		return 0
	}
	warmed := r.warmed
	for k, f := range fs {
		var start bool
		if start, warmed = r.startBatch(f, warmed); !start {
			return k
		}
	}
	return len(fs)
}

// splitStart routes f, a batch of the common start learned once, whole to
// partition 0: its samples, late labels, rejects and unusable records.
// The other shares are empty (Split counts its unlabeled samples in
// warmed, as startBatch does). Every sample's id is remembered as
// partition 0's and as the common start's (its late label goes to every
// owner, which all hold it once they fork).
func (r *Router) splitStart(f *stages.Features) ([]*stages.Features, error) {
	out, err := shareOut(f, r.p, make([]int, len(f.Offsets)))
	if err != nil {
		return nil, err
	}
	for q := 1; q < r.p; q++ {
		out[q].Rejects, out[q].Unusable = nil, nil
	}
	out[0].Rejects, out[0].Unusable = f.Rejects, f.Unusable
	out[0].LateLabels = f.LateLabels
	for _, id := range f.IDs {
		if id != "" {
			r.warmIDs[id] = struct{}{}
		}
		r.shares[0]++
		r.remember(id, 0)
	}
	r.start++
	return out, nil
}

// Forks reports whether the batch of the last Split is the first after a
// common start learned once (Once): its owners other than partition 0's
// take partition 0's state after the common start's batches
// (StartBatches) before they learn it.
func (r *Router) Forks() bool { return r.forks }

// StartBatches returns the number of batches of the common start learned
// once (Once) routed so far.
func (r *Router) StartBatches() int { return r.start }

// gather keeps the unit rows of f's dense samples, up to want rows in all,
// for ChooseAnchors; it returns the rows kept so far.
func gather(rows [][]float64, f *stages.Features, want int) [][]float64 {
	if f == nil || f.X == nil || len(rows) >= want {
		return rows
	}
	x, ok := model.Rows(f.X).(*mat.Dense)
	if !ok {
		return rows
	}
	n, _ := x.Dims()
	for i := 0; i < n && len(rows) < want; i++ {
		v := append([]float64(nil), x.RawRowView(i)...)
		if unit(v) {
			if len(rows) > 0 && len(v) != len(rows[0]) {
				continue
			}
			rows = append(rows, v)
		}
	}
	return rows
}

// encodeAnchors returns a's bytes: P and D as uint32, then the P×D
// entries row-major as float64 bits, little-endian.
func encodeAnchors(a *mat.Dense) []byte {
	n, d := a.Dims()
	b := binary.LittleEndian.AppendUint32(nil, uint32(n))
	b = binary.LittleEndian.AppendUint32(b, uint32(d))
	for i := range n {
		for _, v := range a.RawRowView(i) {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
	}
	return b
}

// decodeAnchors reads encodeAnchors' bytes.
func decodeAnchors(b []byte) (*mat.Dense, error) {
	if len(b) < 8 {
		return nil, errors.New("distributed: anchors: short")
	}
	n, d := int(binary.LittleEndian.Uint32(b)), int(binary.LittleEndian.Uint32(b[4:]))
	if n <= 0 || d <= 0 || len(b)-8 != 8*n*d {
		return nil, fmt.Errorf("distributed: anchors: %d bytes for %d×%d", len(b), n, d)
	}
	a := mat.NewDense(n, d, nil)
	raw := a.RawMatrix().Data
	for i := range raw {
		raw[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8+8*i:]))
	}
	return a, nil
}
