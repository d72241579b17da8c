package sources

import (
	"errors"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// TestParquetFailedOpenClose opens a source whose open fails as
// NewParquet's does when newParquetRecords refuses a column: with a typed
// nil *parquetRecords and an error. Next reports the error and Close
// returns without releasing the reader that was never made (it crashed
// fit and stream on a fuzzed Parquet file: SIGSEGV in
// (*parquetRecords).release from (*Arrow).Close).
func TestParquetFailedOpenClose(t *testing.T) {
	a := &Arrow{}
	a.open = func(memory.Allocator) (recordReader, *arrow.Schema, error) {
		var p *parquetRecords
		return p, nil, errors.New("a column the contract refuses")
	}
	if a.Next() || a.Err() == nil {
		t.Fatalf("a failed open read, err %v", a.Err())
	}
	if err := a.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	var p *parquetRecords
	p.Release() // a nil reader releases nothing
}
