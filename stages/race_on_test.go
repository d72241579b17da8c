//go:build race

package stages

// raceEnabled is set when the race detector is on: long single-goroutine
// tests skip, since they race nothing and run 10× slower.
const raceEnabled = true
