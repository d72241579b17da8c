package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/pipeline"
	"github.com/nmfstream/nmfstream/sources"
	"github.com/nmfstream/nmfstream/stages"
)

// A checkpoint file is
//
//	"nmfstream-ckpt\x00\x00" (16 bytes) | version (uint32, little endian) |
//	payload: a gob-encoded checkpoint | payload length (uint64) |
//	SHA-256 of the payload (32 bytes)
//
// gob stores float64 bits exactly, so a resumed stream continues with the
// very same numbers; the checksum turns a flipped bit into an error
// instead of a wrong state.
const (
	checkpointMagic   = "nmfstream-ckpt\x00\x00"
	checkpointVersion = 3
	checkpointTrailer = 8 + sha256.Size
)

// onlineConfig is the configuration of the online learner: the part of a
// checkpoint that must not change across a resume.
type onlineConfig struct {
	Method    string // as --method names it; "" means gnmf
	Beta      float64
	Rank      int
	Neighbors int
	Window    int
	Alpha     float64
	Batch     int
	Seed      uint64
	Predictor int
	Vote      int
	Metric    int
	Sweeps    int
	Forget    float64
	SearchDim int
	Revisit   int
}

// checkpoint is the whole state of a stream.
type checkpoint struct {
	Version int
	Config  onlineConfig
	Input   inputID // what stream read; zero for serve
	Output  outputState
	State   *stages.LearnerState

	// WALSeq is the sequence number of the last entry of serve's
	// write-ahead log that State includes; 0 for stream.
	WALSeq uint64
	// Recent holds serve's recent records (GET /v1/records/{id}), oldest
	// first; nil for stream.
	Recent []predictionJSON
}

// outputState is how far stream's outputs had been written, and made
// durable, when the checkpoint was taken: a resumed run continues them
// from there, dropping what a crashed run wrote after it.
type outputState struct {
	Out, Rejects           string // paths, "" for none
	OutBytes, RejectsBytes int64
}

// inputID identifies a stream's input file, so that a resume on another
// input is refused: its path, size and the SHA-256 of its first MiB. An
// input that grows at its end (a log being appended to) keeps its
// identity as long as its first MiB does not change.
type inputID struct {
	Path   string
	Size   int64
	Prefix [sha256.Size]byte
}

// identify returns path's identity; stdin ("-") has only a path.
func identify(path string) (inputID, error) {
	id := inputID{Path: path}
	if path == "-" || path == "" {
		return id, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return id, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return id, err
	}
	if fi.IsDir() {
		return id, nil // an image folder: its path only
	}
	id.Size = fi.Size()
	h := sha256.New()
	if _, err := io.CopyN(h, f, 1<<20); err != nil && err != io.EOF {
		return id, err
	}
	h.Sum(id.Prefix[:0])
	return id, nil
}

// sameInput returns an error with advice if now is not the input the
// checkpoint was taken on. A file that only grew is the same input.
func (id inputID) sameInput(now inputID, ckpt string) error {
	if id.Path == "" || id.Path == "-" || now.Path == "-" {
		return nil
	}
	if id.Prefix != now.Prefix || now.Size < id.Size {
		return fmt.Errorf("%s was taken on %s (%d bytes); %s (%d bytes) is another input: pass the same input to resume, or remove the checkpoint to start over",
			ckpt, id.Path, id.Size, now.Path, now.Size)
	}
	return nil
}

// learner returns a fresh Learner for c. Its graph search and walks use
// every core (pipeline.Split over GOMAXPROCS); the results are those of
// one core.
func (c onlineConfig) learner() *stages.Learner {
	split := pipeline.Split(runtime.GOMAXPROCS(0))
	return &stages.Learner{
		Model: &model.Online{
			Method:    c.Method,
			Rank:      c.Rank,
			Alpha:     c.Alpha,
			Beta:      c.Beta,
			Graph:     graph.KNN{K: c.Neighbors, Window: c.Window},
			Sweeps:    c.Sweeps,
			Forget:    c.Forget,
			SearchDim: c.SearchDim,
			Revisit:   model.Revisit(c.Revisit),
			Src:       rand.NewPCG(c.Seed, c.Seed),
			Split:     split,
		},
		Split:     split,
		Predictor: stages.Predictor(c.Predictor),
		Neighbors: c.Vote,
		Metric:    classify.Metric(c.Metric),
	}
}

// saveCheckpoint writes cp to path atomically: to a temporary file in the
// same directory, synced, then renamed over path, so that a crash (even
// kill -9) leaves either the old checkpoint or the new one, never half of
// one.
func saveCheckpoint(path string, cp *checkpoint) (err error) {
	cp.Version = checkpointVersion
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	var head [len(checkpointMagic) + 4]byte
	copy(head[:], checkpointMagic)
	binary.LittleEndian.PutUint32(head[len(checkpointMagic):], checkpointVersion)
	if _, err := bw.Write(head[:]); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(bw, h)}
	if err := gob.NewEncoder(cw).Encode(cp); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	var tail [checkpointTrailer]byte
	binary.LittleEndian.PutUint64(tail[:8], uint64(cw.n))
	h.Sum(tail[8:8])
	if _, err := bw.Write(tail[:]); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if d, err := os.Open(dir); err == nil { // make the rename durable
		d.Sync()
		d.Close()
	}
	return nil
}

// errNoCheckpoint reports that the checkpoint file does not exist.
var errNoCheckpoint = errors.New("no checkpoint")

// loadCheckpoint reads the checkpoint at path, or returns errNoCheckpoint.
func loadCheckpoint(path string) (*checkpoint, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, errNoCheckpoint
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return readCheckpoint(f, fi.Size(), path)
}

// readCheckpoint reads a checkpoint of size bytes from r, checking its
// magic, version and checksum before decoding it.
func readCheckpoint(r io.Reader, size int64, name string) (*checkpoint, error) {
	corrupt := func(why string) error {
		return fmt.Errorf("%s: corrupt checkpoint (%s): remove it to start over, or restore a copy", name, why)
	}
	var head [len(checkpointMagic) + 4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil || string(head[:len(checkpointMagic)]) != checkpointMagic {
		return nil, fmt.Errorf("%s: not an nmfstream checkpoint", name)
	}
	if v := binary.LittleEndian.Uint32(head[len(checkpointMagic):]); v != checkpointVersion {
		return nil, fmt.Errorf("%s: checkpoint version %d, this nmfstream reads %d: finish the stream with the version that wrote it, or remove the checkpoint to start over", name, v, checkpointVersion)
	}
	n := size - int64(len(head)) - checkpointTrailer
	if n <= 0 {
		return nil, corrupt("truncated")
	}
	h := sha256.New()
	payload := io.TeeReader(io.LimitReader(r, n), h)
	var cp checkpoint
	decErr := gob.NewDecoder(bufio.NewReaderSize(payload, 1<<20)).Decode(&cp)
	if _, err := io.Copy(io.Discard, payload); err != nil {
		return nil, err
	}
	var tail [checkpointTrailer]byte
	if _, err := io.ReadFull(r, tail[:]); err != nil {
		return nil, corrupt("truncated")
	}
	if binary.LittleEndian.Uint64(tail[:8]) != uint64(n) || !bytes.Equal(h.Sum(nil), tail[8:]) {
		return nil, corrupt("checksum mismatch")
	}
	if decErr != nil {
		return nil, corrupt(decErr.Error())
	}
	if cp.State == nil {
		return nil, fmt.Errorf("%s: checkpoint has no state", name)
	}
	return &cp, nil
}

// restore returns a Learner in the state of cp.
func (cp *checkpoint) restore() (*stages.Learner, error) {
	l := cp.Config.learner()
	if err := l.Restore(cp.State); err != nil {
		return nil, err
	}
	return l, nil
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// isCheckpoint reports whether the file at path begins as a checkpoint
// does; a missing file is not one.
func isCheckpoint(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	var magic [len(checkpointMagic)]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil {
		return false, nil
	}
	return string(magic[:]) == checkpointMagic, nil
}

// modelOrCheckpoint sorts out --model and --checkpoint of stream and serve
// (DESIGN.md §6). --checkpoint C is the state they resume from and write.
// --model M names a fitted model, which is read and never written; the old
// spelling --model CKPT, M being a checkpoint or not existing yet, is a
// deprecated alias of --checkpoint and is warned about on stderr. It
// returns the checkpoint path to use ("" for none) and the fitted model
// (nil for none).
func modelOrCheckpoint(cmd, modelPath, ckptPath string, stderr io.Writer) (string, *model.Snapshot, error) {
	if modelPath == "" {
		return ckptPath, nil, nil
	}
	ck, err := isCheckpoint(modelPath)
	if errors.Is(err, os.ErrNotExist) || ck {
		if ckptPath != "" {
			if ck {
				return "", nil, fmt.Errorf("%w: --model %s is a checkpoint, and --checkpoint %s is given too: give the checkpoint once, as --checkpoint", errUsage, modelPath, ckptPath)
			}
			return "", nil, fmt.Errorf("--model %s: no such file (--model names a fitted model to read, written by fit --save)", modelPath)
		}
		warnDeprecated(stderr, cmd, "--model CKPT", "--checkpoint CKPT")
		return modelPath, nil, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("--model %s: %w", modelPath, err)
	}
	snap, err := sources.LoadModel(modelPath)
	if err != nil {
		return "", nil, fmt.Errorf("--model %s: neither a fitted model (fit --save) nor a checkpoint (--checkpoint): %w", modelPath, err)
	}
	return ckptPath, snap, nil
}
