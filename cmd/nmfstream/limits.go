package main

import (
	"flag"

	"github.com/nmfstream/nmfstream/sources"
)

// maxDimFlag registers --max-dim on fs into dst, for the commands that read
// data; it becomes the sources.Opener's MaxDim.
func maxDimFlag(fs *flag.FlagSet, dst *int) {
	fs.IntVar(dst, "max-dim", sources.DefaultMaxDim,
		"refuse inputs with more than `D` features per record (dense width, sparse dim, image width·height, IDX record), before allocating: the model keeps a dense D×K basis")
}
