package sinks

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// A checkpoint file (written by WriteCheckpoint and SaveCheckpoint, read by
// sources.ReadCheckpoint) is
//
//	CheckpointMagic (16 bytes) | version (uint32, little endian) |
//	payload: a gob-encoded value | payload length (uint64, little endian) |
//	SHA-256 of the payload (32 bytes)
//
// gob stores float64 bits exactly, so a state read back continues with the
// very same numbers; the checksum turns a flipped bit into an error
// instead of a wrong state. The version is the caller's: it names the
// layout of the value, which the caller owns.
const CheckpointMagic = "nmfstream-ckpt\x00\x00"

// WriteCheckpoint writes v, gob-encoded, to w as a checkpoint of the given
// version.
func WriteCheckpoint(w io.Writer, version uint32, v any) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	var head [len(CheckpointMagic) + 4]byte
	copy(head[:], CheckpointMagic)
	binary.LittleEndian.PutUint32(head[len(CheckpointMagic):], version)
	if _, err := bw.Write(head[:]); err != nil {
		return fmt.Errorf("sinks: checkpoint: %w", err)
	}
	h := sha256.New()
	cw := &offsetWriter{w: io.MultiWriter(bw, h)}
	if err := gob.NewEncoder(cw).Encode(v); err != nil {
		return fmt.Errorf("sinks: checkpoint: %w", err)
	}
	var tail [8 + sha256.Size]byte
	binary.LittleEndian.PutUint64(tail[:8], uint64(cw.n))
	h.Sum(tail[8:8])
	if _, err := bw.Write(tail[:]); err != nil {
		return fmt.Errorf("sinks: checkpoint: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("sinks: checkpoint: %w", err)
	}
	return nil
}

// SaveCheckpoint writes v to path atomically: to a temporary file in the
// same directory, synced, then renamed over path, and the directory
// synced, so that a crash (even kill -9, or of the machine) leaves either
// the old checkpoint or the new one, never half of one.
func SaveCheckpoint(path string, version uint32, v any) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("sinks: checkpoint: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := WriteCheckpoint(f, version, v); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sinks: checkpoint: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("sinks: checkpoint: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("sinks: checkpoint: %w", err)
	}
	if d, err := os.Open(dir); err == nil { // make the rename durable
		d.Sync()
		d.Close()
	}
	return nil
}
