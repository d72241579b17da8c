package sources

import (
	"fmt"
	"github.com/nmfstream/nmfstream/record"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// imageExts are the file extensions Images reads (compared in lower case).
var imageExts = map[string]bool{
	".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".bmp": true,
	".pgm": true, ".ppm": true, ".pnm": true,
}

// Images reads a folder of image files laid out as root/<class>/<file>: the
// label of a file is the name of its first-level sub-folder, and files
// directly in root are unlabeled. The id of a record is its path relative
// to root, with '/' separators. Files are visited in lexical order of their
// paths (fs.WalkDir), so record offsets are reproducible.
//
// Only files with an image extension (.png .jpg .jpeg .gif .bmp .pgm .ppm
// .pnm, any case) are records; hidden files and folders (name starting with
// '.') and other files are skipped. Images are decoded to grayscale in [0, 1]
// (0 black, 1 white) and resized to Width×Height by area averaging, giving
// FormDense batches with D = Width·Height; an unreadable or undecodable file
// is rejected with the reason.
//
// Set the exported fields before the first call to Next or Form.
type Images struct {
	// BatchSize is the number of records per batch. If zero, it defaults
	// to 256.
	BatchSize int
	// Width and Height give the size images are resized to. If both are
	// zero (the default), the first decodable image fixes them.
	Width, Height int
	// MaxImagePixels rejects images with more pixels before decoding them.
	// If zero, it defaults to 1<<24.
	MaxImagePixels int
	// MaxDim bounds D = Width·Height. If zero, it defaults to
	// DefaultMaxDim. Without Width and Height, a first image that would fix
	// a larger D stops Next with a *LimitError (before decoding it).
	MaxDim int

	fsys    fs.FS
	root    string // the folder, for errors, when NewImages opened it
	started bool
	files   []string // slash paths relative to the root
	size    imageSize
	off     int64
	err     error
	scratch []float64
	dense   denseRows
	batch   batch
}

var _ Source = (*Images)(nil)

// NewImages returns a source reading the image folder root.
func NewImages(root string) *Images {
	m := NewImagesFS(os.DirFS(root))
	m.root = root
	return m
}

// NewImagesFS returns a source reading the image folder at the root of fsys.
func NewImagesFS(fsys fs.FS) *Images { return &Images{fsys: fsys} }

// Form lists the folder and returns FormDense, or why it cannot be used.
func (m *Images) Form() (record.Form, error) {
	if !m.start() {
		return 0, m.err
	}
	return record.FormDense, nil
}

func (m *Images) start() bool {
	if m.started {
		return m.err == nil
	}
	m.started = true
	m.dense.max = m.MaxDim
	if m.size, m.err = newImageSize(m.Width, m.Height, m.MaxImagePixels, m.MaxDim); m.err != nil {
		return false
	}
	err := fs.WalkDir(m.fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != "." && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.IsDir() && imageExts[strings.ToLower(path.Ext(p))] {
			m.files = append(m.files, p)
		}
		return nil
	})
	if err != nil {
		m.err = fmt.Errorf("sources: images: %w", err)
		return false
	}
	if len(m.files) == 0 {
		m.err = fmt.Errorf("sources: images: no image files (want root/<class>/<file>.png etc.)")
		return false
	}
	return true
}

// Next reads the next batch of up to BatchSize images.
func (m *Images) Next() bool {
	if !m.start() || m.off >= int64(len(m.files)) {
		return false
	}
	m.batch.reset(record.FormDense)
	bs := int64(batchSize(m.BatchSize))
	for k := int64(0); k < bs && m.off < int64(len(m.files)); k++ {
		off := m.off
		m.off++
		p := m.files[off]
		label, labeled := "", false
		if i := strings.IndexByte(p, '/'); i >= 0 {
			label, labeled = p[:i], true
		}
		data, err := readFileMax(m.fsys, p, maxImageFileBytes)
		if err == nil {
			m.scratch, err = m.size.decode(m.scratch[:0], data)
		}
		if le, ok := err.(*LimitError); ok {
			// Every image of the folder would be refused the same way.
			le.Input, le.Record = filepath.Join(m.root, filepath.FromSlash(p)), off
			m.err, m.off = le, int64(len(m.files))
			break
		}
		if err == nil {
			err = m.dense.check(m.scratch)
		}
		if err != nil {
			m.batch.reject(off, p, "%v", err)
			continue
		}
		m.dense.add(m.scratch)
		m.batch.addMeta(off, p, label, labeled)
	}
	m.batch.Dense = m.dense.take()
	return m.batch.Records() > 0
}

// readFileMax reads the file p of fsys, refusing one of more than max
// bytes before reading it.
func readFileMax(fsys fs.FS, p string, max int64) ([]byte, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > max {
		return nil, fmt.Errorf("file of %d bytes exceeds the limit of %d bytes for one image", st.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(data)) > max {
		err = fmt.Errorf("file exceeds the limit of %d bytes for one image", max)
	}
	return data, err
}

// Batch returns the batch read by the last successful Next, valid until
// the next call to Next or Close.
func (m *Images) Batch() *record.Batch { return &m.batch.Batch }

// Err returns the error that stopped Next, or nil at the end of the input.
func (m *Images) Err() error { return m.err }

// Close ends the source. Images keeps no file open between batches.
func (m *Images) Close() error {
	m.started, m.files = true, nil
	return nil
}

// isImageDir reports whether path is a directory.
func isDir(p string) bool {
	st, err := os.Stat(filepath.Clean(p))
	return err == nil && st.IsDir()
}
