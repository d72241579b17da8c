package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"

	"github.com/nmfstream/nmfstream/record"

	"github.com/nmfstream/nmfstream/sources"
)

// peerNames are the built-in peers of accuracy --peer, with what they
// predict for a sample on arrival.
var peerNames = map[string]string{
	"knn":  "incremental raw 1-NN: the label of the nearest sample (Euclidean, on the input's dense features) whose label arrived before",
	"last": "the last label that arrived (the no-change classifier)",
}

// streamEvent is one record of a stream in input order: a sample (with
// its features for dense inputs, and its label if it came with it) or a
// late label for the sample with that id.
type streamEvent struct {
	offset  int64
	id      string
	sample  bool
	row     []float64 // dense features of a sample, nil otherwise
	label   string
	labeled bool
}

// peerPredictions replays the stream at path in record order and returns
// the prediction of the named peer (peerNames) for each sample on its
// arrival, before its own label is known: id → class, "" when the peer has
// no label yet. knn needs dense features. Rejected records are skipped.
// o reads the input (CSV columns).
func peerPredictions(ctx context.Context, path, peer string, o sources.Opener) (map[string]string, error) {
	if _, ok := peerNames[peer]; !ok {
		return nil, fmt.Errorf("%w: --peer %q: the built-in peers are knn and last%s", errUsage, peer, didYouMean(peer, []string{"knn", "last"}))
	}
	events, dense, err := streamEvents(ctx, path, o)
	if err != nil {
		return nil, err
	}
	if peer == "knn" && !dense {
		return nil, fmt.Errorf("--peer knn: %s has no dense features (x): knn compares raw feature vectors; --peer last works on any input", path)
	}
	rows := map[string][]float64{}
	var known [][]float64 // rows of the samples whose label arrived, for knn
	var knownLabels []string
	last := ""
	preds := map[string]string{}
	for _, e := range events {
		if e.sample {
			switch peer {
			case "knn":
				preds[e.id] = nearestLabel(known, knownLabels, e.row)
			case "last":
				preds[e.id] = last
			}
			rows[e.id] = e.row
		}
		if !e.labeled {
			continue
		}
		last = e.label
		if r, ok := rows[e.id]; ok && r != nil {
			known, knownLabels = append(known, r), append(knownLabels, e.label)
		}
	}
	return preds, nil
}

// nearestLabel returns the label of the row of known nearest to x
// (squared Euclidean distance, the first on ties), "" if known is empty.
func nearestLabel(known [][]float64, labels []string, x []float64) string {
	best, bestD := "", math.Inf(1)
	for i, r := range known {
		d := 0.0
		for j, v := range r {
			t := v - x[j]
			d += t * t
			if d >= bestD {
				break
			}
		}
		if d < bestD {
			best, bestD = labels[i], d
		}
	}
	return best
}

// streamEvents reads the records of the stream at path in input order
// (by offset), opened with o, and reports whether its samples are dense.
func streamEvents(ctx context.Context, path string, o sources.Opener) ([]streamEvent, bool, error) {
	if err := csvOnly(o, path); err != nil {
		return nil, false, err
	}
	src, err := o.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, fmt.Errorf("%s: no such file", path)
	}
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	defer src.Close()
	var events []streamEvent
	dense := true
	for src.Next() {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		b := src.Batch()
		for i, off := range b.Offsets {
			e := streamEvent{offset: off, id: b.IDs[i], sample: true, label: b.Labels[i], labeled: b.Labeled[i]}
			if b.Form == record.FormDense && b.Dense != nil {
				e.row = append([]float64(nil), b.Dense.RawRowView(i)...)
			} else {
				dense = false
			}
			events = append(events, e)
		}
		for _, ll := range b.LateLabels {
			events = append(events, streamEvent{offset: ll.Offset, id: ll.ID, label: ll.Label, labeled: true})
		}
	}
	if err := src.Err(); err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	sort.SliceStable(events, func(a, b int) bool { return events[a].offset < events[b].offset })
	return events, dense && len(events) > 0, nil
}
