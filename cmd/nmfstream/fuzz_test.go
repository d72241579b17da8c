package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
)

// checkpointSeed streams 150 small labeled records with a checkpoint and
// returns the checkpoint file.
func checkpointSeed(f *testing.F) []byte {
	dir := f.TempDir()
	in := filepath.Join(dir, "in.arrow")
	schema := arrow.NewSchema([]arrow.Field{field("x", f64List), field("label", arrow.PrimitiveTypes.Int64), field("id", arrow.PrimitiveTypes.Int64)}, nil)
	rnd := rand.New(rand.NewPCG(1, 1))
	var rows [][]any
	for i := range 150 {
		c := i % 3
		x := make([]float64, 6)
		for j := range x {
			x[j] = rnd.Float64()
		}
		x[2*c] += 2 // three separable classes
		var label any
		if i%5 == 0 {
			label = int64(c)
		}
		rows = append(rows, []any{x, label, int64(i)})
	}
	writeArrow(f, in, schema, rows)
	ckpt := filepath.Join(dir, "state.ckpt")
	mustRun(f, "stream", "--in", in, "--model", ckpt, "--window", "60", "--rank", "3", "--batch", "10")
	b, err := os.ReadFile(ckpt)
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// FuzzCheckpoint checks that no checkpoint file crashes, hangs or exhausts
// memory in readCheckpoint and the restore of its state. With fix set the
// trailer is rewritten to match the payload, so that the fuzzer reaches the
// decoding and restoring of payloads whose checksum holds (as a
// checkpoint written by a buggy build, or on purpose, would).
func FuzzCheckpoint(f *testing.F) {
	seed := checkpointSeed(f)
	f.Add(seed, false)
	f.Add(seed, true)
	f.Add(seed[:len(seed)/2], true)
	f.Fuzz(func(t *testing.T, data []byte, fix bool) {
		tm := time.AfterFunc(10*time.Second, func() { panic("FuzzCheckpoint: input took over 10 s") })
		defer tm.Stop()
		head := len(checkpointMagic) + 4
		if fix && len(data) > head+checkpointTrailer {
			data = bytes.Clone(data)
			payload := data[head : len(data)-checkpointTrailer]
			tail := data[len(data)-checkpointTrailer:]
			binary.LittleEndian.PutUint64(tail, uint64(len(payload)))
			sum := sha256.Sum256(payload)
			copy(tail[8:], sum[:])
		}
		cp, err := readCheckpoint(bytes.NewReader(data), int64(len(data)), "fuzz.ckpt")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.ckpt: ") {
				t.Fatalf("error does not name the checkpoint: %v", err)
			}
			return
		}
		cp.restore() // an error is fine; a crash is not
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
