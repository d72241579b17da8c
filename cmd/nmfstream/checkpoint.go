package main

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/pipeline"
	"github.com/nmfstream/nmfstream/sinks"
	"github.com/nmfstream/nmfstream/sources"
	"github.com/nmfstream/nmfstream/stages"
)

// A checkpoint file is the format of sinks.WriteCheckpoint (magic,
// version, gob payload, length, SHA-256) with a checkpoint as its value;
// sources.ReadCheckpoint reads it. checkpointVersion names the layout of
// checkpoint: fields added since version 3 (WALSeq, Recent,
// inputID.Fingerprint) read as zero from older version 3 files, which gob
// allows, and builds that predate a field ignore it.
const (
	checkpointVersion = 3
	checkpointMagic   = sinks.CheckpointMagic
	checkpointTrailer = 8 + sha256.Size // payload length and SHA-256
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
	// SearchBasis is --search-basis; checkpoints written before it existed
	// read as 0, the search on the samples as they are.
	SearchBasis int
	// SearchFit is --search-fit, a model.SearchFit; checkpoints written
	// before it existed read as 0, the principal span, which their later
	// fits take.
	SearchFit int
	// Codes is the stages.CodeUse of the predictor; SpreadPower its
	// stages.Learner.SpreadPower. Checkpoints written before they existed
	// read as the defaults.
	Codes       int
	SpreadPower float64
	// SpreadMetric is stages.Learner.SpreadMetric; older checkpoints read
	// as 0, the samples' own graph.
	SpreadMetric float64
	// SpreadCodes is stages.Learner.SpreadCodes; older checkpoints read as
	// 0, its default.
	SpreadCodes float64
	// Q is --q, model.Online.Q; older checkpoints read as 0, its default.
	Q int
	// MaxNormRatio is --max-norm-ratio, stages.Featurize.MaxNormRatio.
	// Older checkpoints read as 0, its default.
	MaxNormRatio float64
	// MaxClasses and MaxWindowBytes are stages.Featurize's bounds of the
	// same names, which stream --nats and serve --nats set from
	// --max-classes and --max-window-bytes and the owners' learners apply;
	// 0 means none. stream leaves them 0 (unbounded), and serve applies its
	// own to its learner (server.limit) and leaves them 0 here, so their
	// checkpoints, and the settings of a namespace without them (omitted
	// from the JSON when 0), keep their bytes.
	MaxClasses     int   `json:",omitempty"`
	MaxWindowBytes int64 `json:",omitempty"`
	// GraphMetric is --graph-metric: 0 auto (model.Online.ChooseMetric),
	// else 1 + the graph.Metric held. Checkpoints and settings written
	// without it read as 0.
	GraphMetric int `json:",omitempty"`
	// NoCodeExpert is --code-expert=false, stages.Learner.NoCodeExpert.
	// Checkpoints and settings written without it read as false, the
	// expert in the mixture.
	NoCodeExpert bool `json:",omitempty"`
	// PriorPower is --prior-power, stages.Learner.PriorPower. Checkpoints
	// and settings written without it read as 0, its default.
	PriorPower float64 `json:",omitempty"`
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

// inputID identifies a stream's input, so that a resume on another input
// is refused: a file's path, size and the SHA-256 of its first MiB, and
// for every input (stdin and image folders too) the fingerprint of the
// first records it read. An input that grows at its end (a log being
// appended to) keeps its identity as long as its first MiB and its
// records before the checkpoint's offset do not change.
type inputID struct {
	Path   string
	Size   int64
	Prefix [sha256.Size]byte
	// Fingerprint is the stream's sources.Reader.Fingerprint of the records
	// before the checkpoint's offset (sources.FingerprintRecords of them at
	// most), which the resumed Reader checks as it skips them
	// (sources.Reader.Check). It is nil in checkpoints written before it
	// existed, which resume unchecked, and in stream --nats's and serve's.
	Fingerprint sources.Fingerprint
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

// changedInput returns err, the error of a stream resuming from
// checkpoint ckpt on input in, as it is, unless it holds a
// *sources.ChangedError (a record before the resume offset differs from
// the checkpoint's Fingerprint): then an error of its own naming the
// checkpoint, the input and the record, with advice.
func changedInput(err error, ckpt, in string) error {
	var ce *sources.ChangedError
	if !errors.As(err, &ce) {
		return err
	}
	if in == "-" {
		in = "stdin (--in -)"
	}
	return fmt.Errorf("%s was taken on another input than %s: its record %d differs from the one the checkpoint saw: pass the same input to resume, or remove the checkpoint to start over",
		ckpt, in, ce.Offset)
}

// learner returns a fresh Learner for c. Its graph search and walks use
// every core (pipeline.Split over GOMAXPROCS); the model's step runs on a
// goroutine of its own (Go), its parts on its core while the predictions
// run beside it, and on the core of whatever then waits for it too (a
// pipeline.Spare: Model.StepSplit and Model.Lend). The results are those
// of one core.
func (c onlineConfig) learner() *stages.Learner {
	split := pipeline.Split(runtime.GOMAXPROCS(0))
	spare := new(pipeline.Spare)
	return &stages.Learner{
		Model: &model.Online{
			Method:       c.Method,
			Rank:         c.Rank,
			Alpha:        c.Alpha,
			Beta:         c.Beta,
			Q:            c.Q,
			Graph:        graph.KNN{K: c.Neighbors, Window: c.Window, Metric: c.graphMetric()},
			Sweeps:       c.Sweeps,
			Forget:       c.Forget,
			SearchDim:    c.SearchDim,
			SearchBasis:  c.searchBasis(),
			ChooseMetric: c.GraphMetric == 0,
			SearchFit:    model.SearchFit(c.SearchFit),
			Revisit:      model.Revisit(c.Revisit),
			Src:          rand.NewPCG(c.Seed, c.Seed),
			Split:        split,
			StepSplit:    spare.Split,
			Lend:         spare.Lend,
		},
		Split:        split,
		Go:           pipeline.Go,
		Predictor:    stages.Predictor(c.Predictor),
		Codes:        stages.CodeUse(c.Codes),
		SpreadPower:  c.SpreadPower,
		SpreadMetric: c.SpreadMetric,
		SpreadCodes:  c.SpreadCodes,
		NoCodeExpert: c.NoCodeExpert,
		PriorPower:   c.PriorPower,
		Featurize:    stages.Featurize{MaxNormRatio: c.MaxNormRatio, MaxClasses: c.MaxClasses, MaxWindowBytes: c.MaxWindowBytes},
		Neighbors:    c.Vote,
		Metric:       classify.Metric(c.Metric),
	}
}

// graphMetric is the metric the model's graph starts with: the one held,
// else the Euclidean distance.
func (c onlineConfig) graphMetric() graph.Metric {
	if c.GraphMetric > 0 {
		return graph.Metric(c.GraphMetric - 1)
	}
	return graph.Euclidean
}

// searchBasis is the model's SearchBasis: none with --search-dim or with
// --codes off (raw samples only).
func (c onlineConfig) searchBasis() int {
	if c.SearchDim > 0 || stages.CodeUse(c.Codes) == stages.CodesOff {
		return 0
	}
	return max(c.SearchBasis, 0)
}

// saveCheckpoint writes cp to path atomically (sinks.SaveCheckpoint): a
// crash, even kill -9, leaves either the old checkpoint or the new one,
// never half of one.
func saveCheckpoint(path string, cp *checkpoint) error {
	cp.Version = checkpointVersion
	if err := sinks.SaveCheckpoint(path, checkpointVersion, cp); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// errNoCheckpoint reports that the checkpoint file does not exist.
var errNoCheckpoint = errors.New("no checkpoint")

// loadCheckpoint reads the checkpoint at path, or returns errNoCheckpoint.
func loadCheckpoint(path string) (*checkpoint, error) {
	f, size, err := openCheckpoint(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readCheckpoint(f, size, path)
}

// openCheckpoint opens the checkpoint file at path and returns its size, or
// errNoCheckpoint if there is none; the caller closes it.
func openCheckpoint(path string) (*os.File, int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, errNoCheckpoint
	}
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

// readCheckpoint reads a checkpoint of size bytes from r, checking its
// magic, version and checksum before decoding it; errors name the file
// and say what to do.
func readCheckpoint(r io.ReaderAt, size int64, name string) (*checkpoint, error) {
	var cp checkpoint
	err := sources.ReadCheckpoint(r, size, checkpointVersion, &cp)
	var ve *sources.CheckpointVersionError
	switch {
	case errors.Is(err, sources.ErrNotCheckpoint):
		return nil, fmt.Errorf("%s: not an nmfstream checkpoint", name)
	case errors.As(err, &ve) && ve.Got == natsCheckpointVersion:
		return nil, fmt.Errorf("%s is a checkpoint of stream --nats: resume it with --nats, or give another --checkpoint", name)
	case errors.As(err, &ve):
		return nil, fmt.Errorf("%s: checkpoint version %d, this nmfstream reads %d: finish the stream with the version that wrote it, or remove the checkpoint to start over", name, ve.Got, ve.Want)
	case errors.Is(err, sources.ErrCorruptCheckpoint):
		return nil, fmt.Errorf("%s: %v: remove it to start over, or restore a copy", name, strings.TrimPrefix(err.Error(), "sources: "))
	case err != nil:
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if cp.State == nil {
		return nil, fmt.Errorf("%s: checkpoint has no state", name)
	}
	return &cp, nil
}

// restore returns a Learner in the state of cp.
func (cp *checkpoint) restore() (*stages.Learner, error) {
	l := cp.Config.learner()
	if o := cp.State.Online; o != nil && o.K > 0 && o.K < l.Model.Rank && o.K <= o.Dim {
		// The rank was lowered to the stream's dimension before the first
		// fit (stages' capRank): the state has that rank, not --rank.
		l.Model.Rank = o.K
	}
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
	return sources.IsCheckpoint(f), nil
}

// modelOrCheckpoint sorts out --model and --checkpoint of stream and serve
// (docs/DESIGN.md §6). --checkpoint C is the state they resume from and write.
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
