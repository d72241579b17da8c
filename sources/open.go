package sources

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow/go/v15/arrow/memory"
)

// Opener opens inputs by path with the options in its fields, like
// net.Dialer for net.Dial. The zero Opener uses every default.
type Opener struct {
	// BatchSize is the number of records per batch. If zero, it defaults
	// to 256.
	BatchSize int
	// Width and Height give the size images are resized to (image columns
	// and folders). If both are zero, the first image fixes them.
	Width, Height int
	// MaxImagePixels rejects larger images. If zero, it defaults to 1<<24.
	MaxImagePixels int
	// MaxDim bounds the feature dimension of every input (dense widths,
	// sparse dim, image Width·Height, IDX records); see Arrow.MaxDim. If
	// zero, it defaults to DefaultMaxDim.
	MaxDim int
	// Allocator allocates Arrow buffers. If nil, memory.DefaultAllocator.
	Allocator memory.Allocator
	// LabelColumn, IDColumn, TextColumn, Unlabeled and Header configure
	// CSV inputs; see CSV.
	LabelColumn, IDColumn, TextColumn Column
	Unlabeled                         string
	Header                            Header
	// Stdin is read for the path "-". If nil, os.Stdin.
	Stdin io.Reader
}

// Open opens path with the default options; see Opener.Open.
func Open(path string) (Source, error) {
	var o Opener
	return o.Open(path)
}

// Open returns a source for path, chosen by its form:
//
//   - "-": an Arrow IPC stream on standard input;
//   - a directory: an image folder (Images);
//   - *.arrow, *.arrows, *.feather: Arrow IPC, file or stream as the
//     content's magic number says (so a stream named .arrow still reads);
//   - *.parquet: Parquet;
//   - *.csv, *.csv.gz: CSV (gzip-compressed for .gz);
//   - *.idx, *.idx.gz, or a name containing "idx3-ubyte" (MNIST), optionally
//     with .gz: IDX images. A labels file found by replacing "images" and
//     "idx3" by "labels" and "idx1" in the name (MNIST naming), or by
//     inserting ".labels" before ".idx", is read as the labels.
//
// Open reads the header (schema) before returning, so an unusable file
// fails here rather than at the first Next. The caller must Close the
// source; Close closes the files Open opened.
func (o *Opener) Open(path string) (src Source, err error) {
	if path == "-" {
		in := o.Stdin
		if in == nil {
			in = os.Stdin
		}
		return o.ready(o.arrow(NewArrowStream(bufio.NewReader(in))), path)
	}
	if isDir(path) {
		m := NewImages(path)
		m.BatchSize, m.Width, m.Height, m.MaxImagePixels, m.MaxDim = o.BatchSize, o.Width, o.Height, o.MaxImagePixels, o.MaxDim
		return o.ready(m, path)
	}
	lower := strings.ToLower(filepath.Base(path))
	gz := strings.HasSuffix(lower, ".gz")
	base := strings.TrimSuffix(lower, ".gz")
	switch {
	case strings.HasSuffix(base, ".arrow"), strings.HasSuffix(base, ".arrows"), strings.HasSuffix(base, ".feather"):
		if gz {
			return nil, fmt.Errorf("sources: %s: compressed Arrow IPC is not supported", path)
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		var magic [6]byte
		n, _ := io.ReadFull(f, magic[:])
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			f.Close()
			return nil, err
		}
		var a *Arrow
		if n == 6 && string(magic[:]) == "ARROW1" {
			a = NewArrowFile(f)
		} else {
			a = NewArrowStream(bufio.NewReader(f))
		}
		a.closer = f
		return o.ready(o.arrow(a), path)
	case strings.HasSuffix(base, ".parquet"):
		if gz {
			return nil, fmt.Errorf("sources: %s: compressed Parquet files are not supported", path)
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		a := NewParquet(f)
		a.closer = f
		return o.ready(o.arrow(a), path)
	case strings.HasSuffix(base, ".csv"):
		r, c, err := openMaybeGzip(path, gz)
		if err != nil {
			return nil, err
		}
		s := NewCSV(&lineLimit{r: r, max: maxCSVLineBytes, path: path, maxFields: maxDim(o.MaxDim) + 3}) // the features, a label, an id and a text
		s.closer = c
		s.BatchSize, s.Header = o.BatchSize, o.Header
		s.LabelColumn, s.IDColumn, s.TextColumn, s.Unlabeled = o.LabelColumn, o.IDColumn, o.TextColumn, o.Unlabeled
		s.dense.max = o.MaxDim
		return o.ready(s, path)
	case strings.HasSuffix(base, ".idx"), strings.Contains(base, "idx3-ubyte"):
		r, c, err := openMaybeGzip(path, gz)
		if err != nil {
			return nil, err
		}
		closers := multiCloser{c}
		var labels io.Reader
		if lp := labelsPath(path); lp != "" {
			lr, lc, err := openMaybeGzip(lp, strings.HasSuffix(strings.ToLower(lp), ".gz"))
			if err != nil {
				c.Close()
				return nil, err
			}
			labels = lr
			closers = append(closers, lc)
		}
		x := NewIDX(r, labels)
		x.BatchSize, x.MaxDim = o.BatchSize, o.MaxDim
		x.closer = closers
		return o.ready(x, path)
	}
	return nil, fmt.Errorf("sources: %s: unknown input format (want .arrow, .arrows, .parquet, .csv[.gz], .idx or a folder)", path)
}

// arrow sets a's options from o's; an opened input is a whole input, that
// the user chose: its samples without an id get their offsets as ids
// (Arrow.OffsetIDs), and its compressed batches may decode to
// DefaultMaxDecodedBytes each (Arrow.MaxDecodedBytes), a stdin stream too.
func (o *Opener) arrow(a *Arrow) *Arrow {
	a.BatchSize, a.Width, a.Height, a.MaxImagePixels, a.MaxDim, a.Allocator = o.BatchSize, o.Width, o.Height, o.MaxImagePixels, o.MaxDim, o.Allocator
	a.OffsetIDs, a.MaxDecodedBytes = true, DefaultMaxDecodedBytes
	return a
}

// ready checks that src is usable, closing it (and so its input) if not. A
// *LimitError is given the path.
func (o *Opener) ready(src Source, path string) (Source, error) {
	if _, err := src.Form(); err != nil {
		src.Close()
		if le, ok := err.(*LimitError); ok && le.Input == "" {
			le.Input = path
		}
		return nil, err
	}
	return src, nil
}

// labelsPath returns the IDX labels file that goes with the images file p,
// or "" if there is none.
func labelsPath(p string) string {
	dir, name := filepath.Split(p)
	var cands []string
	if strings.Contains(name, "images") && strings.Contains(name, "idx3") {
		cands = append(cands, strings.Replace(strings.Replace(name, "images", "labels", 1), "idx3", "idx1", 1))
	}
	if i := strings.LastIndex(strings.ToLower(name), ".idx"); i >= 0 {
		cands = append(cands, name[:i]+".labels"+name[i:])
	}
	for _, c := range cands {
		if st, err := os.Stat(filepath.Join(dir, c)); err == nil && !st.IsDir() {
			return filepath.Join(dir, c)
		}
	}
	return ""
}

func openMaybeGzip(path string, gz bool) (io.Reader, io.Closer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	if !gz {
		return bufio.NewReader(f), f, nil
	}
	zr, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("sources: %s: %w", path, err)
	}
	return zr, multiCloser{zr, f}, nil
}

type multiCloser []io.Closer

func (m multiCloser) Close() error {
	var errs []error
	for _, c := range m {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}
