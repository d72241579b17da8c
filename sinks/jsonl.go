package sinks

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// JSONL writes results as JSON lines, one object per sample:
//
//	{"id":"a","code":[0.5,0],"pred":"3","score":0.9}
//
// with the content of the Arrow sink: code values rounded to float32 (and
// printed in the shortest form that reads back as that float32), "code"
// omitted when Results has no Codes, and null for a missing pred or score
// (and for a non-finite score, which JSON cannot represent).
type JSONL struct {
	w      *bufio.Writer
	k      int
	buf    []byte
	closed bool
}

// NewJSONL returns a sink writing JSON lines to w, with k code columns (0
// for none). Close flushes but does not close w. It panics if k is negative.
func NewJSONL(w io.Writer, k int) *JSONL {
	if k < 0 {
		panic("sinks: negative k")
	}
	return &JSONL{w: bufio.NewWriter(w), k: k}
}

// Write appends one line per sample of r.
func (j *JSONL) Write(r Results) error {
	if j.closed {
		return errors.New("sinks: jsonl: write after Close")
	}
	if err := r.check(j.k); err != nil {
		return err
	}
	for i := range r.IDs {
		b := append(j.buf[:0], `{"id":`...)
		b = appendJSONString(b, r.IDs[i])
		if j.k > 0 && r.hasCode(i) {
			b = append(b, `,"code":[`...)
			for c, v := range r.Codes.RawRowView(i) {
				if c > 0 {
					b = append(b, ',')
				}
				f := float32(v)
				if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
					b = append(b, "null"...)
				} else {
					b = strconv.AppendFloat(b, float64(f), 'g', -1, 32)
				}
			}
			b = append(b, ']')
		}
		b = append(b, `,"pred":`...)
		if r.Preds == nil || r.Preds[i] == "" {
			b = append(b, "null"...)
		} else {
			b = appendJSONString(b, r.Preds[i])
		}
		b = append(b, `,"score":`...)
		if r.Scores == nil || math.IsNaN(r.Scores[i]) || math.IsInf(r.Scores[i], 0) {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendFloat(b, r.Scores[i], 'g', -1, 64)
		}
		b = append(b, "}\n"...)
		j.buf = b
		if _, err := j.w.Write(b); err != nil {
			return fmt.Errorf("sinks: jsonl: %w", err)
		}
	}
	return nil
}

func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}

// Close flushes the output. It does not close the writer given to NewJSONL.
func (j *JSONL) Close() error {
	if j.closed {
		return nil
	}
	j.closed = true
	if err := j.w.Flush(); err != nil {
		return fmt.Errorf("sinks: jsonl: %w", err)
	}
	return nil
}

// Rejects writes rejected records as JSON lines,
//
//	{"offset":12,"id":"a7","reason":"sources: record 12 (id \"a7\"): negative value -1 at feature 3"}
//
// ("id" is null when the record has none) and counts them. It is not safe
// for concurrent use.
type Rejects struct {
	w      *bufio.Writer
	n      int64
	buf    []byte
	closed bool
}

// NewRejects returns a reject sink writing to w. If w is nil, rejects are
// only counted. Close flushes but does not close w.
func NewRejects(w io.Writer) *Rejects {
	r := &Rejects{}
	if w != nil {
		r.w = bufio.NewWriter(w)
	}
	return r
}

// Write records one rejected record: its 0-based offset in the input, its
// id ("" for none) and the reason.
func (r *Rejects) Write(offset int64, id string, reason error) error {
	if r.closed {
		return errors.New("sinks: rejects: write after Close")
	}
	r.n++
	if r.w == nil {
		return nil
	}
	b := append(r.buf[:0], `{"offset":`...)
	b = strconv.AppendInt(b, offset, 10)
	b = append(b, `,"id":`...)
	if id == "" {
		b = append(b, "null"...)
	} else {
		b = appendJSONString(b, id)
	}
	msg := "unknown reason"
	if reason != nil {
		msg = reason.Error()
	}
	b = append(b, `,"reason":`...)
	b = appendJSONString(b, msg)
	b = append(b, "}\n"...)
	r.buf = b
	if _, err := r.w.Write(b); err != nil {
		return fmt.Errorf("sinks: rejects: %w", err)
	}
	return nil
}

// Count returns the number of rejects written so far.
func (r *Rejects) Count() int64 { return r.n }

// Close flushes the output.
func (r *Rejects) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	if r.w != nil {
		if err := r.w.Flush(); err != nil {
			return fmt.Errorf("sinks: rejects: %w", err)
		}
	}
	return nil
}
