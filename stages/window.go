package stages

import (
	"math"

	"github.com/nmfstream/nmfstream/model/graph"
)

// Window is the one owner of the window's nodes as the chain sees them: for
// each node of the model's graph (a slot of model.Online.KNN), whether it
// is live, its record id, its class (−1 while unlabeled) and its age (the
// order of insertion). Several stages read it: identify (is an id in the
// window?), predict (the classes of the live nodes) and label (the node of
// an id); only two write it, through unexported methods: the insert stage
// (track, after each factorization step) and the label stage (a node's
// class). Reads cost O(1); track costs O(slots) per batch.
//
// The zero Window is empty and ready to use. A Window is not safe for
// concurrent use: it belongs to the goroutine that owns its Learner.
type Window struct {
	nodes []node         // by node id (graph slot)
	byID  map[string]int // record id → node id, for live nodes
	seq   int            // insertion counter, for age order
}

type node struct {
	live  bool
	id    string
	class int // −1: unlabeled
	seq   int
	// revisits is the number of the linear model's passes the node's
	// label may still take part in (linearRevisits when it is learned).
	revisits int
	// logNorm is ln‖x‖ of the node's sample when normed, that is when
	// the norm is nonzero (logNorms).
	logNorm float64
	normed  bool
}

// setNorm records nm, the Euclidean norm of the node's sample.
func (nd *node) setNorm(nm float64) {
	nd.normed = nm > 0
	nd.logNorm = 0
	if nd.normed {
		nd.logNorm = math.Log(nm)
	}
}

// logNorms returns the sum of ln‖x‖ over the live nodes of nonzero norm
// and their number, in node order (Featurize.MaxNormRatio's reference).
func (w *Window) logNorms() (sum float64, n int) {
	for _, nd := range w.nodes {
		if nd.live && nd.normed {
			sum += nd.logNorm
			n++
		}
	}
	return sum, n
}

// Lookup returns the node of the live sample with record id id.
func (w *Window) Lookup(id string) (n int, ok bool) {
	n, ok = w.byID[id]
	return n, ok
}

// Class returns node n's class, or −1 when n is unlabeled, not live or not
// a node of the window.
func (w *Window) Class(n int) int {
	if n < 0 || n >= len(w.nodes) || !w.nodes[n].live {
		return -1
	}
	return w.nodes[n].class
}

// Len returns the number of live nodes.
func (w *Window) Len() int {
	live := 0
	for _, nd := range w.nodes {
		if nd.live {
			live++
		}
	}
	return live
}

// track records the new nodes ids of the model's graph g, the samples with
// record ids recIDs (one per node, "" for none), and forgets the nodes whose
// slot the graph freed or reused.
func (w *Window) track(g *graph.Graph, ids []int, recIDs []string) {
	if w.byID == nil {
		w.byID = map[string]int{}
	}
	for len(w.nodes) < g.Slots() {
		w.nodes = append(w.nodes, node{class: -1})
	}
	// Nodes whose slot was freed (and maybe reused by this batch).
	reused := make(map[int]bool, len(ids))
	for _, n := range ids {
		reused[n] = true
	}
	for n := range w.nodes {
		if w.nodes[n].live && (!g.Live(n) || reused[n]) {
			if w.nodes[n].id != "" {
				delete(w.byID, w.nodes[n].id)
			}
			w.nodes[n] = node{class: -1}
		}
	}
	for p, n := range ids {
		id := recIDs[p]
		w.nodes[n] = node{live: true, id: id, class: -1, seq: w.seq}
		w.nodes[n].setNorm(g.Norm(n))
		w.seq++
		if id != "" {
			w.byID[id] = n
		}
	}
}

// setClass labels node n with class c, to take part in the linear model's
// next linearRevisits passes.
func (w *Window) setClass(n, c int) {
	w.nodes[n].class = c
	w.nodes[n].revisits = linearRevisits
}
