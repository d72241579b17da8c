//go:build !unix

// Package cputime reads the CPU time the process has used, for benchmarks
// that report rates per CPU second beside those per wall-clock second,
// because a shared machine stretches wall time.
package cputime

import "time"

// Used returns the CPU time used by the process so far, and whether it is
// known: never on this platform.
func Used() (time.Duration, bool) { return 0, false }
