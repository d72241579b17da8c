//go:build !race

package testenv

// Race is true in a -race build, whose detector adds to every allocation
// and slows a single goroutine about tenfold: memory bounds documented for
// the normal build, and long single-goroutine runs, are checked without it.
const Race = false
