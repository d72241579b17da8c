package arch

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
)

// modulePackageDirs returns the directories of fsys (the module root)
// that may hold the module's packages: not testdata, hidden or "_" ones,
// nor other modules (third_party).
func modulePackageDirs(t *testing.T, fsys fs.FS) []string {
	t.Helper()
	var dirs []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if p != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
			return fs.SkipDir
		}
		if _, err := fs.Stat(fsys, path.Join(p, "go.mod")); p != "." && err == nil {
			return fs.SkipDir
		}
		dirs = append(dirs, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// TestRules fails when a package outside Default.Goroutines starts a
// goroutine, one outside Default.IO does I/O, or a package under cmd/
// builds a record decoder outside Default.DecoderAllowed; and when an
// entry of those tables no longer matches the code.
func TestRules(t *testing.T) {
	fsys := os.DirFS("../..")
	found := map[string][]Finding{}
	used := map[string]bool{}
	n := 0
	for _, dir := range modulePackageDirs(t, fsys) {
		f, err := ScanDir(fsys, dir)
		if err != nil {
			t.Fatal(err)
		}
		found[dir] = f
		n++
		for _, err := range Default.Violations(dir, f, used) {
			t.Error(err)
		}
	}
	if n < 10 {
		t.Fatalf("scanned %d directories; is the module root ../..?", n)
	}
	for _, s := range Default.Unused(found, used) {
		t.Error(s)
	}
}

// TestScanSynthetic checks what the scan finds in the small packages of
// testdata/src, one per way of breaking a rule, and that it finds nothing
// in a package that only looks like it (os.Getenv, sync.Mutex,
// json.Unmarshal, a //go:build ignore generator, a test file).
func TestScanSynthetic(t *testing.T) {
	fsys := os.DirFS("testdata/src")
	for _, c := range []struct {
		dir  string
		want []string // Finding.String without the directory
	}{
		{"clean", nil},
		{"goer", []string{
			"goer.go:9 (Plain) starts a goroutine: go statement",
			"goer.go:13 (T.Group) starts a goroutine: a call of t.wg.Go",
			"goer.go:15 (Later) starts a goroutine: time.AfterFunc",
		}},
		{"ioer", []string{
			"ioer.go:5 does I/O: import net/http",
			"ioer.go:11 (Write) does I/O: os.Create",
			"ioer.go:18 (Find) does I/O: filepath.Glob",
		}},
		{"cmd/tool", []string{
			"main.go:11 (allowedDecoder) builds a decoder: enc.NewDecoder",
			"main.go:11 (allowedDecoder) does I/O: os.Stdin",
			"main.go:14 (main) builds a decoder: csv.NewReader",
			"main.go:15 (main) builds a decoder: enc.NewDecoder",
		}},
	} {
		found, err := ScanDir(fsys, c.dir)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range found {
			got = append(got, strings.TrimPrefix(f.String(), c.dir+"/"))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: found\n\t%s\nwant\n\t%s", c.dir, strings.Join(got, "\n\t"), strings.Join(c.want, "\n\t"))
		}
	}
}

// TestRulesCatchSynthetic checks the rules on the synthetic packages:
// each violation is reported once with its place, the allow-lists admit
// what they name and nothing else, and a stale entry is reported.
func TestRulesCatchSynthetic(t *testing.T) {
	fsys := os.DirFS("testdata/src")
	r := Rules{
		Goroutines:     map[string]string{"pipe": "runtime"},
		IO:             map[string]string{"cmd/": "programs", "gone": "did I/O once"},
		DecoderFree:    []string{"cmd/"},
		DecoderAllowed: map[string]string{"cmd/tool/main.go:allowedDecoder": "debt", "cmd/tool/main.go:paid": "debt paid"},
	}
	found := map[string][]Finding{}
	used := map[string]bool{}
	var got []string
	for _, dir := range []string{"clean", "goer", "ioer", "cmd/tool"} {
		f, err := ScanDir(fsys, dir)
		if err != nil {
			t.Fatal(err)
		}
		found[dir] = f
		for _, err := range r.Violations(dir, f, used) {
			got = append(got, err.Error())
		}
	}
	want := []string{
		"goer/goer.go:9 (Plain) starts a goroutine: go statement: package goer may not start goroutines",
		"goer/goer.go:13 (T.Group) starts a goroutine: a call of t.wg.Go: package goer may not start goroutines",
		"goer/goer.go:15 (Later) starts a goroutine: time.AfterFunc: package goer may not start goroutines",
		"ioer/ioer.go:5 does I/O: import net/http: package ioer may not do I/O",
		"ioer/ioer.go:11 (Write) does I/O: os.Create: package ioer may not do I/O",
		"ioer/ioer.go:18 (Find) does I/O: filepath.Glob: package ioer may not do I/O",
		"cmd/tool/main.go:14 (main) builds a decoder: csv.NewReader: package cmd/tool holds no decoder",
		"cmd/tool/main.go:15 (main) builds a decoder: enc.NewDecoder: package cmd/tool holds no decoder",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d violations, want %d:\n\t%s", len(got), len(want), strings.Join(got, "\n\t"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("violation %d = %q, want it to start %q", i, got[i], want[i])
		}
	}
	unused := r.Unused(found, used)
	slices.Sort(unused)
	wantUnused := []string{
		`DecoderAllowed["cmd/tool/main.go:paid"] matches no decoder: remove it`,
		"gone is allowed to, but no longer does I/O: remove its entry",
		"pipe is allowed to, but no longer starts a goroutine: remove its entry",
	}
	if !slices.Equal(unused, wantUnused) {
		t.Errorf("unused entries %q, want %q", unused, wantUnused)
	}
	if fmt.Sprint(used) != "map[cmd/tool/main.go:allowedDecoder:true]" {
		t.Errorf("used allowances %v, want only cmd/tool/main.go:allowedDecoder", used)
	}
}
