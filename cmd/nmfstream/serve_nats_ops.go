package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"

	"github.com/nmfstream/nmfstream/distributed"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/sinks"
	"github.com/nmfstream/nmfstream/stages"
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

// natsStep is what serve --nats's step did with a batch: the predictions
// of the samples stored now, their offsets, the rejects, the samples
// skipped as duplicates and the late labels for ids this instance had not
// seen.
type natsStep struct {
	res           sinks.Results
	offs          []int64
	rejects       []record.Reject
	dups, unknown int
}

// step predicts the batch's usable samples, publishes them (awaiting the
// server's acknowledgements: durable on return) and then the late labels,
// in input order, as natsStream.step does, with the IDs of sampleID. A
// sample whose id was stored before (by any instance, or earlier in b)
// is a duplicate: neither a sample nor a prediction. Requests run it
// concurrently: it holds ns.mu for the driver's state (featurizer, class
// table, prequential counters) and not while it waits for the server or
// the owners (settle, neighbours, publish).
func (ns *natsServer) step(ctx context.Context, b *record.Batch) (st natsStep, err error) {
	s := ns.s
	ns.mu.Lock()
	s.sum.Records += int64(b.Records())
	s.sum.Rejected += int64(len(b.Rejects))
	samples, rows, rejects, err := s.samplesOf(ctx, b)
	st.rejects = rejects
	if err == nil {
		err = s.learnClasses(ctx, b, rows)
	}
	ns.mu.Unlock()
	if err != nil || len(samples) == 0 && len(b.LateLabels) == 0 {
		return st, err
	}
	if err := s.settle(ctx); err != nil {
		return st, err
	}
	preds, err := ns.predict(ctx, b, rows, samples, &st)
	if err != nil {
		return st, err
	}
	dup, err := s.pub.PublishIDs(ctx, samples, ns.ids(b, rows, samples))
	if err != nil {
		return st, err
	}
	ns.mu.Lock()
	k := 0
	for j := range samples {
		if dup[j] {
			st.dups++
			continue
		}
		rows[k], samples[k], preds[k] = rows[j], samples[j], preds[j]
		st.res.IDs, st.res.Preds, st.res.Scores = st.res.IDs[:k+1], st.res.Preds[:k+1], st.res.Scores[:k+1]
		st.res.IDs[k], st.res.Preds[k], st.res.Scores[k], st.offs[k] = st.res.IDs[j], st.res.Preds[j], st.res.Scores[j], st.offs[j]
		k++
	}
	st.res.IDs, st.res.Preds, st.res.Scores, st.offs = st.res.IDs[:k], st.res.Preds[:k], st.res.Scores[:k], st.offs[:k]
	before := s.preq.UnknownLabels
	labels, err := s.preq.Apply(b, rows[:k], samples[:k], preds[:k], s.classes)
	st.unknown = int(s.preq.UnknownLabels - before)
	labels = append(labels, ns.forward(b)...)
	ns.dups += int64(st.dups)
	for _, p := range st.res.Preds {
		if p != "" {
			ns.predictions++
		}
	}
	ns.mu.Unlock()
	for _, l := range labels {
		if err == nil {
			err = s.pub.Label(ctx, l.ID, l.Class)
		}
	}
	return st, err
}

// ids sets the samples' IDs (sampleID) and the classes of the labeled
// ones, and returns their message ids. It takes ns.mu.
func (ns *natsServer) ids(b *record.Batch, rows []int, samples []distributed.Sample) []string {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	msgIDs := make([]string, len(samples))
	for j, i := range rows {
		samples[j].ID, msgIDs[j] = ns.sampleID(b.IDs[i], b.Offsets[i])
		if b.Labeled[i] {
			samples[j].Label, _ = ns.s.classes.Class(b.Labels[i])
		}
	}
	return msgIDs
}

// predict asks the owners for each sample's neighbours (without ns.mu)
// and returns their vote (distributed.Vote) as natsStream.predict does,
// filling st's predictions and offsets.
func (ns *natsServer) predict(ctx context.Context, b *record.Batch, rows []int, samples []distributed.Sample, st *natsStep) ([]int, error) {
	s := ns.s
	n := len(samples)
	st.res = sinks.Results{IDs: make([]string, n), Preds: make([]string, n), Scores: make([]float64, n)}
	st.offs = make([]int64, n)
	preds := make([]int, n)
	ns.mu.Lock()
	part := s.part
	ns.mu.Unlock()
	for j := range samples {
		st.res.IDs[j], st.offs[j] = b.IDs[rows[j]], b.Offsets[rows[j]]
		preds[j], st.res.Scores[j] = stages.NoPrediction, math.NaN()
		if part == nil {
			continue
		}
		nb, err := s.ask(ctx, s.nc, s.cfg, part, samples[j], s.vote, s.probes)
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", b.Offsets[rows[j]], err)
		}
		c, score := distributed.Vote(nb)
		ns.mu.Lock()
		if c >= s.classes.Len() {
			// A class another driver placed since this one last read.
			err = s.classes.Sync(ctx, nil)
		}
		if c >= 0 && c < s.classes.Len() {
			preds[j], st.res.Preds[j], st.res.Scores[j] = c, s.classes.Name(c), score
		}
		ns.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
	return preds, nil
}

// forward returns the late labels of b for record ids this instance has
// not seen, with the IDs sampleID gives them: the sample may have been
// posted to another instance of the namespace, and Publisher.Label sends
// a label for a sample it did not place to every partition, whose owner
// sets it if it holds the sample. Apply counted them unknown (here).
// Callers hold ns.mu.
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
