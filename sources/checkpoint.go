package sources

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
)

// checkpointMagic is sinks.CheckpointMagic, which begins a checkpoint file
// (see sinks.WriteCheckpoint for the format).
const checkpointMagic = "nmfstream-ckpt\x00\x00"

// ErrNotCheckpoint reports a file that does not begin as a checkpoint.
var ErrNotCheckpoint = errors.New("sources: not an nmfstream checkpoint")

// ErrCorruptCheckpoint is wrapped by the errors of ReadCheckpoint for a
// checkpoint that is truncated or whose checksum does not match.
var ErrCorruptCheckpoint = errors.New("sources: corrupt checkpoint")

// CheckpointVersionError reports a checkpoint of another version.
type CheckpointVersionError struct {
	Got, Want uint32
}

func (e *CheckpointVersionError) Error() string {
	return fmt.Sprintf("sources: checkpoint version %d, want %d", e.Got, e.Want)
}

// IsCheckpoint reports whether r begins as a checkpoint does.
func IsCheckpoint(r io.Reader) bool {
	var magic [len(checkpointMagic)]byte
	_, err := io.ReadFull(r, magic[:])
	return err == nil && string(magic[:]) == checkpointMagic
}

// ReadCheckpoint reads a checkpoint of size bytes (written by
// sinks.WriteCheckpoint) from r into v, a pointer. It checks the magic
// number (ErrNotCheckpoint), the version (*CheckpointVersionError) and
// the payload's length and SHA-256 (ErrCorruptCheckpoint) before it
// decodes anything, so that a damaged file cannot steer the decoder; it
// reads the payload twice.
func ReadCheckpoint(r io.ReaderAt, size int64, version uint32, v any) error {
	var head [len(checkpointMagic) + 4]byte
	if _, err := r.ReadAt(head[:], 0); err != nil || string(head[:len(checkpointMagic)]) != checkpointMagic {
		return ErrNotCheckpoint
	}
	if got := binary.LittleEndian.Uint32(head[len(checkpointMagic):]); got != version {
		return &CheckpointVersionError{Got: got, Want: version}
	}
	const trailer = 8 + sha256.Size
	start := int64(len(head))
	n := size - start - trailer
	if n <= 0 {
		return fmt.Errorf("%w (truncated)", ErrCorruptCheckpoint)
	}
	var tail [trailer]byte
	if _, err := r.ReadAt(tail[:], start+n); err != nil {
		return fmt.Errorf("%w (truncated)", ErrCorruptCheckpoint)
	}
	if binary.LittleEndian.Uint64(tail[:8]) != uint64(n) {
		return fmt.Errorf("%w (truncated, or a length that does not match)", ErrCorruptCheckpoint)
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(r, start, n)); err != nil {
		return err
	}
	if !bytes.Equal(h.Sum(nil), tail[8:]) {
		return fmt.Errorf("%w (checksum mismatch)", ErrCorruptCheckpoint)
	}
	if err := gob.NewDecoder(bufio.NewReaderSize(io.NewSectionReader(r, start, n), 1<<20)).Decode(v); err != nil {
		return fmt.Errorf("%w (%v)", ErrCorruptCheckpoint, err)
	}
	return nil
}
