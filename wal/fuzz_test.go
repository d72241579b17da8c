package wal

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzRead checks that no log file, however damaged, crashes or exhausts
// memory in Read and OpenWriter: the entries read are numbered in
// sequence, the valid and torn parts add up to the file, and a log that
// OpenWriter accepts takes a new entry that reads back after the old ones.
func FuzzRead(f *testing.F) {
	dir := f.TempDir()
	seed := filepath.Join(dir, "seed")
	w, err := OpenWriter(seed, 0)
	if err != nil {
		f.Fatal(err)
	}
	w.Append([]byte("j{\"id\":\"a\",\"x\":[1,2,3]}\n"))
	w.Append([]byte("l{\"id\":\"a\",\"label\":1}\n"))
	w.Close()
	b, err := os.ReadFile(seed)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)-3])
	f.Add(append(bytes.Clone(b), make([]byte, 40)...))
	// One log file per fuzzing process, rewritten for each input: no
	// per-input directory (FuzzRead must run thousands of inputs a second).
	path := filepath.Join(dir, "log")
	f.Fuzz(func(t *testing.T, data []byte) {
		var last uint64
		n := 0
		info, err := scan(bytes.NewReader(data), int64(len(data)), "log", func(seq uint64, p []byte) error {
			if n > 0 && seq != last+1 {
				t.Fatalf("entry %d has seq %d after %d", n, seq, last)
			}
			last = seq
			n++
			return nil
		})
		if err != nil {
			if info.Torn != 0 || info.Entries != n || info.Valid > int64(len(data)) {
				t.Fatalf("an error (%v) with %+v after %d entries", err, info, n)
			}
			return
		}
		if info.Entries != n || info.Valid+info.Torn != int64(len(data)) && len(data) > 0 {
			t.Fatalf("%+v for %d entries in %d bytes", info, n, len(data))
		}
		if info.Torn == 0 && n > 0 {
			return // OpenWriter has nothing to set aside: the costly part is for torn logs
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		w, err := OpenWriter(path, 0)
		if err != nil {
			return
		}
		seq, err := w.Append([]byte("new"))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		var got []byte
		info2, err := Read(path, func(s uint64, p []byte) error {
			if s == seq {
				got = bytes.Clone(p)
			}
			return nil
		})
		if err != nil || string(got) != "new" || info2.Entries != n+1 || info2.Torn != 0 {
			t.Fatalf("after appending to %+v: %+v, %q, %v", info, info2, got, err)
		}
		// The torn bytes were set aside, not lost; remove them so the
		// directory does not grow with the inputs.
		matches, _ := filepath.Glob(path + ".dropped-*")
		if info.Torn > 0 && len(matches) == 0 {
			t.Fatalf("a torn tail of %d bytes was not set aside", info.Torn)
		}
		for _, m := range matches {
			os.Remove(m)
		}
	})
}
