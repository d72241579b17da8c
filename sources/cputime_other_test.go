//go:build !unix

package sources

import "time"

// cpuTime is not known on this system; see cputime_unix_test.go.
func cpuTime() (time.Duration, bool) { return 0, false }
