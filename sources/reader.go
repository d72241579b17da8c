package sources

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"

	"github.com/nmfstream/nmfstream/record"
)

// Reader reads a Source's batches one at a time, each a copy the caller
// owns, in the shape of pipeline.Reader: it is the decode stage of a
// pipeline (pipeline.From("records", sources.NewReader(src))). A copy is
// needed because a Source reuses a batch's memory on the next call to Next
// while a pipeline reads ahead.
//
// A Reader fingerprints the first FingerprintRecords records it reads or
// skips (Fingerprint), so that a checkpoint can hold what its stream read
// before its offset and a resumed Reader can check it (Check).
//
// A Reader is not safe for concurrent use, except Fingerprint, which any
// goroutine may call (a pipeline's learn stage does while Read runs ahead
// on another). It does not close its Source: the Source's owner does.
type Reader struct {
	// Skip is the offset of the first record to read: the batches of
	// records before it are skipped, as when a stream resumes from a
	// checkpoint (stages.Counters.Offset). A batch with records on both
	// sides of Skip is an error, since the input then differs from the one
	// the checkpoint was made from, and so is an input that ends before
	// Skip. The default, 0, reads every record.
	Skip int64
	// Check is the Fingerprint the first records must have: a
	// checkpoint's, taken on the input it resumes, of the records before
	// its offset. Record i, for i below len(Check) and
	// FingerprintRecords, is compared as it is read or skipped, and the
	// first that differs stops the Reader with a *ChangedError, before any
	// batch holding it is returned. The default, nil (a checkpoint without
	// a fingerprint), checks nothing.
	Check Fingerprint

	src  Source
	seen int64 // one past the last record offset read or skipped

	mu   sync.Mutex  // guards sums, which Fingerprint reads
	sums Fingerprint // the first records' sums, in offset order
	buf  []byte      // a record's encoding, reused
	recs []recordRef // a batch's records in offset order, reused
}

// FingerprintRecords is the number of records at the start of an input
// that a Fingerprint covers: 1,024. Only these are hashed, so that the
// fingerprint costs a stream a fixed amount once (for MNIST's 784 float64
// pixels a record, the SHA-256 of 6.4 MB: about 6 ms,
// BenchmarkReaderFingerprintMNIST) rather than a share of every record;
// an input that differs only after them is not told apart.
const FingerprintRecords = 1024

// Fingerprint identifies the first records of an input: element i is the
// first 8 bytes, big-endian, of the SHA-256 of record i as a Batch holds
// it: whether it is a sample, a late label or a reject; its id; for a
// sample its label (or that it has none) and its features (the feature
// form, then the float64 bits of a dense row, the column indices and
// float64 bits of a sparse row, or the bytes of a document); for a late
// label its label. A reject's reason is left out, so that a build that
// words it otherwise still resumes. Batch boundaries do not enter it.
type Fingerprint []uint64

// ChangedError is the error of a Reader whose record at Offset differs
// from that record in its Check: the input is not the one the checkpoint
// was taken on.
type ChangedError struct {
	Offset int64 // the first record that differs
}

func (e *ChangedError) Error() string {
	return fmt.Sprintf("sources: record %d differs from record %d of the input the checkpoint was taken on: it is another input (pass that input, or remove the checkpoint to start over)", e.Offset, e.Offset)
}

// NewReader returns a Reader of src.
func NewReader(src Source) *Reader { return &Reader{src: src} }

// Read returns a copy of the next batch, io.EOF at the end of the source,
// or the error that stopped it. It checks ctx between batches only: a
// Source's Next takes no context.
func (r *Reader) Read(ctx context.Context) (*record.Batch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !r.src.Next() {
			if err := r.src.Err(); err != nil {
				return nil, err
			}
			if r.seen < r.Skip {
				return nil, fmt.Errorf("sources: the input ended after %d records, before the resume offset %d: it is not the input the checkpoint was taken on (pass that input, or remove the checkpoint to start over)", r.seen, r.Skip)
			}
			return nil, io.EOF
		}
		b := r.src.Batch()
		if err := r.fingerprint(b); err != nil {
			return nil, err
		}
		first, last := b.Span()
		r.seen = max(r.seen, last+1)
		if last < r.Skip {
			continue
		}
		if first < r.Skip {
			return nil, fmt.Errorf("sources: resume offset %d falls inside a batch (records %d..%d): the input changed", r.Skip, first, last)
		}
		return b.Clone(), nil
	}
}

// Fingerprint returns the fingerprint of the first min(n,
// FingerprintRecords) records, in a slice the caller owns: of fewer if
// the Reader has not read or skipped that many yet. A stream stores
// Fingerprint(stages.Counters.Offset) in its checkpoint, the records the
// checkpoint includes, however far Read has run ahead of them.
func (r *Reader) Fingerprint(n int64) Fingerprint {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.sums[:min(max(n, 0), int64(len(r.sums)))])
}

// recordRef is one record of a batch: where Batch lists it (kind 's' a
// sample, 'l' a late label, 'r' a reject, i its index there) and its offset.
type recordRef struct {
	off  int64
	kind byte
	i    int
}

// fingerprint adds the sums of b's records among the first
// FingerprintRecords to r.sums, in offset order, and compares each with
// Check. It costs nothing once those records are past.
func (r *Reader) fingerprint(b *record.Batch) error {
	if len(r.sums) >= FingerprintRecords {
		return nil
	}
	r.recs = r.recs[:0]
	for i, o := range b.Offsets {
		r.recs = append(r.recs, recordRef{o, 's', i})
	}
	for i, x := range b.LateLabels {
		r.recs = append(r.recs, recordRef{x.Offset, 'l', i})
	}
	for i, x := range b.Rejects {
		r.recs = append(r.recs, recordRef{x.Offset, 'r', i})
	}
	slices.SortFunc(r.recs, func(a, c recordRef) int { return cmp.Compare(a.off, c.off) })
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, x := range r.recs {
		n := int64(len(r.sums))
		if n >= FingerprintRecords {
			break
		}
		s := r.sum(b, x)
		r.sums = append(r.sums, s)
		if n < int64(len(r.Check)) && r.Check[n] != s {
			return &ChangedError{Offset: x.off}
		}
	}
	return nil
}

// sum returns the fingerprint of record x of b (see Fingerprint). A field
// missing from a malformed batch counts as empty.
func (r *Reader) sum(b *record.Batch, x recordRef) uint64 {
	e := append(r.buf[:0], x.kind)
	switch x.kind {
	case 's':
		e = appendString(e, at(b.IDs, x.i))
		labeled := x.i < len(b.Labeled) && b.Labeled[x.i]
		e = append(e, boolByte(labeled))
		e = appendString(e, at(b.Labels, x.i))
		e = append(e, byte(b.Form))
		e = r.appendFeatures(e, b, x.i)
	case 'l':
		e = appendString(e, b.LateLabels[x.i].ID)
		e = appendString(e, b.LateLabels[x.i].Label)
	case 'r':
		e = appendString(e, b.Rejects[x.i].ID)
	}
	r.buf = e
	h := sha256.Sum256(e)
	return binary.BigEndian.Uint64(h[:8])
}

// appendFeatures appends sample i's features to e: their count, then each.
func (r *Reader) appendFeatures(e []byte, b *record.Batch, i int) []byte {
	switch b.Form {
	case record.FormDense:
		if b.Dense == nil || i >= b.Dense.RawMatrix().Rows {
			break
		}
		row := b.Dense.RawRowView(i)
		e = binary.AppendUvarint(e, uint64(len(row)))
		for _, v := range row {
			e = binary.LittleEndian.AppendUint64(e, math.Float64bits(v))
		}
	case record.FormSparse:
		if b.Sparse == nil {
			break
		}
		if n, _ := b.Sparse.Dims(); i >= n {
			break
		}
		ind, val := b.Sparse.Row(i)
		e = binary.AppendUvarint(e, uint64(len(ind)))
		for j, c := range ind {
			e = binary.AppendUvarint(e, uint64(c))
			if j < len(val) {
				e = binary.LittleEndian.AppendUint64(e, math.Float64bits(val[j]))
			}
		}
	case record.FormText:
		e = appendString(e, at(b.Text, i))
	}
	return e
}

// at returns s[i], or "" past its end.
func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}

// appendString appends s to e, preceded by its length.
func appendString(e []byte, s string) []byte {
	return append(binary.AppendUvarint(e, uint64(len(s))), s...)
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}
