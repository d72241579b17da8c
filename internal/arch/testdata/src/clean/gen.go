//go:build ignore

// A generator: skipped by the scan.
package main

import "os"

func main() { os.WriteFile("x", nil, 0o644) }
