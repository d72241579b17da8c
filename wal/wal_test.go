package wal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func readAll(t *testing.T, path string) ([]uint64, [][]byte, Info) {
	t.Helper()
	var seqs []uint64
	var payloads [][]byte
	info, err := Read(path, func(seq uint64, p []byte) error {
		seqs = append(seqs, seq)
		payloads = append(payloads, bytes.Clone(p))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return seqs, payloads, info
}

func TestAppendRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "log")
	if info, err := Read(path, nil); err != nil || info.Entries != 0 {
		t.Fatalf("missing log: %+v, %v", info, err)
	}
	w, err := OpenWriter(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		seq, err := w.Append(fmt.Appendf(nil, "entry %d", i))
		if err != nil || seq != uint64(i+1) {
			t.Fatalf("append %d: seq %d, %v", i, seq, err)
		}
		if err := w.Commit(seq); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Append(nil); err == nil {
		t.Error("an empty entry was accepted")
	}
	seqs, ps, info := readAll(t, path)
	if len(seqs) != 5 || info.First != 1 || info.Last != 5 || info.Torn != 0 || string(ps[4]) != "entry 4" {
		t.Fatalf("read %v %q %+v", seqs, ps, info)
	}
	// Truncate drops the entries; numbers go on.
	if err := w.Truncate(); err != nil {
		t.Fatal(err)
	}
	if seq, _ := w.Append([]byte("after")); seq != 6 {
		t.Errorf("first entry after Truncate: seq %d, want 6", seq)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	seqs, _, _ = readAll(t, path)
	if len(seqs) != 1 || seqs[0] != 6 {
		t.Errorf("after Truncate: %v, want [6]", seqs)
	}
	// Reopening continues after the larger of the log's last and after.
	w, err = OpenWriter(path, 10)
	if err != nil {
		t.Fatal(err)
	}
	if seq, _ := w.Append([]byte("x")); seq != 11 {
		t.Errorf("after reopening past 10: seq %d, want 11", seq)
	}
	w.Close()
}

// TestTornTail cuts a log at every byte of its last entry, and fills a
// tail with zeros: the entries before it read, the tail is reported, and
// OpenWriter cuts it off so that appending goes on cleanly.
func TestTornTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "log")
	w, err := OpenWriter(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Append([]byte("one"))
	w.Append([]byte("two"))
	full := w.Size()
	w.Append([]byte("three, the one torn"))
	end := w.Size()
	w.Close()
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut")
	for n := full; n < end; n++ {
		os.WriteFile(cut, good[:n], 0o644)
		seqs, _, info := readAll(t, cut)
		if len(seqs) != 2 || info.Valid != full || info.Torn != n-full {
			t.Fatalf("cut at %d: %v %+v", n, seqs, info)
		}
		w, err := OpenWriter(cut, 0)
		if err != nil {
			t.Fatalf("cut at %d: %v", n, err)
		}
		if seq, err := w.Append([]byte("new")); err != nil || seq != 3 {
			t.Fatalf("cut at %d: append seq %d, %v", n, seq, err)
		}
		w.Close()
		seqs, ps, info := readAll(t, cut)
		if len(seqs) != 3 || string(ps[2]) != "new" || info.Torn != 0 {
			t.Fatalf("cut at %d, appended: %v %q %+v", n, seqs, ps, info)
		}
	}
	// A header cut short by a crash is an empty log.
	for n := 1; n < headerSize; n++ {
		os.WriteFile(cut, good[:n], 0o644)
		if _, _, info := readAll(t, cut); info.Entries != 0 || info.Torn != int64(n) {
			t.Errorf("header cut at %d: %+v", n, info)
		}
	}
	// Zeros after the last entry (a file extended by a crash).
	os.WriteFile(cut, append(bytes.Clone(good[:full]), make([]byte, 100)...), 0o644)
	if seqs, _, info := readAll(t, cut); len(seqs) != 2 || info.Torn != 100 {
		t.Errorf("zero tail: %v %+v", seqs, info)
	}
}

// TestCorrupt flips each byte of a log's first entry in turn: with data
// after it, that is ErrCorrupt, never a silently shorter log; a flipped
// header is not a log.
func TestCorrupt(t *testing.T) {
	dir := t.TempDir()
	_, good, first := twoEntries(t, dir)
	bad := filepath.Join(dir, "bad")
	for i := range int(first) {
		b := bytes.Clone(good)
		b[i] ^= 0x01
		os.WriteFile(bad, b, 0o644)
		_, err := Read(bad, nil)
		if i < headerSize {
			if err == nil {
				t.Errorf("header byte %d flipped: read without error", i)
			}
			continue
		}
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("entry byte %d flipped: %v, want ErrCorrupt", i, err)
		}
		if _, err := OpenWriter(bad, 0); err == nil {
			t.Errorf("entry byte %d flipped: OpenWriter accepted the log", i)
		}
	}
	// A flipped byte in the last entry, complete, is damage too, not a torn
	// tail: an acknowledged request must not vanish without a refusal.
	last := int64(len(good))
	for i := first; i < last; i++ {
		b := bytes.Clone(good)
		b[i] ^= 0x01
		os.WriteFile(bad, b, 0o644)
		info, err := Read(bad, nil)
		if !errors.Is(err, ErrCorrupt) || info.Entries != 1 || info.Valid != first {
			t.Fatalf("last entry byte %d flipped: %+v, %v; want ErrCorrupt after 1 entry at byte %d", i, info, err, first)
		}
	}
}

// TestDrop sets a damaged last entry aside: the log keeps its valid
// entries and takes new ones, and the dropped bytes are saved, unchanged,
// next to it. OpenWriter sets a torn tail aside the same way.
func TestDrop(t *testing.T) {
	path, good, first := twoEntries(t, t.TempDir())
	b := bytes.Clone(good)
	b[len(b)-2] ^= 0x40
	os.WriteFile(path, b, 0o644)
	info, err := Read(path, nil)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("want ErrCorrupt, got %v", err)
	}
	aside, err := Drop(path, info.Valid)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(aside); !bytes.Equal(got, b[first:]) {
		t.Fatalf("%s holds %q, want the dropped bytes %q", aside, got, b[first:])
	}
	if seqs, _, info := readAll(t, path); len(seqs) != 1 || info.Valid != first || info.Torn != 0 {
		t.Fatalf("after Drop: %v %+v", seqs, info)
	}
	// A torn tail: OpenWriter sets it aside in a second file.
	torn := append(bytes.Clone(good[:first]), good[first:first+7]...)
	os.WriteFile(path, torn, 0o644)
	w, err := OpenWriter(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	got, err := os.ReadFile(fmt.Sprintf("%s.dropped-%d.1", path, first))
	if err != nil || !bytes.Equal(got, good[first:first+7]) {
		t.Fatalf("torn tail set aside as %q, %v; want %q", got, err, good[first:first+7])
	}
	if aside, err := Drop(path, first); err != nil || aside != "" {
		t.Fatalf("Drop of nothing: %q, %v", aside, err)
	}
}

// TestGroupCommit commits from many goroutines at once under SyncAlways:
// every entry is durable (synced past it) when its Commit returns, and the
// log holds them all in sequence.
func TestGroupCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	w, err := OpenWriter(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex // Append has one caller at a time
	var wg sync.WaitGroup
	const n = 200
	for i := range n {
		wg.Go(func() {
			mu.Lock()
			seq, err := w.Append(fmt.Appendf(nil, "%d", i))
			mu.Unlock()
			if err != nil {
				t.Error(err)
				return
			}
			if err := w.Commit(seq); err != nil {
				t.Error(err)
			}
			if w.synced.Load() < seq {
				t.Errorf("Commit(%d) returned with synced %d", seq, w.synced.Load())
			}
		})
	}
	wg.Wait()
	if s := w.Syncs(); s < 1 || s > n {
		t.Errorf("%d fsyncs for %d commits", s, n)
	}
	t.Logf("%d fsyncs for %d concurrent commits", w.Syncs(), n)
	w.Close()
	seqs, _, _ := readAll(t, path)
	if len(seqs) != n {
		t.Fatalf("%d entries, want %d", len(seqs), n)
	}
	for i, s := range seqs {
		if s != uint64(i+1) {
			t.Fatalf("entry %d has seq %d", i, s)
		}
	}
}

func TestParsePolicy(t *testing.T) {
	for _, p := range []Policy{SyncAlways, SyncInterval, SyncNever} {
		if q, err := ParsePolicy(p.String()); err != nil || q != p {
			t.Errorf("%v: %v, %v", p, q, err)
		}
	}
	if _, err := ParsePolicy("sometimes"); err == nil {
		t.Error("an unknown policy parsed")
	}
}

// twoEntries writes a log of two entries in dir and returns its path, its
// bytes and the end of its first entry.
func twoEntries(t *testing.T, dir string) (string, []byte, int64) {
	t.Helper()
	path := filepath.Join(dir, "log")
	w, err := OpenWriter(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Append([]byte("first entry"))
	first := w.Size()
	w.Append([]byte("second entry"))
	w.Close()
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, good, first
}
