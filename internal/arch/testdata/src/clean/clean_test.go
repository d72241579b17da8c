package clean

import "testing"

// Tests may start goroutines: the scan skips them.
func TestX(t *testing.T) { go func() {}() }
