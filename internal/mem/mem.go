// Package mem maps in the pages of large fresh buffers at once (Populate),
// for the buffers a stream fills once and then keeps: an Arrow batch's
// features, the window's rows.
package mem

// MinBytes is the smallest buffer Populate maps in: 1 MiB, a large buffer
// (a batch's features, a window's rows), not a column of ids.
const MinBytes = 1 << 20
