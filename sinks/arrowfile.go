package sinks

import (
	"os"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// WriteArrowFile writes the one record rec (of schema) to a new Arrow IPC
// file at path, allocating with mem. It does not release rec. The file is
// closed before it returns; the first error of writing or closing is
// returned.
func WriteArrowFile(path string, schema *arrow.Schema, mem memory.Allocator, rec arrow.Record) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	if err == nil {
		err = w.Write(rec)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
