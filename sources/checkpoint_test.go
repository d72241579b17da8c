package sources_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/nmfstream/nmfstream/sinks"
	"github.com/nmfstream/nmfstream/sources"
)

type ckptValue struct {
	Name  string
	X     []float64
	Count int64
}

// TestCheckpointFormat writes a checkpoint with sinks and reads it back,
// then flips every byte in turn: a flip in the magic is not a checkpoint,
// in the version another version, anywhere else corrupt; none decodes.
func TestCheckpointFormat(t *testing.T) {
	want := ckptValue{"state", []float64{0.1, 2, 1e-300}, 7}
	path := filepath.Join(t.TempDir(), "c.ckpt")
	if err := sinks.SaveCheckpoint(path, 3, &want); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !sources.IsCheckpoint(bytes.NewReader(good)) {
		t.Error("IsCheckpoint: false")
	}
	var got ckptValue
	if err := sources.ReadCheckpoint(bytes.NewReader(good), int64(len(good)), 3, &got); err != nil {
		t.Fatal(err)
	}
	if got.Name != want.Name || got.Count != want.Count || len(got.X) != 3 || got.X[2] != want.X[2] {
		t.Errorf("read %+v, want %+v", got, want)
	}
	var ve *sources.CheckpointVersionError
	if err := sources.ReadCheckpoint(bytes.NewReader(good), int64(len(good)), 4, &got); !errors.As(err, &ve) || ve.Got != 3 || ve.Want != 4 {
		t.Errorf("version 3 read as 4: %v", err)
	}
	magic := len(sinks.CheckpointMagic)
	for i := range good {
		b := bytes.Clone(good)
		b[i] ^= 0x20
		err := sources.ReadCheckpoint(bytes.NewReader(b), int64(len(b)), 3, &ckptValue{})
		switch {
		case i < magic:
			if !errors.Is(err, sources.ErrNotCheckpoint) {
				t.Errorf("magic byte %d flipped: %v", i, err)
			}
		case i < magic+4:
			if !errors.As(err, &ve) {
				t.Errorf("version byte %d flipped: %v", i, err)
			}
		default:
			if !errors.Is(err, sources.ErrCorruptCheckpoint) {
				t.Errorf("byte %d of %d flipped: %v, want ErrCorruptCheckpoint", i, len(b), err)
			}
		}
	}
	for _, n := range []int{0, magic + 4, len(good) / 2, len(good) - 1} {
		if err := sources.ReadCheckpoint(bytes.NewReader(good[:n]), int64(n), 3, &ckptValue{}); err == nil {
			t.Errorf("cut to %d bytes: no error", n)
		}
	}
}
