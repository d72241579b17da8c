package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"

	"github.com/nmfstream/nmfstream/distributed"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/sinks"
)

// This file is serve --nats's step (sample IDs that name the record, so
// that the same id posted to any instance of a namespace is one sample)
// and its /metrics.

// sampleID returns the distributed ID of a record of serve --nats and the
// message id (Nats-Msg-Id) it is published with. A record with an id is
// namespace + "/" + id, the same on every instance, so that JetStream
// stores it once within the samples stream's duplicate window (two
// minutes); a record without one is namespace + "/" + this instance's
// nonce + its offset, its own. The ID is the 64-bit FNV-1a hash of the
// message id with the top bit set (stream --nats's IDs, offset + 1, stay
// below it).
func (ns *natsServer) sampleID(recordID string, offset int64) (uint64, string) {
	msg := ns.s.cfg.Namespace + "/" + recordID
	if recordID == "" {
		msg = ns.s.cfg.Namespace + "/" + ns.nonce + "#" + strconv.FormatInt(offset, 10)
	}
	h := fnv.New64a()
	io.WriteString(h, msg)
	return h.Sum64() | 1<<63, msg
}

// step predicts the batch's usable samples, publishes them (awaiting the
// server's acknowledgements: durable on return) and then the late labels,
// in input order, as natsStream.step does, with the IDs of sampleID. It
// returns the predictions of the samples stored now, their offsets, the
// rejects, and the number of samples skipped as duplicates (their id
// stored before, by any instance, or earlier in b). Callers hold ns.mu.
func (ns *natsServer) step(ctx context.Context, b *record.Batch) (res sinks.Results, offs []int64, rejects []record.Reject, dups int, err error) {
	s := ns.s
	s.sum.Records += int64(b.Records())
	s.sum.Rejected += int64(len(b.Rejects))
	samples, rows, rejects, err := s.samplesOf(ctx, b)
	if err != nil || len(samples) == 0 && len(b.LateLabels) == 0 {
		return res, offs, rejects, 0, err
	}
	if err := ns.prepare(ctx, b, rows); err != nil {
		return res, offs, rejects, 0, err
	}
	res, offs, preds, err := s.predict(ctx, b, rows, samples)
	if err != nil {
		return res, offs, rejects, 0, err
	}
	msgIDs := make([]string, len(samples))
	for j, i := range rows {
		samples[j].ID, msgIDs[j] = ns.sampleID(b.IDs[i], b.Offsets[i])
		if b.Labeled[i] {
			samples[j].Label, _ = s.classes.Class(b.Labels[i])
		}
	}
	dup, err := s.pub.PublishIDs(ctx, samples, msgIDs)
	if err != nil {
		return res, offs, rejects, 0, err
	}
	// Keep what was stored now: a duplicate is neither a sample nor a
	// prediction.
	var kept sinks.Results
	var keptOffs []int64
	k := 0
	for j := range samples {
		if dup[j] {
			dups++
			continue
		}
		rows[k], samples[k], preds[k] = rows[j], samples[j], preds[j]
		kept.IDs, kept.Preds, kept.Scores = append(kept.IDs, res.IDs[j]), append(kept.Preds, res.Preds[j]), append(kept.Scores, res.Scores[j])
		keptOffs = append(keptOffs, offs[j])
		k++
	}
	labels, err := s.preq.Apply(b, rows[:k], samples[:k], preds[:k], s.classes)
	if err != nil {
		return kept, keptOffs, rejects, dups, err
	}
	labels = append(labels, ns.forward(b)...)
	for _, l := range labels {
		if err := s.pub.Label(ctx, l.ID, l.Class); err != nil {
			return kept, keptOffs, rejects, dups, err
		}
	}
	return kept, keptOffs, rejects, dups, nil
}

// forward returns the late labels of b for record ids this instance has
// not seen, with the IDs sampleID gives them: the sample may have been
// posted to another instance of the namespace, and Publisher.Label sends
// a label for a sample it did not place to every partition, whose owner
// sets it if it holds the sample. Apply counted them unknown (here).
func (ns *natsServer) forward(b *record.Batch) []distributed.Labeled {
	var out []distributed.Labeled
	for _, ll := range b.LateLabels {
		if ll.ID == "" || ns.s.preq.Seen(ll.ID) {
			continue
		}
		c, ok := ns.s.classes.Class(ll.Label)
		if !ok {
			continue // prepare placed every label of b: not reached
		}
		id, _ := ns.sampleID(ll.ID, 0)
		out = append(out, distributed.Labeled{ID: id, Class: c})
	}
	return out
}

// prepare waits until the owners hold everything this instance published,
// reads the partitioner, and places the batch's labels in the namespace's
// class table.
func (ns *natsServer) prepare(ctx context.Context, b *record.Batch, rows []int) error {
	s := ns.s
	if err := s.settle(ctx); err != nil {
		return err
	}
	if s.part == nil {
		var err error
		if s.part, err = s.pub.Partitioner(ctx); err != nil {
			return err
		}
	}
	var names []string
	for _, i := range rows {
		if b.Labeled[i] {
			names = append(names, b.Labels[i])
		}
	}
	for _, ll := range b.LateLabels {
		names = append(names, ll.Label)
	}
	return s.classes.Learn(ctx, names)
}

// handleMetrics answers GET /metrics: serve's Prometheus text and metric
// names where they apply, and the live workers of the namespace.
func (ns *natsServer) handleMetrics(w http.ResponseWriter, r *http.Request) {
	ns.mu.Lock()
	c, dups, preds, pending := ns.s.summary(), ns.dups, ns.predictions, ns.s.preq.Pending()
	ns.mu.Unlock()
	var b strings.Builder
	metric := func(name, typ, help string, v float64) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n%s %s\n", name, help, name, typ, name, promFloat(v))
	}
	metric("nmfstream_requests_total", "counter", "POST requests answered (records and labels).", float64(ns.requests.Load()))
	metric("nmfstream_records_total", "counter", "Input records consumed (samples, late labels, duplicates, rejects).", float64(c.Records))
	metric("nmfstream_samples_total", "counter", "Samples published to the namespace by this instance.", float64(c.Samples))
	metric("nmfstream_predictions_total", "counter", "Arrival predictions answered with a class.", float64(preds))
	metric("nmfstream_rejected_total", "counter", "Records that could not be used.", float64(c.Rejected))
	metric("nmfstream_duplicates_total", "counter", "Samples skipped because their id was stored within the samples stream's duplicate window (by any instance).", float64(dups))
	metric("nmfstream_late_labels_total", "counter", "Labels that arrived without features.", float64(c.LateLabels))
	metric("nmfstream_unknown_labels_total", "counter", "Late labels for no sample seen.", float64(c.UnknownLabels))
	metric("nmfstream_labeled_total", "counter", "Arrival predictions scored against a known label (samples that arrived after the first label).", float64(c.Labeled))
	metric("nmfstream_early_total", "counter", "Labeled samples that arrived before any label was known: not scored.", float64(c.Early))
	metric("nmfstream_correct_total", "counter", "Scored predictions that were right.", float64(c.Correct))
	metric("nmfstream_accuracy", "gauge", "Prequential accuracy of the answered predictions.", float64(c.Accuracy))
	metric("nmfstream_pending_labels", "gauge", "Arrival predictions waiting for their label.", float64(pending))
	metric("nmfstream_workers", "gauge", "Live workers of the namespace (heartbeats within the pinned TTL).", float64(ns.watch.Live()))
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	io.WriteString(w, b.String())
}

// newNonce returns 64 random bits in hex: an instance's name in the
// message ids of its records without an id.
func newNonce() string {
	return strconv.FormatUint(rand.Uint64(), 16)
}
