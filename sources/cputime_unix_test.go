//go:build unix

package sources

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user + system) used by the process so far,
// and whether it is known. Benchmarks report rates per CPU second beside
// those per wall-clock second, because a shared machine stretches wall time.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
