package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/nmfstream/nmfstream/record"

	"github.com/nmfstream/nmfstream/sources"
	"github.com/nmfstream/nmfstream/wal"
)

// A write-ahead log entry of serve is one request: a kind byte, then the
// request's body as it came (replay parses it again, as the handler did).
const (
	entryJSONL  = 'j' // POST /v1/records, JSON lines
	entryArrow  = 'a' // POST /v1/records, an Arrow IPC stream
	entryLabels = 'l' // POST /v1/labels
)

// capture reads body whole into a log entry of the given kind when serve
// has a write-ahead log, and returns the entry and a reader of the body;
// without a log it returns body as is.
func (s *server) capture(kind byte, body io.Reader) ([]byte, io.Reader, error) {
	if s.log == nil {
		return nil, body, nil
	}
	var buf bytes.Buffer
	buf.WriteByte(kind)
	if _, err := buf.ReadFrom(body); err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), bytes.NewReader(buf.Bytes()[1:]), nil
}

// commit waits until r's log entry is as durable as --fsync asks.
func (s *server) commit(r *request) error {
	if s.log == nil || r.seq == 0 {
		return nil
	}
	if err := s.log.Commit(r.seq); err != nil {
		return fmt.Errorf("learned but not made durable: %w", err)
	}
	return nil
}

// resume takes the service's own state from the checkpoint it resumes
// from: the last log entry it covers and the recent records.
func (s *server) resume(cp *checkpoint) {
	s.walSeq = cp.WALSeq
	for _, p := range cp.Recent {
		s.recent.addJSON(s.recentMax, p)
	}
}

// openWAL opens the write-ahead log at path, replays the entries the
// checkpoint lacks (those after its WALSeq) into the learner, and saves a
// checkpoint that covers them, which empties the log. Without a
// checkpoint file it saves one first, so that a log is never replayed
// under other flags than those it was written with. It returns the number
// of entries replayed. It runs before the server accepts requests.
//
// A torn tail (the partial last write of a crash) is dropped with a
// warning naming its bytes; a damaged entry (wal.ErrCorrupt: a complete
// entry whose checksum fails) refuses to start unless recover, which
// replays the entries before it. Either way the dropped bytes are set
// aside in <path>.dropped-<offset> (wal.Drop), never rewritten away.
func (s *server) openWAL(path string, recover bool) (int, error) {
	_, err := os.Stat(s.ckpt)
	fresh := errors.Is(err, os.ErrNotExist)
	after := s.walSeq
	replayed := 0
	info, err := wal.Read(path, func(seq uint64, e []byte) error {
		if seq <= after {
			return nil // the checkpoint has it: written before a crash emptied the log
		}
		if fresh {
			return fmt.Errorf("%s holds acknowledged requests, and the checkpoint %s that it continues is missing: restore the checkpoint, or remove the log to start over (losing them)", path, s.ckpt)
		}
		if err := s.replay(e); err != nil {
			return fmt.Errorf("%s: entry %d: %w", path, seq, err)
		}
		replayed++
		return nil
	})
	if err := s.dropDamage(path, info, err, recover); err != nil {
		return 0, err
	}
	s.walSeq = max(after, info.Last)
	if s.log, err = wal.OpenWriter(path, s.walSeq); err != nil {
		return 0, fmt.Errorf("--wal: %w", err)
	}
	s.log.Policy = s.fsync
	if fresh || replayed > 0 {
		if err := s.save(); err != nil {
			s.log.Close()
			s.log = nil
			return 0, err
		}
	}
	return replayed, nil
}

// dropDamage handles what wal.Read found after the valid entries of the
// log at path (info, and its error readErr): a torn tail is set aside with
// a warning; damage is an error unless recover, when it is set aside too.
func (s *server) dropDamage(path string, info wal.Info, readErr error, recover bool) error {
	size := info.Valid + info.Torn
	switch {
	case errors.Is(readErr, wal.ErrCorrupt) && !recover:
		return fmt.Errorf("--wal: %w; refusing to start: acknowledged requests may be in the damaged part. "+
			"Restart with --wal-recover to replay the %d entries before byte %d and set the rest aside (kept in %s.dropped-%d)", readErr, info.Entries, info.Valid, path, info.Valid)
	case errors.Is(readErr, wal.ErrCorrupt):
		if fi, err := os.Stat(path); err == nil {
			size = fi.Size()
		}
	case readErr != nil:
		return fmt.Errorf("--wal: %w", readErr)
	case info.Torn == 0:
		return nil
	}
	aside, err := wal.Drop(path, info.Valid)
	if err != nil {
		return fmt.Errorf("--wal: %w", err)
	}
	what := "a torn tail (the partial last write of a crash)"
	if readErr != nil {
		what = "a damaged part (--wal-recover: " + readErr.Error() + ")"
	}
	stderr := s.stderr
	if stderr == nil {
		stderr = io.Discard
	}
	fmt.Fprintf(stderr, "nmfstream serve: warning: %s: dropped %s, bytes %d to %d, after %d valid entries; the bytes are kept in %s\n",
		path, what, info.Valid, size, info.Entries, aside)
	return nil
}

// replay applies one log entry to the learner as the pipeline did: the
// records, or the labels (labelsBatch), at the offsets that follow those
// counted.
func (s *server) replay(e []byte) error {
	if len(e) == 0 {
		return fmt.Errorf("empty entry")
	}
	l := s.learner
	body := bytes.NewReader(e[1:])
	switch e[0] {
	case entryLabels, entryJSONL, entryArrow:
		var batches []*record.Batch
		var err error
		switch e[0] {
		case entryLabels:
			var labels []sources.LabelLine
			if labels, _, err = sources.ReadJSONLabels(body, s.limits); len(labels) > 0 {
				batches = []*record.Batch{labelsBatch(labels)}
			}
		case entryArrow:
			batches, err = s.readArrowRecords(body)
		default:
			batches, err = sources.ReadJSONLines(body, s.cfg.Batch, s.limits)
		}
		if err != nil {
			return err
		}
		// The batches' offsets run on across the body: they follow the
		// records counted before the request, as the pipeline's split
		// numbers them.
		base := l.Counters().Records
		for _, b := range batches {
			shiftOffsets(b, base)
		}
		for _, b := range batches {
			st, err := l.Learn(b)
			if err != nil {
				return err
			}
			for _, p := range st.Predictions {
				s.recent.add(s.recentMax, p)
			}
		}
		return nil
	}
	return fmt.Errorf("unknown entry kind %q", e[0])
}
