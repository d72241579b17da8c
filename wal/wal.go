package wal

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

const (
	magic      = "nmfstream-wal\x00\x00\x00"
	version    = 1
	headerSize = len(magic) + 4
	entryHead  = 4 + 8 + 4 + 4 // length, seq, header CRC, payload CRC
	// MaxEntry is the largest payload Append accepts, in bytes.
	MaxEntry = 1<<32 - 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt reports a log whose content is damaged before its end: not a
// torn tail that a crash can leave, but a bad entry followed by more data.
var ErrCorrupt = errors.New("wal: corrupt log")

// Info describes a log file as read.
type Info struct {
	// Entries is the number of valid entries.
	Entries int
	// First and Last are the sequence numbers of the first and last valid
	// entries; both are zero in a log without entries.
	First, Last uint64
	// Valid is the size in bytes of the header and the valid entries.
	Valid int64
	// Torn is the size in bytes of the torn tail after them (zero for a
	// cleanly written log).
	Torn int64
}

// Read calls fn with each valid entry of the log at path, in order, and
// returns what it read. payload is valid only during the call. A log that
// does not exist reads as empty (os.ErrNotExist is not an error); an error
// from fn stops Read and is returned. A torn tail (a partial last write) is
// not an error: Info.Torn is its size, from byte Info.Valid to the end.
// Damage, a bad entry header with data after it or a complete entry whose
// checksum fails, is ErrCorrupt (wrapped, naming the file and the bytes);
// Info then describes the valid entries before it, Info.Valid being the
// offset of the damaged entry, and Drop can set the rest aside.
func Read(path string, fn func(seq uint64, payload []byte) error) (Info, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return Info{}, nil
	}
	if err != nil {
		return Info{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Info{}, err
	}
	return scan(f, fi.Size(), path, fn)
}

// scan reads a log of size bytes from r; fn may be nil.
func scan(r io.Reader, size int64, name string, fn func(uint64, []byte) error) (Info, error) {
	var info Info
	if size == 0 {
		return info, nil // created, header not yet written
	}
	br := bufio.NewReaderSize(r, 1<<16)
	var head [headerSize]byte
	if n, err := io.ReadFull(br, head[:]); err != nil {
		if m := min(n, len(magic)); size < int64(headerSize) && bytes.Equal(head[:m], []byte(magic)[:m]) {
			info.Torn = size // a header torn by a crash
			return info, nil
		}
		return info, fmt.Errorf("wal: %s: not a write-ahead log", name)
	}
	if string(head[:len(magic)]) != magic {
		return info, fmt.Errorf("wal: %s: not a write-ahead log", name)
	}
	if v := binary.LittleEndian.Uint32(head[len(magic):]); v != version {
		return info, fmt.Errorf("wal: %s: version %d, this nmfstream reads %d", name, v, version)
	}
	pos := int64(headerSize)
	info.Valid = pos
	var buf []byte
	torn := func() (Info, error) {
		info.Torn = size - pos
		return info, nil
	}
	for pos < size {
		var eh [entryHead]byte
		if _, err := io.ReadFull(br, eh[:]); err != nil {
			return torn() // a header that runs past the end
		}
		n := int64(binary.LittleEndian.Uint32(eh[0:4]))
		seq := binary.LittleEndian.Uint64(eh[4:12])
		if crc32.Checksum(eh[:12], castagnoli) != binary.LittleEndian.Uint32(eh[12:16]) || n == 0 ||
			(info.Entries > 0 && seq != info.Last+1) {
			// A bad header: a torn tail if nothing but zeros follows (a
			// crash can extend a file with zeros), else corruption.
			zeros, err := onlyZeros(br)
			if err != nil {
				return info, fmt.Errorf("wal: %s: %w", name, err)
			}
			if zeros && allZero(eh[:]) {
				return torn()
			}
			return info, fmt.Errorf("%w: %s: bad entry header at byte %d (after sequence number %d)", ErrCorrupt, name, pos, info.Last)
		}
		end := pos + entryHead + n
		if end > size {
			return torn() // checked before allocating n bytes
		}
		if int64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(br, buf); err != nil {
			return info, fmt.Errorf("wal: %s: %w", name, err)
		}
		if crc32.Checksum(buf, castagnoli) != binary.LittleEndian.Uint32(eh[16:20]) {
			// A complete entry whose checksum fails is damage, even the
			// last one: a crash cuts an entry short, it does not change
			// the bytes of one written whole (a flipped byte must not
			// pass for a torn tail and lose an acknowledged request).
			return info, fmt.Errorf("%w: %s: entry %d (bytes %d to %d) fails its checksum", ErrCorrupt, name, seq, pos, end)
		}
		if fn != nil {
			if err := fn(seq, buf); err != nil {
				return info, err
			}
		}
		if info.Entries == 0 {
			info.First = seq
		}
		info.Entries++
		info.Last = seq
		pos = end
		info.Valid = pos
	}
	return info, nil
}

func onlyZeros(r io.Reader) (bool, error) {
	var b [4096]byte
	for {
		n, err := r.Read(b[:])
		if !allZero(b[:n]) {
			return false, nil
		}
		if err == io.EOF {
			return true, nil
		}
		if err != nil {
			return false, err
		}
	}
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// Policy says when Commit makes an entry durable.
type Policy int

const (
	// SyncAlways fsyncs the log before Commit returns; callers that
	// commit at the same time share one fsync (group commit). An
	// acknowledged entry survives a machine crash.
	SyncAlways Policy = iota
	// SyncInterval returns from Commit once the entry is written to the
	// operating system; SyncLoop fsyncs periodically. An acknowledged
	// entry survives the death of the process; a machine crash may lose
	// the entries of the last interval.
	SyncInterval
	// SyncNever never fsyncs but on Truncate and Close: entries survive
	// the death of the process, and a machine crash may lose any of them.
	SyncNever
)

// ParsePolicy parses "always", "interval" or "never".
func ParsePolicy(s string) (Policy, error) {
	switch s {
	case "always":
		return SyncAlways, nil
	case "interval":
		return SyncInterval, nil
	case "never":
		return SyncNever, nil
	}
	return 0, fmt.Errorf("wal: unknown fsync policy %q (always, interval or never)", s)
}

func (p Policy) String() string {
	switch p {
	case SyncAlways:
		return "always"
	case SyncInterval:
		return "interval"
	case SyncNever:
		return "never"
	}
	return fmt.Sprintf("Policy(%d)", int(p))
}

// Writer appends entries to a log file. Append, Truncate and Close must be
// called by one goroutine at a time (the log's owner); Commit, Sync and
// SyncLoop may be called from any goroutine at once.
type Writer struct {
	// Policy is the durability Commit gives; set it before the first
	// Commit. The zero value is SyncAlways.
	Policy Policy

	mu     sync.Mutex // guards f, last, size and err; held while writing
	f      *os.File
	path   string
	last   uint64 // sequence number of the last entry appended
	size   int64
	err    error // a failed write or sync: the log cannot go on
	syncMu sync.Mutex
	synced atomic.Uint64 // every entry up to it is durable
	syncs  atomic.Int64  // fsyncs made by Sync
}

// Syncs returns the number of fsyncs Sync has made: with SyncAlways and
// concurrent callers, fewer than the entries committed (group commit).
func (w *Writer) Syncs() int64 { return w.syncs.Load() }

// OpenWriter opens the log at path for appending, creating it (and its
// directory) if needed. It reads the log to find its end, sets a torn tail
// aside (as Drop does), and numbers the next entry one past the larger of the log's last
// entry and after (the last sequence number the caller has seen, say in
// a checkpoint, so that numbers keep increasing across Truncate). A
// corrupt log is an error.
func OpenWriter(path string, after uint64) (*Writer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	w, err := openWriter(f, path, after)
	if err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

func openWriter(f *os.File, path string, after uint64) (*Writer, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	info, err := scan(f, fi.Size(), path, nil)
	if err != nil {
		return nil, err
	}
	w := &Writer{f: f, path: path, last: max(after, info.Last), size: info.Valid}
	if info.Valid < int64(headerSize) {
		if _, err := dropTail(f, path, 0, fi.Size()); err != nil {
			return nil, err // a header torn by a crash, set aside too
		}
		if err := w.reset(); err != nil {
			return nil, err
		}
	} else if info.Torn > 0 {
		if _, err := dropTail(f, path, info.Valid, fi.Size()); err != nil {
			return nil, err
		}
	}
	if _, err := f.Seek(w.size, io.SeekStart); err != nil {
		return nil, err
	}
	w.synced.Store(w.last)
	return w, nil
}

// reset cuts the file to a fresh header and syncs it; mu must be held.
func (w *Writer) reset() error {
	if err := w.f.Truncate(0); err != nil {
		return err
	}
	var head [headerSize]byte
	copy(head[:], magic)
	binary.LittleEndian.PutUint32(head[len(magic):], version)
	if _, err := w.f.WriteAt(head[:], 0); err != nil {
		return err
	}
	if _, err := w.f.Seek(int64(headerSize), io.SeekStart); err != nil {
		return err
	}
	w.size = int64(headerSize)
	return w.f.Sync()
}

// Last returns the sequence number of the last entry appended (or the
// number OpenWriter started after).
func (w *Writer) Last() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

// Size returns the size of the log file in bytes.
func (w *Writer) Size() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.size
}

// Append writes payload as the next entry and returns its sequence
// number. The entry is in the operating system's cache when Append
// returns; Commit makes it durable. payload must not be empty nor longer
// than MaxEntry. After a failed write the Writer returns that error
// forever: the log's end is unknown.
func (w *Writer) Append(payload []byte) (uint64, error) {
	if len(payload) == 0 || int64(len(payload)) > MaxEntry {
		return 0, fmt.Errorf("wal: entry of %d bytes (want 1 to %d)", len(payload), int64(MaxEntry))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return 0, w.err
	}
	seq := w.last + 1
	var eh [entryHead]byte
	binary.LittleEndian.PutUint32(eh[0:4], uint32(len(payload)))
	binary.LittleEndian.PutUint64(eh[4:12], seq)
	binary.LittleEndian.PutUint32(eh[12:16], crc32.Checksum(eh[:12], castagnoli))
	binary.LittleEndian.PutUint32(eh[16:20], crc32.Checksum(payload, castagnoli))
	if _, err := w.f.Write(eh[:]); err != nil {
		w.err = fmt.Errorf("wal: %s: %w", w.path, err)
		return 0, w.err
	}
	if _, err := w.f.Write(payload); err != nil {
		w.err = fmt.Errorf("wal: %s: %w", w.path, err)
		return 0, w.err
	}
	w.last = seq
	w.size += entryHead + int64(len(payload))
	return seq, nil
}

// Commit makes the entry seq (and every one before it) as durable as
// Policy asks, and returns once it is.
func (w *Writer) Commit(seq uint64) error {
	if w.Policy != SyncAlways {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.err
	}
	return w.Sync(seq)
}

// Sync fsyncs the log unless every entry up to seq is durable already.
// Callers that arrive while an fsync runs wait for it and then share the
// next one: n concurrent callers cost about two fsyncs, not n.
func (w *Writer) Sync(seq uint64) error {
	if w.synced.Load() >= seq {
		return nil
	}
	w.syncMu.Lock()
	defer w.syncMu.Unlock()
	if w.synced.Load() >= seq {
		return nil // the fsync this caller waited for covered seq
	}
	w.mu.Lock()
	f, upto, err := w.f, w.last, w.err
	w.mu.Unlock()
	if err != nil {
		return err
	}
	w.syncs.Add(1)
	if err := f.Sync(); err != nil {
		w.mu.Lock()
		w.err = fmt.Errorf("wal: %s: %w", w.path, err)
		w.mu.Unlock()
		return w.err
	}
	if upto > w.synced.Load() {
		w.synced.Store(upto)
	}
	return nil
}

// SyncLoop fsyncs the log every interval until ctx is done, then once
// more; it is SyncInterval's other half. It returns the first fsync error,
// or nil.
func (w *Writer) SyncLoop(ctx context.Context, every time.Duration) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return w.Sync(w.Last())
		case <-t.C:
			if err := w.Sync(w.Last()); err != nil {
				return err
			}
		}
	}
}

// Truncate drops every entry: the caller has made their effects durable
// elsewhere (a checkpoint that records Last). Sequence numbers go on from
// Last.
func (w *Writer) Truncate() error {
	w.syncMu.Lock()
	defer w.syncMu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if err := w.reset(); err != nil {
		w.err = fmt.Errorf("wal: %s: %w", w.path, err)
		return w.err
	}
	w.synced.Store(w.last)
	return nil
}

// Close syncs and closes the log.
func (w *Writer) Close() error {
	err := w.Sync(w.Last())
	w.mu.Lock()
	defer w.mu.Unlock()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		w.err = errors.New("wal: closed")
	}
	return err
}

// Drop sets aside the bytes of the log at path from offset valid to its
// end (a torn tail, or everything from a damaged entry on, as Read
// reported them): it copies them to a new file next to the log, named
// <path>.dropped-<valid>[.n], syncs it, and only then truncates the log to
// valid bytes. Nothing is rewritten away: the dropped bytes stay on disk
// for inspection or repair. It returns the file they were saved to, or ""
// when there was nothing after valid.
func Drop(path string, valid int64) (string, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	return dropTail(f, path, valid, fi.Size())
}

// dropTail saves f's bytes [valid, size) aside and truncates f to valid.
func dropTail(f *os.File, path string, valid, size int64) (string, error) {
	if valid < 0 || valid >= size {
		return "", nil
	}
	aside := fmt.Sprintf("%s.dropped-%d", path, valid)
	out, err := os.OpenFile(aside, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	for n := 1; errors.Is(err, os.ErrExist); n++ {
		aside = fmt.Sprintf("%s.dropped-%d.%d", path, valid, n)
		out, err = os.OpenFile(aside, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	}
	if err != nil {
		return "", fmt.Errorf("wal: setting aside bytes %d to %d of %s: %w", valid, size, path, err)
	}
	_, err = io.Copy(out, io.NewSectionReader(f, valid, size-valid))
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	if err != nil {
		return "", fmt.Errorf("wal: setting aside bytes %d to %d of %s: %w", valid, size, path, err)
	}
	if err := f.Truncate(valid); err != nil {
		return "", err
	}
	return aside, f.Sync()
}

// syncDir fsyncs a directory, so that a file created in it survives a
// crash of the machine.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
