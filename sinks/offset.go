package sinks

import (
	"fmt"
	"io"
)

// offsetWriter gives an io.Writer the one Seek that ipc.FileWriter makes,
// Seek(0, io.SeekCurrent), by counting the bytes written. The Arrow result
// sink and WriteModel both use it, so that an Arrow IPC file can go to a
// pipe or a bufio.Writer.
type offsetWriter struct {
	w io.Writer
	n int64
}

func (o *offsetWriter) Write(b []byte) (int, error) {
	n, err := o.w.Write(b)
	o.n += int64(n)
	return n, err
}

func (o *offsetWriter) Seek(off int64, whence int) (int64, error) {
	if off != 0 || whence != io.SeekCurrent {
		return o.n, fmt.Errorf("sinks: cannot seek an output stream")
	}
	return o.n, nil
}
