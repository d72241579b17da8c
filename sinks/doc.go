// Package sinks implements the outputs of nmfstream: codes and predictions
// as Arrow IPC (Arrow) or JSON lines (JSONL), rejected records as JSON lines
// (Rejects), and saved model files (WriteModel, SaveModel). Create picks a
// result sink by path.
//
// # Shapes
//
// Results hold n samples, one row each: IDs, Preds and Scores have length n
// and Codes is n×K (rows of the code matrix V of X ≈ U Vᵀ). The Arrow output
// follows docs/DESIGN.md §5: id (utf8), code (fixed_size_list<float32>[K]),
// pred (utf8, nullable), score (float64, nullable); see ResultSchema.
//
// # Ownership and reuse
//
// Write copies what it needs from its Results before returning, so callers
// may reuse their slices and matrices. Sinks made by a constructor do not
// close the writer they were given; sinks made by Create own their file and
// close it in Close.
//
// # Concurrency
//
// A sink is not safe for concurrent use; one goroutine writes to it. Sinks
// start no goroutines.
//
// # References
//
// Apache Arrow IPC format, https://arrow.apache.org/docs/format/Columnar.html#serialization-and-interprocess-communication-ipc;
// JSON Lines, https://jsonlines.org.
package sinks
