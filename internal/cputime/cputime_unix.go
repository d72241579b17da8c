//go:build unix

// Package cputime reads the CPU time the process has used, for benchmarks
// that report rates per CPU second beside those per wall-clock second,
// because a shared machine stretches wall time.
package cputime

import (
	"syscall"
	"time"
)

// Used returns the CPU time (user + system) used by the process so far, and
// whether it is known.
func Used() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
