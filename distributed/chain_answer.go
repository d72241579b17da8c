package distributed

import (
	"encoding/binary"
	"math"

	"github.com/nmfstream/nmfstream/stages"
)

// The binary form of an owner's answer (wireStep): the driver decodes one
// per partition and batch, and gob's decoder compiled wireStep's types
// again for every message, 28% of a driver's CPU on the digits stream
// (BENCHMARKS.md, "Every sample answered, a common start, and the CPU of
// one worker"). Layout, after the 3 bytes answerMagic: the predictions'
// count, then each one's id, offset, label and score; the rejects' count,
// then each one's offset, id and reason; the duplicates' count and
// offsets; the counters (stepCounters' fields, count first; the last,
// Unlearned, only when nonzero); the scores'
// balanced accuracy and macro-F1; pending. Counts, offsets and counters
// are varints (unsigned for counts), strings a length and their bytes,
// float64 values their 8 bits little-endian, so a score travels exactly.
// Then the confusion (stages.Confusion: by true class, the counts by
// predicted class, the last column none): the classes' count and names,
// then its nonzero cells only, their count and each one's row and column
// (unsigned varints) and count (a varint), row by row. An answer is
// written once per partition and batch, and its confusion grows with the
// square of the classes while its nonzero cells grow with the scored
// samples: with 1,000 classes the dense rows were 10⁶ varints an answer.
// Version 4 (answerMagicV4) is version 3 (answerMagic) followed by the
// counts of the batch's late labels (wireStep's LabelsWaited,
// LabelsWaiting, LabelsForgotten; unsigned varints) and the waiting labels
// the batch replaced (LabelsReplaced: their number, then each one's
// offset and its replacement's, varints, and its id). An owner writes it
// when one of them is nonzero, version 3 otherwise: the bytes of a batch
// without waiting or forgotten labels are those an owner wrote before
// version 4, which the drivers before it read.
// The driver reads the answers of older owners too: answerMagicV2's
// confusion is each class's name and its whole row (classes + 1 varints),
// answerMagicV1's ends before it. decodeStep reads gob too (answers an
// older owner stored), which cannot begin with a zero byte.

// answerMagicV4 begins a binary answer with the counts of its batch's late
// labels, answerMagic one without them (zero); answerMagicV2 one with a
// dense confusion, answerMagicV1 one without.
var answerMagicV4, answerMagic, answerMagicV2, answerMagicV1 = [3]byte{0, 'S', 4}, [3]byte{0, 'S', 3}, [3]byte{0, 'S', 2}, [3]byte{0, 'S', 1}

// stepCounters returns pointers to c's fields, in the wire's order.
// TestAnswerCodecCountersComplete fails when stages.Counters has a field
// this list lacks.
func stepCounters(c *stages.Counters) []*int64 {
	return []*int64{&c.Records, &c.Samples, &c.Rejected, &c.Duplicates, &c.LateLabels, &c.Labeled,
		&c.Correct, &c.Unpredicted, &c.Early, &c.Offset, &c.Unlearned}
}

// baseCounters is the number of stepCounters' fields the owners wrote
// before Unlearned: an owner writes Unlearned only when it is nonzero, so
// that a batch's bytes are otherwise those the drivers before it read, and
// a driver reads both.
const baseCounters = 10

// appendString returns b with s appended as its length (an unsigned
// varint) and its bytes, as answerReader.str reads it.
func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// appendAnswer returns b with w's binary form appended.
func appendAnswer(b []byte, w *wireStep) []byte {
	labels := w.LabelsWaited != 0 || w.LabelsWaiting != 0 || w.LabelsForgotten != 0 || len(w.LabelsReplaced) > 0
	if labels {
		b = append(b, answerMagicV4[:]...)
	} else {
		b = append(b, answerMagic[:]...)
	}
	b = binary.AppendUvarint(b, uint64(len(w.IDs)))
	for i := range w.IDs {
		b = appendString(b, w.IDs[i])
		b = binary.AppendVarint(b, w.Offsets[i])
		b = appendString(b, w.Labels[i])
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(w.Scores[i]))
	}
	b = binary.AppendUvarint(b, uint64(len(w.Rejects)))
	for _, r := range w.Rejects {
		b = binary.AppendVarint(b, r.Offset)
		b = appendString(b, r.ID)
		b = appendString(b, r.Reason)
	}
	b = binary.AppendUvarint(b, uint64(len(w.Duplicates)))
	for _, d := range w.Duplicates {
		b = binary.AppendVarint(b, d)
	}
	cs := stepCounters(&w.Counters)
	if w.Counters.Unlearned == 0 {
		cs = cs[:baseCounters]
	}
	b = binary.AppendUvarint(b, uint64(len(cs)))
	for _, c := range cs {
		b = binary.AppendVarint(b, *c)
	}
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(w.Scored.BalancedAccuracy))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(w.Scored.MacroF1))
	b = binary.AppendVarint(b, int64(w.Pending))
	b = appendConfusion(b, w.Confusion)
	if labels {
		b = binary.AppendUvarint(b, uint64(w.LabelsWaited))
		b = binary.AppendUvarint(b, uint64(w.LabelsWaiting))
		b = binary.AppendUvarint(b, uint64(w.LabelsForgotten))
		b = binary.AppendUvarint(b, uint64(len(w.LabelsReplaced)))
		for _, r := range w.LabelsReplaced {
			b = binary.AppendVarint(binary.AppendVarint(b, r.Offset), r.By)
			b = appendString(b, r.ID)
		}
	}
	return b
}

// appendConfusion returns b with cf's classes and nonzero cells appended
// (answerMagic's form), in row-major order (as answerReader.confusion
// requires); rows past the classes and columns past the last (none) are
// left out. It costs O(classes + cells) for cf's sparse form
// (stages.Confusion.Cells, which owners send), O(classes²) for the dense
// one.
func appendConfusion(b []byte, cf stages.Confusion) []byte {
	k := len(cf.Classes)
	b = binary.AppendUvarint(b, uint64(k))
	for _, name := range cf.Classes {
		b = appendString(b, name)
	}
	nz := 0
	for c := range cf.NonZero() {
		if c.Col <= k {
			nz++
		}
	}
	b = binary.AppendUvarint(b, uint64(nz))
	for c := range cf.NonZero() {
		if c.Col <= k {
			b = binary.AppendVarint(binary.AppendUvarint(binary.AppendUvarint(b, uint64(c.Row)), uint64(c.Col)), c.N)
		}
	}
	return b
}

// appendDenseConfusion is appendConfusion in answerMagicV2's form: each
// class's name and its whole row. Only the tests write it (the answers of
// older owners).
func appendDenseConfusion(b []byte, cf stages.Confusion) []byte {
	b = binary.AppendUvarint(b, uint64(len(cf.Classes)))
	for i, name := range cf.Classes {
		b = appendString(b, name)
		for j := range len(cf.Classes) + 1 {
			var v int64
			if i < len(cf.N) && j < len(cf.N[i]) {
				v = cf.N[i][j]
			}
			b = binary.AppendVarint(b, v)
		}
	}
	return b
}

// answerReader reads a binary answer (or share, kind "batch": chain_batch.go);
// its first error sticks.
type answerReader struct {
	b    []byte
	err  error
	kind string // what it reads, for errors: "step" if empty
}

func (r *answerReader) fail(what string) {
	if r.err == nil {
		kind := r.kind
		if kind == "" {
			kind = "step"
		}
		r.err = corrupt("%s: truncated or malformed at its %s", kind, what)
	}
}

func (r *answerReader) uvarint(what string) uint64 { return readVarint(r, what, binary.Uvarint) }

func (r *answerReader) varint(what string) int64 { return readVarint(r, what, binary.Varint) }

// readVarint decodes one varint of r's bytes with dec, or records what as
// malformed and returns 0.
func readVarint[T int64 | uint64](r *answerReader, what string, dec func([]byte) (T, int)) T {
	v, n := dec(r.b)
	if n <= 0 {
		r.fail(what)
		r.b = nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a count of items of at least min bytes each, refusing one
// the rest of the message cannot hold (so a corrupt count allocates
// nothing).
func (r *answerReader) count(what string, min int) int {
	n := r.uvarint(what)
	if n > uint64(len(r.b)/min) {
		r.fail(what)
		r.b = nil
		return 0
	}
	return int(n)
}

// size reads a count (an unsigned varint) that need not fit in the rest
// of the message, refusing one over math.MaxInt32.
func (r *answerReader) size(what string) int64 {
	n := r.uvarint(what)
	if n > math.MaxInt32 {
		r.fail(what)
		r.b = nil
		return 0
	}
	return int64(n)
}

func (r *answerReader) str(what string) string {
	n := r.uvarint(what)
	if n > uint64(len(r.b)) {
		r.fail(what)
		r.b = nil
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *answerReader) float(what string) float64 {
	if len(r.b) < 8 {
		r.fail(what)
		r.b = nil
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return v
}

// readAnswer decodes a binary answer (after its magic) into w, of the
// form version: 1 without its confusion, 2 with a dense one, 3 with a
// sparse one (answerMagic), 4 with a sparse one and the counts of the
// batch's late labels (answerMagicV4).
func readAnswer(b []byte, w *wireStep, version byte) error {
	r := &answerReader{b: b}
	n := r.count("predictions", 11)
	w.IDs, w.Offsets, w.Labels, w.Scores = make([]string, n), make([]int64, n), make([]string, n), make([]float64, n)
	for i := range n {
		w.IDs[i] = r.str("prediction id")
		w.Offsets[i] = r.varint("prediction offset")
		w.Labels[i] = r.str("prediction label")
		w.Scores[i] = r.float("prediction score")
	}
	if n := r.count("rejects", 3); n > 0 {
		w.Rejects = make([]wireReject, n)
		for i := range w.Rejects {
			w.Rejects[i] = wireReject{Offset: r.varint("reject offset"), ID: r.str("reject id"), Reason: r.str("reject reason")}
		}
	}
	if n := r.count("duplicates", 1); n > 0 {
		w.Duplicates = make([]int64, n)
		for i := range w.Duplicates {
			w.Duplicates[i] = r.varint("duplicate")
		}
	}
	cs := stepCounters(&w.Counters)
	k := r.uvarint("counters")
	if r.err == nil && (k < baseCounters || k > uint64(len(cs))) {
		return corrupt("step: %d counters (this build reads %d or %d)", k, baseCounters, len(cs))
	}
	for _, c := range cs[:min(k, uint64(len(cs)))] {
		*c = r.varint("counters")
	}
	w.Scored.BalancedAccuracy = r.float("scores")
	w.Scored.MacroF1 = r.float("scores")
	w.Pending = int(r.varint("pending"))
	switch version {
	case answerMagic[2], answerMagicV4[2]:
		w.Confusion = r.confusion()
	case answerMagicV2[2]:
		k := r.count("confusion", 2)
		if uint64(k)*uint64(k+2) > uint64(len(r.b)) { // k names and k rows of k + 1 varints: at least a byte each
			r.fail("confusion")
			k = 0
		}
		for range k {
			w.Confusion.Classes = append(w.Confusion.Classes, r.str("confusion class"))
			row := make([]int64, k+1)
			for j := range row {
				row[j] = r.varint("confusion counts")
			}
			w.Confusion.N = append(w.Confusion.N, row)
		}
	}
	if version == answerMagicV4[2] {
		w.LabelsWaited = int(r.size("labels waited"))
		w.LabelsWaiting = int(r.size("labels waiting"))
		w.LabelsForgotten = r.size("labels forgotten")
		n := r.count("replaced labels", 3)
		for range n {
			rl := ReplacedLabel{Offset: r.varint("replaced label"), By: r.varint("replaced label"), ID: r.str("replaced label")}
			if r.err != nil {
				break
			}
			w.LabelsReplaced = append(w.LabelsReplaced, rl)
		}
	}
	if r.err == nil && len(r.b) > 0 {
		return corrupt("step: %d bytes after its end", len(r.b))
	}
	return r.err
}

// confusion reads appendConfusion's form into a stages.Confusion of k
// classes in the sparse form (Cells: its nonzero cells, row-major), in
// O(k + cells) however many classes there are. A cell outside the k rows
// of k + 1 counts, or a cell read twice or out of row-major order, is
// malformed.
func (r *answerReader) confusion() stages.Confusion {
	var cf stages.Confusion
	k := r.count("confusion", 2)
	for range k {
		cf.Classes = append(cf.Classes, r.str("confusion class"))
	}
	nz := r.count("confusion cells", 3)
	if r.err != nil || k == 0 && nz == 0 {
		return stages.Confusion{}
	}
	cf.Cells = make([]stages.Cell, 0, nz)
	prev := -1
	for range nz {
		i, j, v := r.uvarint("confusion cell"), r.uvarint("confusion cell"), r.varint("confusion cell")
		if r.err != nil {
			break
		}
		if i >= uint64(k) || j > uint64(k) || int(i*uint64(k+1)+j) <= prev {
			r.fail("confusion cell")
			break
		}
		prev = int(i*uint64(k+1) + j)
		if v != 0 {
			cf.Cells = append(cf.Cells, stages.Cell{Row: int(i), Col: int(j), N: v})
		}
	}
	return cf
}
