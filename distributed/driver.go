package distributed

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/stages"
)

// This file is the glue of a driver of the distributed learner (stream
// --nats, serve --nats): the namespace's class table, the shared document
// frequencies, the vote over the owners' neighbours, and the prequential
// bookkeeping, scored with the stream's scorer (stages.Scorer).

// sharedClassesKey names the namespace's class table (UpdateShared).
const sharedClassesKey = "classes"

// ClassTable is a driver's copy of the namespace's class table: the labels
// in order of first appearance on any driver of the namespace, kept in the
// model bucket, so that a class index, which the owners hold and answer
// with, means one label for every driver. It is not safe for concurrent
// use.
type ClassTable struct {
	pub     *Publisher
	classes map[string]int // class index of each label
	names   []string       // label of each class index
}

// NewClassTable returns an empty copy of the namespace's class table, read
// and extended through pub.
func NewClassTable(pub *Publisher) *ClassTable {
	return &ClassTable{pub: pub, classes: map[string]int{}}
}

// Learn adds the labels this copy lacks to the namespace's table, and reads
// it. It costs a round trip to the model bucket when a label is new here.
func (t *ClassTable) Learn(ctx context.Context, labels []string) error {
	var add []string
	for _, l := range labels {
		if _, ok := t.classes[l]; !ok && !slices.Contains(add, l) {
			add = append(add, l)
		}
	}
	if len(add) == 0 {
		return nil
	}
	return t.Sync(ctx, add)
}

// Sync reads the namespace's table, appending the labels of add that it
// lacks (a compare-and-set), and makes it this copy.
func (t *ClassTable) Sync(ctx context.Context, add []string) error {
	var names []string
	err := t.pub.UpdateShared(ctx, sharedClassesKey, func(old []byte) ([]byte, bool, error) {
		names = nil
		if old != nil {
			if err := json.Unmarshal(old, &names); err != nil {
				return nil, false, fmt.Errorf("the shared class table: %w", err)
			}
		}
		n := len(names)
		for _, l := range add {
			if !slices.Contains(names, l) {
				names = append(names, l)
			}
		}
		if len(names) == n {
			return nil, false, nil
		}
		raw, err := json.Marshal(names)
		return raw, err == nil, err
	})
	if err != nil {
		return err
	}
	t.set(names)
	return nil
}

func (t *ClassTable) set(names []string) {
	t.names = names
	clear(t.classes)
	for c, l := range names {
		t.classes[l] = c
	}
}

// Class returns the index of label, which Learn must have placed.
func (t *ClassTable) Class(label string) (int, bool) {
	c, ok := t.classes[label]
	return c, ok
}

// Name returns the label of class c, "" for a class this copy does not hold.
func (t *ClassTable) Name(c int) string {
	if c < 0 || c >= len(t.names) {
		return ""
	}
	return t.names[c]
}

// Len returns the number of classes this copy holds.
func (t *ClassTable) Len() int { return len(t.names) }

// SharedDFKey names the shared document frequencies (UpdateShared,
// SharedRows).
const SharedDFKey = "tfidf"

// SharedRows returns the TF-IDF rows of the usable documents of b, their
// positions in b and a *stages.RowError for each unusable one, as
// stages.Featurize.Rows does, with the vectorizer kept in the namespace's
// model bucket: b's document frequencies are added to it and its rows
// computed in one compare-and-set, so the drivers of one namespace see one
// sequence of batches, each vectorized with the counts of the batches
// before it and its own.
func (p *Publisher) SharedRows(ctx context.Context, b *record.Batch) (model.Data, []int, []error, error) {
	var (
		x    model.Data
		keep []int
		bad  []error
	)
	err := p.UpdateShared(ctx, SharedDFKey, func(old []byte) ([]byte, bool, error) {
		t := stages.DefaultStreamTFIDF()
		if old != nil {
			if err := t.UnmarshalBinary(old); err != nil {
				return nil, false, fmt.Errorf("the shared document frequencies: %w", err)
			}
		}
		before := t.NDocs()
		f := stages.Featurize{TFIDF: t}
		x, keep, bad = f.Rows(b)
		if t.NDocs() == before {
			return nil, false, nil // the batch's documents were not counted: nothing to share
		}
		raw, err := t.MarshalBinary()
		return raw, err == nil, err
	})
	return x, keep, bad, err
}

// Vote returns the class with the largest sum of weights 1/(distance +
// eps) among the neighbours, each voting for its label or, if it has class
// scores (SpreadNeighbors), for every class by its score, and the class's
// share of the total (−1 and NaN for no neighbour).
func Vote(nb []Neighbor) (int, float64) {
	const eps = 1e-9 // keeps an exact duplicate's weight finite
	w := map[int]float64{}
	var total float64
	for _, x := range nb {
		v := 1 / (math.Sqrt(x.SqDist) + eps)
		total += v
		if x.Classes == nil {
			w[x.Label] += v
			continue
		}
		for c, p := range x.Classes {
			w[c] += v * p
		}
	}
	best, bw := -1, 0.0
	for c, v := range w {
		if v > bw || (v == bw && c < best) {
			best, bw = c, v
		}
	}
	if best < 0 {
		return -1, math.NaN()
	}
	return best, bw / total
}

// Prequential is a driver's prequential bookkeeping: the distributed ID of
// each record id seen, the arrival predictions waiting for their label,
// and their scores (Scorer, the stream's). It owns them; Apply costs O(1)
// per record. It is not safe for concurrent use.
type Prequential struct {
	// Scorer scores each arrival prediction once, when its label is known.
	Scorer stages.Scorer
	// Samples, LateLabels and UnknownLabels count the samples applied, the
	// label-only records, and those of them for no sample seen.
	Samples, LateLabels, UnknownLabels int64

	ids       map[string]uint64 // the distributed ID of each record id
	pending   map[uint64]int    // arrival predictions waiting for a label: class, or stages.BeforeLabels
	seenLabel bool
}

// Pending returns the number of arrival predictions waiting for their
// label.
func (q *Prequential) Pending() int { return len(q.pending) }

// Seen reports whether a sample with this record id went through Apply.
func (q *Prequential) Seen(recordID string) bool {
	_, ok := q.ids[recordID]
	return ok
}

// Labeled is a label to publish for a sample already published.
type Labeled struct {
	ID    uint64 // the sample's distributed ID
	Class int
}

// Apply applies b's samples (samples, published with their classes set
// by Apply, one per batch row rows[j], predicted preds[j]: a class or
// stages.NoPrediction) and b's label-only records in input order: a
// sample labeled with it, or later, scores its arrival prediction; a
// prediction made before any label of the stream is not scored. It returns
// the labels to publish after the samples. Every label of b must be in
// classes (ClassTable.Learn).
func (q *Prequential) Apply(b *record.Batch, rows []int, samples []Sample, preds []int, classes *ClassTable) ([]Labeled, error) {
	if q.ids == nil {
		q.ids, q.pending = map[string]uint64{}, map[uint64]int{}
	}
	class := func(label string) (int, error) {
		c, ok := classes.Class(label)
		if !ok {
			return 0, fmt.Errorf("distributed: label %q not in the class table", label)
		}
		return c, nil
	}
	var labels []Labeled
	n := len(samples)
	for j, li := 0, 0; j < n || li < len(b.LateLabels); {
		if li < len(b.LateLabels) && (j == n || b.LateLabels[li].Offset < b.Offsets[rows[j]]) {
			ll := b.LateLabels[li]
			li++
			q.LateLabels++
			q.seenLabel = true
			id, ok := q.ids[ll.ID]
			if !ok {
				q.UnknownLabels++
				continue
			}
			c, err := class(ll.Label)
			if err != nil {
				return nil, err
			}
			if p, ok := q.pending[id]; ok {
				q.Scorer.Score(p, c)
				delete(q.pending, id)
			}
			labels = append(labels, Labeled{id, c})
			continue
		}
		i := rows[j]
		q.Samples++
		id := samples[j].ID
		if b.IDs[i] != "" {
			q.ids[b.IDs[i]] = id
		}
		p := preds[j]
		if !q.seenLabel {
			p = stages.BeforeLabels
		}
		if b.Labeled[i] {
			c, err := class(b.Labels[i])
			if err != nil {
				return nil, err
			}
			q.Scorer.Score(p, c)
			q.seenLabel = true
			samples[j].Label = c
		} else if b.IDs[i] != "" {
			q.pending[id] = p
		}
		j++
	}
	return labels, nil
}

// WorkerWatch counts the live Workers of a namespace from their heartbeats
// (each carries 8 bytes naming its Worker, every quarter of PinnedTTL). A
// Worker is live while its last heartbeat is younger than the namespace's
// PinnedTTL. It is safe for concurrent use; Stop ends it.
type WorkerWatch struct {
	ttl time.Duration
	sub *nats.Subscription

	mu   sync.Mutex
	seen map[string]time.Time // when each Worker's last heartbeat arrived
}

// WatchWorkers starts counting the live Workers of cfg's namespace on nc.
func WatchWorkers(nc *nats.Conn, cfg Config) (*WorkerWatch, error) {
	w := &WorkerWatch{ttl: cfg.pinnedTTL(), seen: map[string]time.Time{}}
	sub, err := nc.Subscribe(cfg.names().tickSubject(), func(m *nats.Msg) {
		if len(m.Data) == 0 {
			return // a Worker of a version that did not name itself
		}
		w.mu.Lock()
		w.seen[string(m.Data)] = time.Now()
		w.mu.Unlock()
	})
	if err != nil {
		return nil, fmt.Errorf("distributed: heartbeats of namespace %q: %w", cfg.namespace(), err)
	}
	w.sub = sub
	return w, nil
}

// Live returns the number of Workers heard within the last PinnedTTL,
// and forgets the others.
func (w *WorkerWatch) Live() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, t := range w.seen {
		if time.Since(t) > w.ttl {
			delete(w.seen, k)
		}
	}
	return len(w.seen)
}

// Stop ends the watch.
func (w *WorkerWatch) Stop() { w.sub.Unsubscribe() }
