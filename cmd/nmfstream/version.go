package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// versionString describes this binary: the module version ("(devel)" for
// a build from a work tree, a tag for go install …@vX.Y.Z), the VCS
// revision and time the go command stamped (absent under go run and go
// test, which do not stamp them), and the Go version.
func versionString() string {
	var b strings.Builder
	b.WriteString("nmfstream")
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		fmt.Fprintf(&b, " (unknown version: no build information) %s", runtime.Version())
		return b.String()
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	fmt.Fprintf(&b, " %s", v)
	var rev, when, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" {
		fmt.Fprintf(&b, " revision %s", rev)
		if modified == "true" {
			b.WriteString("+modified")
		}
		if when != "" {
			fmt.Fprintf(&b, " (%s)", when)
		}
	}
	fmt.Fprintf(&b, " %s %s/%s", bi.GoVersion, runtime.GOOS, runtime.GOARCH)
	return b.String()
}
