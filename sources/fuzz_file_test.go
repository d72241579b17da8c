package sources

import (
	"bytes"
	"os"
	"path/filepath"
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
	// A file whose body has no schema message (the schema is in its
	// footer only), as the JavaScript Arrow library writes them.
	js, err := os.ReadFile(filepath.Join("testdata", "js", "js-dense.arrow"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(js)
	f.Fuzz(func(t *testing.T, data []byte) {
		tm := time.AfterFunc(10*time.Second, func() { panic("FuzzArrowFile: input took over 10 s") })
		defer tm.Stop()
		src := NewArrowFile(bytes.NewReader(data))
		src.BatchSize = 3
		src.MaxImagePixels = 1 << 16
		src.MaxDim, src.MaxRecords = 1<<10, 1<<12 // small limits: thousands of inputs a second
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
		src.MaxDim, src.MaxRecords = 1<<10, 1<<12 // small limits: thousands of inputs a second
		drain(t, src)
	})
}
