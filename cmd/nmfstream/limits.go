package main

import (
	"errors"
	"flag"
	"strconv"

	"github.com/nmfstream/nmfstream/sources"
)

// maxDimFlag registers --max-dim on fs into dst, for the commands that read
// data; it becomes the sources.Opener's MaxDim. A value ≤ 0 is refused when
// parsed: the Opener would read it as its default, 2^20, silently.
func maxDimFlag(fs *flag.FlagSet, dst *int) {
	*dst = sources.DefaultMaxDim
	fs.Var(maxDimValue{dst}, "max-dim",
		"refuse inputs with more than `D` features per record (dense width, sparse dim, image width·height, IDX record), before allocating: the model keeps a dense D×K basis")
}

// maxDimValue is --max-dim's flag.Value: a positive number of features.
type maxDimValue struct{ p *int }

func (v maxDimValue) String() string {
	if v.p == nil { // the zero value the flag package makes for -help
		return ""
	}
	return strconv.Itoa(*v.p)
}

func (v maxDimValue) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, strconv.IntSize)
	if err != nil {
		return errors.New("want a whole number of features")
	}
	if n <= 0 {
		return errors.New("want a positive number of features per record")
	}
	*v.p = int(n)
	return nil
}
