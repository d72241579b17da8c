package main

import (
	"bufio"
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

// A checkpoint file is a gob stream: the magic string, then a checkpoint
// value. gob stores float64 bits exactly, so a resumed stream continues with
// the very same numbers.
const (
	checkpointMagic   = "nmfstream-checkpoint"
	checkpointVersion = 2
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
	Input   string // the input path, for a sanity message
	State   *stages.LearnerState
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
	enc := gob.NewEncoder(bw)
	if err := enc.Encode(checkpointMagic); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := enc.Encode(cp); err != nil {
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
	return readCheckpoint(bufio.NewReaderSize(f, 1<<20), path)
}

func readCheckpoint(r io.Reader, name string) (*checkpoint, error) {
	dec := gob.NewDecoder(r)
	var magic string
	if err := dec.Decode(&magic); err != nil || magic != checkpointMagic {
		return nil, fmt.Errorf("%s: not an nmfstream checkpoint", name)
	}
	var cp checkpoint
	if err := dec.Decode(&cp); err != nil {
		return nil, fmt.Errorf("%s: corrupt checkpoint: %w", name, err)
	}
	if cp.Version != checkpointVersion {
		return nil, fmt.Errorf("%s: checkpoint version %d, this nmfstream reads %d", name, cp.Version, checkpointVersion)
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

// isCheckpoint reports whether the file at path begins as a checkpoint
// does; a missing file is not one.
func isCheckpoint(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	var magic string
	if err := gob.NewDecoder(bufio.NewReader(f)).Decode(&magic); err != nil {
		return false, nil
	}
	return magic == checkpointMagic, nil
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
