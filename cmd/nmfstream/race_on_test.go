//go:build race

package main

// raceEnabled reports a -race build, whose detector adds to every
// allocation: the memory bounds, documented for the normal build, are
// checked without it.
const raceEnabled = true
