// Package sources implements the readers that turn nmfstream inputs into
// batches of samples: Arrow IPC files and streams and Parquet files in the
// data contract of docs/DESIGN.md §5 (Arrow), image folders (Images), MNIST IDX
// files (IDX) and numeric CSV (CSV). Open picks a reader by path.
//
// # Shapes
//
// A Batch stores samples one per row: Batch.Dense and Batch.Sparse are n×D,
// the transpose of the D×N data matrix X of the factorization X ≈ U Vᵀ.
// Batch.Text holds n documents for a TF-IDF stage. Per-sample metadata
// (IDs, Labels, Labeled, Offsets) has length n. Late labels and rejects are
// listed beside the samples, so every input record appears exactly once.
//
// Images decode to grayscale intensities in [0, 1] (0 black, 1 white),
// row-major, resized to Width×Height by area averaging; IDX unsigned bytes
// are scaled by 1/255 to the same range, so an MNIST digit read from IDX or
// from a PNG of it gives the same row.
//
// # Ownership and reuse
//
// The Batch returned by Source.Batch, and the matrices and slices in it, are
// valid until the next call to Next or Close: sources reuse their memory.
// Copy what you keep (Batch.Clone); a Reader hands out copies, for a
// pipeline that reads ahead. Strings in a Batch are copies and may be kept.
// Constructors take readers that the caller keeps ownership of; sources
// returned by Open own their files and Close closes them. Arrow sources
// allocate through their Allocator and release every buffer by Close.
//
// # Limits
//
// Sources check what an input claims before allocating for it, so that a
// corrupt or hostile file fails with an error instead of exhausting memory.
// The feature dimension D is bounded by MaxDim (DefaultMaxDim, 2²⁰, unless
// set): a fixed_size_list width, a sparse dim, an IDX record or an image
// Width·Height above it fails with a *LimitError naming the input, the
// limit and how to raise it, and so does a first image that would fix a
// larger D (set Width and Height to resize). Arrow IPC metadata (field
// count, nesting, buffer sizes, message bodies), the ARROW:schema metadata
// of Parquet files, Parquet page buffers, image files and CSV lines have
// fixed bounds, each named in limits.go and ipcguard.go. Every decoder has
// a fuzz target; scripts/fuzz.sh runs them.
//
// # Concurrency
//
// A Source is not safe for concurrent use; one goroutine reads it. Sources
// start no goroutines.
//
// # References
//
// Apache Arrow columnar format and IPC, https://arrow.apache.org/docs/format/;
// Apache Parquet format, https://parquet.apache.org/docs/file-format/ (read
// with arrow/go/v15/parquet/file column readers). IDX: Y. LeCun, C. Cortes,
// C. Burges, "The MNIST database of handwritten digits",
// http://yann.lecun.com/exdb/mnist/. Netpbm PGM/PPM,
// https://netpbm.sourceforge.net/doc/. Luma weights: ITU-R BT.601, as in
// image/color.Gray16Model.
package sources
