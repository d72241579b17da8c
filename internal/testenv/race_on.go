//go:build race

package testenv

// Race is true in a -race build (see race_off.go).
const Race = true
