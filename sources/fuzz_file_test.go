package sources

import (
	"bytes"
	"testing"
	"time"
)

// FuzzArrowFile checks that no Arrow IPC file, however corrupt its footer,
// schema or batches, crashes, hangs or exhausts memory: NewArrowFile must
// read it or fail with an error.
func FuzzArrowFile(f *testing.F) {
	schemas, recs := arrowSeeds(f)
	for i, s := range schemas {
		f.Add(writeIPC(f, s, true, recs[i]...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tm := time.AfterFunc(10*time.Second, func() { panic("FuzzArrowFile: input took over 10 s") })
		defer tm.Stop()
		src := NewArrowFile(bytes.NewReader(data))
		src.BatchSize = 3
		src.MaxImagePixels = 1 << 16
		drain(t, src)
	})
}

// FuzzParquet is FuzzArrowFile for Parquet files.
func FuzzParquet(f *testing.F) {
	schemas, recs := arrowSeeds(f)
	for i, s := range schemas {
		f.Add(writeParquet(f, s, recs[i]...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tm := time.AfterFunc(10*time.Second, func() { panic("FuzzParquet: input took over 10 s") })
		defer tm.Stop()
		src := NewParquet(bytes.NewReader(data))
		src.BatchSize = 3
		src.MaxImagePixels = 1 << 16
		drain(t, src)
	})
}
