package distributed

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/stages"
)

// The wire forms of the chain on the owners (distributed/DESIGN.md, "The
// chain on the owners"): a driver's batch share for one partition
// (wireBatch, the stages.Features the driver's featurize stage made) and
// an owner's answer (wireStep, the stages.Step its Learner made). Both
// travel in binary forms of their own (chain_batch.go, chain_answer.go;
// gob before); float64 values travel as their bits, so an owner's Learner
// sees the driver's rows exactly.

// wireReject is a record.Reject with its reason as text.
type wireReject struct {
	Offset int64
	ID     string
	Reason string
	// NoFeatures: a record without features (record.ErrNoFeatures), which
	// the owner's Learner still predicts (stages.Step.Featureless).
	NoFeatures bool
}

func rejectsToWire(rs []record.Reject) []wireReject {
	out := make([]wireReject, len(rs))
	for i, r := range rs {
		out[i] = wireReject{Offset: r.Offset, ID: r.ID, Reason: r.Reason.Error(), NoFeatures: errors.Is(r.Reason, record.ErrNoFeatures)}
	}
	return out
}

func rejectsFromWire(ws []wireReject) []record.Reject {
	if len(ws) == 0 {
		return nil
	}
	out := make([]record.Reject, len(ws))
	for i, w := range ws {
		out[i] = record.Reject{Offset: w.Offset, ID: w.ID, Reason: errors.New(w.Reason)}
		if w.NoFeatures {
			out[i].Reason = record.NoFeatures(w.Reason)
		}
	}
	return out
}

// wireBatch is one partition's share of a driver's batch.
type wireBatch struct {
	Dim int
	// Rows is "dense", "sparse" or "" (no feature matrix).
	Rows string
	// Dense holds the rows of a dense X, row-major (n×Dim).
	Dense []float64
	// Ptr, Ind and Val hold a sparse X's rows (CSR).
	Ptr        []int
	Ind        []int
	Val        []float64
	Text       []string
	IDs        []string
	Labels     []string
	Labeled    []bool
	Offsets    []int64
	LateLabels []record.LateLabel
	Rejects    []wireReject
	Unusable   []wireReject
	// Context is the encoded context of the share (encodeShare), empty
	// without one.
	Context []byte
}

// encodeShare returns the wire form of a partition's share f and its
// context ctx (nil for none): labeled samples of other partitions, which
// the owner learns from but does not predict for the driver nor count
// (distributed/DESIGN.md, "Labels across partitions").
func encodeShare(f, ctx *stages.Features) ([]byte, error) {
	var c []byte
	if ctx != nil {
		var err error
		if c, err = encodeFeatures(ctx, nil); err != nil {
			return nil, err
		}
	}
	return encodeFeatures(f, c)
}

// decodeShare reads encodeShare's bytes: the share, and its context or
// nil.
func decodeShare(raw []byte) (f, ctx *stages.Features, err error) {
	w, f, err := decodeFeatures(raw)
	if err != nil || len(w.Context) == 0 {
		return f, nil, err
	}
	if _, ctx, err = decodeFeatures(w.Context); err != nil {
		return nil, nil, fmt.Errorf("context: %w", err)
	}
	return f, ctx, nil
}

// encodeFeatures returns the wire form of f with the encoded context c.
func encodeFeatures(f *stages.Features, c []byte) ([]byte, error) {
	w := wireBatch{Context: c, Dim: f.Dim, Text: f.Text, IDs: f.IDs, Labels: f.Labels, Labeled: f.Labeled, Offsets: f.Offsets,
		LateLabels: f.LateLabels, Rejects: rejectsToWire(f.Rejects), Unusable: rejectsToWire(f.Unusable)}
	if f.X != nil {
		d, n := f.X.Dims()
		w.Dim = d
		switch x := model.Rows(f.X).(type) {
		case *mat.Dense:
			w.Rows = "dense"
			w.Dense = make([]float64, 0, n*d)
			for i := range n {
				w.Dense = append(w.Dense, x.RawRowView(i)...)
			}
		case *sparse.CSR:
			w.Rows = "sparse"
			w.Ptr = make([]int, 1, n+1)
			for i := range n {
				ind, val := x.Row(i)
				w.Ind, w.Val = append(w.Ind, ind...), append(w.Val, val...)
				w.Ptr = append(w.Ptr, len(w.Ind))
			}
		default:
			return nil, fmt.Errorf("distributed: batch rows of type %T", x)
		}
	}
	return appendBatch(make([]byte, 0, w.size()), &w), nil
}

// size bounds the length of w's binary form (appendBatch): floats take 8
// bytes, integers and lengths at most 10 (varints), strings their bytes
// and a length.
func (w *wireBatch) size() int {
	strs := func(ss []string) int {
		n := 10
		for _, s := range ss {
			n += 10 + len(s)
		}
		return n
	}
	n := 64 + len(w.Rows) + len(w.Context) + 8*(len(w.Dense)+len(w.Val)) + 10*(len(w.Ptr)+len(w.Ind)+len(w.Offsets)) + len(w.Labeled)
	n += strs(w.Text) + strs(w.IDs) + strs(w.Labels)
	for _, l := range w.LateLabels {
		n += 30 + len(l.ID) + len(l.Label)
	}
	for _, rs := range [][]wireReject{w.Rejects, w.Unusable} {
		for _, r := range rs {
			n += 30 + len(r.ID) + len(r.Reason)
		}
	}
	return n + 7*10
}

// decodeFeatures returns the stages.Features of a wire batch, or an error
// (wrapping errCorrupt) naming what is inconsistent.
func decodeFeatures(raw []byte) (*wireBatch, *stages.Features, error) {
	var w wireBatch
	if len(raw) >= len(batchMagic) && ([3]byte(raw[:3]) == batchMagic || [3]byte(raw[:3]) == batchMagicV1) {
		if err := readBatch(raw[3:], &w, raw[2]); err != nil {
			return nil, nil, err
		}
	} else if err := gob.NewDecoder(bytes.NewReader(raw)).Decode(&w); err != nil {
		return nil, nil, corrupt("batch: %v", err)
	}
	f, err := w.features()
	return &w, f, err
}

// features returns the stages.Features of w, checked.
func (w *wireBatch) features() (*stages.Features, error) {
	n := len(w.Offsets)
	if len(w.IDs) != n || len(w.Labels) != n || len(w.Labeled) != n || w.Text != nil && len(w.Text) != n {
		return nil, corrupt("batch: %d offsets, %d ids, %d labels, %d labeled flags, %d documents", n, len(w.IDs), len(w.Labels), len(w.Labeled), len(w.Text))
	}
	f := &stages.Features{Dim: w.Dim, Text: w.Text, IDs: w.IDs, Labels: w.Labels, Labeled: w.Labeled, Offsets: w.Offsets,
		LateLabels: w.LateLabels, Rejects: rejectsFromWire(w.Rejects), Unusable: rejectsFromWire(w.Unusable)}
	switch w.Rows {
	case "":
		if n > 0 && w.Text == nil {
			return nil, corrupt("batch: %d samples and no rows", n)
		}
	case "dense":
		if w.Dim < 1 || len(w.Dense) != n*w.Dim {
			return nil, corrupt("batch: %d dense values for %d samples of dimension %d", len(w.Dense), n, w.Dim)
		}
		f.X = model.DenseRows(mat.NewDense(n, w.Dim, w.Dense))
	case "sparse":
		if len(w.Ptr) != n+1 || w.Ptr[n] != len(w.Ind) || len(w.Ind) != len(w.Val) {
			return nil, corrupt("batch: sparse rows of %d pointers, %d indices and %d values for %d samples", len(w.Ptr), len(w.Ind), len(w.Val), n)
		}
		m := sparse.Zeros(0, w.Dim)
		for i := range n {
			lo, hi := w.Ptr[i], w.Ptr[i+1]
			if lo > hi {
				return nil, corrupt("batch: sparse row %d has pointers %d > %d", i, lo, hi)
			}
			for _, j := range w.Ind[lo:hi] {
				if j < 0 || j >= w.Dim {
					return nil, corrupt("batch: sparse row %d has feature %d outside [0, %d)", i, j, w.Dim)
				}
			}
			m.AppendRow(w.Ind[lo:hi], w.Val[lo:hi])
		}
		f.X = model.SparseRows(m)
	default:
		return nil, corrupt("batch: rows %q", w.Rows)
	}
	return f, nil
}

// wireStep is an owner's answer for one batch: its Learner's Step and its
// counters after the batch.
type wireStep struct {
	IDs        []string
	Offsets    []int64
	Labels     []string
	Scores     []float64
	Rejects    []wireReject
	Duplicates []int64
	Counters   stages.Counters
	Scored     stages.Scores
	Pending    int
	// Confusion is the owner's counts behind Scored, which the driver
	// adds over the partitions (absent in answers before 2026-11-29).
	Confusion stages.Confusion
	// LabelsWaited, LabelsWaiting and LabelsForgotten are the owner's
	// counts of the batch's late labels (ChainStep's fields of the same
	// names, learnCounted); zero in answers before version 4
	// (answerMagicV4).
	LabelsWaited    int
	LabelsWaiting   int
	LabelsForgotten int64
	// LabelsReplaced is ChainStep's field of the same name
	// (stages.Replaced); empty in answers before version 4.
	LabelsReplaced []ReplacedLabel
}

// encodeStep is encodeStepLabels with no label counts and no replaced
// labels (st.Waited is not read).
func encodeStep(st *stages.Step, c stages.Counters, sc stages.Scores, conf stages.Confusion, pending int) ([]byte, error) {
	s := *st
	s.Waited = nil
	return encodeStepLabels(&s, c, sc, conf, pending, labelCounts{})
}

// encodeStepLabels returns the binary form (chain_answer.go) of an
// owner's answer: the batch's Step st, its Learner's counters c, scores
// sc, confusion conf and pending labels after the batch, and the counts lc
// of the batch's late labels, with the waiting ones st.Waited shows
// replaced.
func encodeStepLabels(st *stages.Step, c stages.Counters, sc stages.Scores, conf stages.Confusion, pending int, lc labelCounts) ([]byte, error) {
	w := wireStep{Rejects: rejectsToWire(st.Rejects), Duplicates: st.Duplicates, Counters: c, Scored: sc, Pending: pending, Confusion: conf,
		LabelsWaited: lc.Waited, LabelsWaiting: lc.Waiting, LabelsForgotten: lc.Forgotten, LabelsReplaced: stages.Replaced(st.Waited)}
	// The predictions of records without features travel with the
	// samples'; the driver tells them by their rejects' offsets (merge).
	for _, p := range append(slices.Clip(st.Predictions), st.Featureless...) {
		w.IDs = append(w.IDs, p.ID)
		w.Offsets = append(w.Offsets, p.Offset)
		w.Labels = append(w.Labels, p.Label)
		w.Scores = append(w.Scores, p.Score)
	}
	return appendAnswer(nil, &w), nil
}

// decodeStep reads an answer: its binary form (chain_answer.go), or gob,
// the form before it.
func decodeStep(raw []byte) (*wireStep, error) {
	var w wireStep
	if len(raw) >= len(answerMagic) && slices.Contains([][3]byte{answerMagicV4, answerMagic, answerMagicV2, answerMagicV1}, [3]byte(raw[:3])) {
		if err := readAnswer(raw[3:], &w, raw[2]); err != nil {
			return nil, err
		}
	} else if err := gob.NewDecoder(bytes.NewReader(raw)).Decode(&w); err != nil {
		return nil, corrupt("step: %v", err)
	}
	n := len(w.IDs)
	if len(w.Offsets) != n || len(w.Labels) != n || len(w.Scores) != n {
		return nil, corrupt("step: %d ids, %d offsets, %d labels, %d scores", n, len(w.Offsets), len(w.Labels), len(w.Scores))
	}
	return &w, nil
}

// Chunks (distributed/DESIGN.md, "The chain on the owners", *Messages.*).
// A share or an answer larger than what the connection can carry (the
// server's max_payload, less room for the headers) travels as n ≥ 2
// consecutive messages on its subject, chunk i (from 0) holding bytes
// [i·c, (i+1)·c) of the payload, each with the message's own headers and
// hdrChunk = i, hdrChunks = n, and the message id "<id>.<i>" (id the
// whole message's, chainMsgID), so that JetStream's de-duplication drops
// a chunk published again as it drops a whole message. A message without
// hdrChunks is whole, as every message before chunks was. A chunk's
// payload is a slice of the whole one (no copy on the publishing side).
const (
	hdrChunk  = "Nmf-Chunk"
	hdrChunks = "Nmf-Chunks"
)

// chainDuplicates is the chain's streams' duplicate window (setupChain): a
// message id published again within it is dropped, after it stored again.
const chainDuplicates = 2 * time.Minute

// chunkRoom is the bytes kept in a chunk for what its headers add beyond
// the message's own: the message id and the two chunk headers, with
// "NATS/1.0" and the line ends (about 120 bytes with 20-digit numbers).
const chunkRoom = 256

// splitMsg returns the messages that carry msg under the message id id on
// a connection whose largest message (headers and payload) is maxPayload
// bytes (nats.Conn.MaxPayload; 0 when unknown, then msg goes whole): msg
// itself when it fits, else its chunks, with their ids. Every message
// returned has headers of its own (jetstream.WithMsgID writes into them).
func splitMsg(msg *nats.Msg, id string, maxPayload int64) ([]*nats.Msg, []string) {
	room := chunkRoom + len(id)
	for k, vs := range msg.Header {
		for _, v := range vs {
			room += len(k) + len(v) + 4 // "k: v\r\n"
		}
	}
	c := int(maxPayload) - room
	if maxPayload <= 0 || len(msg.Data) <= c {
		return []*nats.Msg{msg}, []string{id}
	}
	c = max(c, 1)
	n := (len(msg.Data) + c - 1) / c
	msgs, ids := make([]*nats.Msg, n), make([]string, n)
	for i := range n {
		h := make(nats.Header, len(msg.Header)+3)
		for k, vs := range msg.Header {
			h[k] = slices.Clone(vs)
		}
		h.Set(hdrChunk, strconv.Itoa(i))
		h.Set(hdrChunks, strconv.Itoa(n))
		msgs[i] = &nats.Msg{Subject: msg.Subject, Header: h, Data: msg.Data[i*c : min((i+1)*c, len(msg.Data))]}
		ids[i] = id + "." + strconv.Itoa(i)
	}
	return msgs, ids
}

// publishChunked publishes msg under the message id id, in chunks when
// it is larger than js's connection carries (splitMsg), one after the
// other, each acknowledged before the next.
func publishChunked(ctx context.Context, js jetstream.JetStream, msg *nats.Msg, id string) error {
	msgs, ids := splitMsg(msg, id, js.Conn().MaxPayload())
	for i, m := range msgs {
		if _, err := js.PublishMsg(ctx, m, jetstream.WithMsgID(ids[i])); err != nil {
			return err
		}
	}
	return nil
}

// maxChunks bounds the chunks of one message that a reader accepts (and
// so the slots it allocates for them): 2¹⁶ chunks of a 1 MiB server carry
// 64 GiB, far beyond any share or answer of a driver's batch.
const maxChunks = 1 << 16

// chunkOf returns the chunk headers of h: chunk i of n, or n = 0 for a
// whole message; malformed ones are an error wrapping errCorrupt.
func chunkOf(h nats.Header) (i, n int, err error) {
	s := h.Get(hdrChunks)
	if s == "" {
		return 0, 0, nil
	}
	n, err1 := strconv.Atoi(s)
	i, err2 := strconv.Atoi(h.Get(hdrChunk))
	if err1 != nil || err2 != nil || n < 1 || n > maxChunks || i < 0 || i >= n {
		return 0, 0, corrupt("chunk %q of %q", h.Get(hdrChunk), s)
	}
	return i, n, nil
}

// partial is a message being reassembled from its chunks (chunkOf): the
// payloads read so far by chunk number, the least stream sequence of
// those chunks, and when the server stored the latest of them.
type partial struct {
	parts [][]byte
	got   []bool
	have  int
	first uint64
	stamp time.Time
}

func newPartial(n int) *partial { return &partial{parts: make([][]byte, n), got: make([]bool, n)} }

// add keeps chunk i's payload data (stored at stream sequence seq and time
// stamp; a chunk read twice, published again, is kept once) and returns
// the whole payload once every chunk is read, else nil and false.
func (a *partial) add(i int, data []byte, seq uint64, stamp time.Time) ([]byte, bool) {
	if a.first == 0 || seq < a.first {
		a.first = seq
	}
	if stamp.After(a.stamp) {
		a.stamp = stamp
	}
	if !a.got[i] {
		a.parts[i], a.got[i] = data, true
		a.have++
	}
	if a.have < len(a.parts) {
		return nil, false
	}
	return bytes.Join(a.parts, nil), true
}
