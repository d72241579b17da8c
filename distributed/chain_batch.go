package distributed

import (
	"encoding/binary"
	"math"

	"github.com/nmfstream/nmfstream/record"
)

// The binary form of a batch share (wireBatch): every owner decodes one
// per batch, and gob's decoder compiles wireBatch's types again for every
// message (BENCHMARKS.md, "… (issue 29, branch dist7)"). Layout, after
// the 3 bytes batchMagic: Dim; Rows; Dense (count, values); Ptr and Ind
// (count, values each); Val (count, values); whether Text is set, then its
// count and documents; IDs, Labels (count, strings each); Labeled (count,
// one byte each); Offsets (count, values); LateLabels (count, then each
// one's offset, id and label); Rejects and Unusable (count, then each
// one's offset, id, reason and, since version 2, a byte: 1 for a record
// without features, record.ErrNoFeatures); Context (a length and its
// bytes, itself a binary share). Counts are unsigned varints, integers
// varints, strings a length and their bytes, float64 values their 8 bits
// little-endian, so a row travels exactly. decodeFeatures reads gob too
// (shares an older driver stored), which cannot begin with a zero byte.

// batchMagic begins a binary share, its last byte the version;
// batchMagicV1's rejects carry no byte of their own.
var (
	batchMagic   = [3]byte{0, 'B', 2}
	batchMagicV1 = [3]byte{0, 'B', 1}
)

// appendBatch returns b with w's binary form appended.
func appendBatch(b []byte, w *wireBatch) []byte {
	strs := func(b []byte, ss []string) []byte {
		b = binary.AppendUvarint(b, uint64(len(ss)))
		for _, s := range ss {
			b = appendString(b, s)
		}
		return b
	}
	floats := func(b []byte, vs []float64) []byte {
		b = binary.AppendUvarint(b, uint64(len(vs)))
		for _, v := range vs {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
		return b
	}
	ints := func(b []byte, vs []int) []byte {
		b = binary.AppendUvarint(b, uint64(len(vs)))
		for _, v := range vs {
			b = binary.AppendVarint(b, int64(v))
		}
		return b
	}
	rejects := func(b []byte, rs []wireReject) []byte {
		b = binary.AppendUvarint(b, uint64(len(rs)))
		for _, r := range rs {
			b = appendString(appendString(binary.AppendVarint(b, r.Offset), r.ID), r.Reason)
			if r.NoFeatures {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
		}
		return b
	}
	b = append(b, batchMagic[:]...)
	b = binary.AppendVarint(b, int64(w.Dim))
	b = appendString(b, w.Rows)
	b = floats(b, w.Dense)
	b = ints(ints(b, w.Ptr), w.Ind)
	b = floats(b, w.Val)
	if w.Text != nil {
		b = strs(append(b, 1), w.Text)
	} else {
		b = append(b, 0)
	}
	b = strs(strs(b, w.IDs), w.Labels)
	b = binary.AppendUvarint(b, uint64(len(w.Labeled)))
	for _, l := range w.Labeled {
		if l {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(w.Offsets)))
	for _, o := range w.Offsets {
		b = binary.AppendVarint(b, o)
	}
	b = binary.AppendUvarint(b, uint64(len(w.LateLabels)))
	for _, ll := range w.LateLabels {
		b = appendString(appendString(binary.AppendVarint(b, ll.Offset), ll.ID), ll.Label)
	}
	b = rejects(rejects(b, w.Rejects), w.Unusable)
	return append(binary.AppendUvarint(b, uint64(len(w.Context))), w.Context...)
}

// readBatch decodes a binary share (after its magic) into w.
func readBatch(b []byte, w *wireBatch, version byte) error {
	r := &answerReader{b: b, kind: "batch"}
	strs := func(what string) []string {
		n := r.count(what, 1)
		if n == 0 {
			return nil
		}
		out := make([]string, n)
		for i := range out {
			out[i] = r.str(what)
		}
		return out
	}
	floats := func(what string) []float64 {
		n := r.count(what, 8)
		if n == 0 {
			return nil
		}
		out := make([]float64, n)
		for i := range out {
			out[i] = r.float(what)
		}
		return out
	}
	ints := func(what string) []int {
		n := r.count(what, 1)
		if n == 0 {
			return nil
		}
		out := make([]int, n)
		for i := range out {
			out[i] = int(r.varint(what))
		}
		return out
	}
	rejects := func(what string) []wireReject {
		n := r.count(what, 3)
		if n == 0 {
			return nil
		}
		out := make([]wireReject, n)
		for i := range out {
			out[i] = wireReject{Offset: r.varint(what), ID: r.str(what), Reason: r.str(what)}
			if version >= 2 {
				switch r.byte(what) {
				case 0:
				case 1:
					out[i].NoFeatures = true
				default:
					r.fail(what)
				}
			}
		}
		return out
	}
	w.Dim = int(r.varint("dimension"))
	w.Rows = r.str("rows")
	w.Dense = floats("dense rows")
	w.Ptr, w.Ind = ints("sparse pointers"), ints("sparse indices")
	w.Val = floats("sparse values")
	if text := r.byte("documents"); text == 1 {
		if w.Text = strs("documents"); w.Text == nil {
			w.Text = []string{}
		}
	} else if text != 0 {
		r.fail("documents")
	}
	w.IDs, w.Labels = strs("ids"), strs("labels")
	if n := r.count("labeled flags", 1); n > 0 {
		w.Labeled = make([]bool, n)
		for i := range w.Labeled {
			w.Labeled[i] = r.byte("labeled flags") == 1
		}
	}
	if n := r.count("offsets", 1); n > 0 {
		w.Offsets = make([]int64, n)
		for i := range w.Offsets {
			w.Offsets[i] = r.varint("offsets")
		}
	}
	if n := r.count("late labels", 3); n > 0 {
		w.LateLabels = make([]record.LateLabel, n)
		for i := range w.LateLabels {
			w.LateLabels[i] = record.LateLabel{Offset: r.varint("late label"), ID: r.str("late label"), Label: r.str("late label")}
		}
	}
	w.Rejects, w.Unusable = rejects("rejects"), rejects("unusable samples")
	if n := r.count("context", 1); n > 0 {
		w.Context = append([]byte(nil), r.b[:n]...)
		r.b = r.b[n:]
	}
	if r.err == nil && len(r.b) > 0 {
		return corrupt("batch: %d bytes after its end", len(r.b))
	}
	return r.err
}

// byte reads one byte.
func (r *answerReader) byte(what string) byte {
	if len(r.b) < 1 {
		r.fail(what)
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}
