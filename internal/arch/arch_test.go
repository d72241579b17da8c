package arch

import (
	"errors"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/nmfstream/nmfstream"

// layer returns the layer of the package at rel (a path from the module
// root) and whether the table places it.
func layer(rel string) (int, bool) {
	if l, ok := Layers[rel]; ok {
		return l, true
	}
	for p, l := range Layers {
		if strings.HasSuffix(p, "/") && strings.HasPrefix(rel, p) {
			return l, true
		}
	}
	return 0, false
}

// modulePackages returns the non-test imports of every package of the
// module, by path from the module root, as ctx builds them.
func modulePackages(t *testing.T, ctx build.Context) map[string][]string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	pkgs := map[string][]string{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); path != root && err == nil {
			return filepath.SkipDir // another module (third_party), not this one's package
		}
		p, err := ctx.ImportDir(path, 0)
		if err != nil {
			var none *build.NoGoError
			if errors.As(err, &none) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(root, path)
		pkgs[filepath.ToSlash(rel)] = p.Imports
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// TestLayers fails if a package imports one of its own layer or a higher
// one, if a package is missing from Layers, or if a package outside bench/
// imports os/exec (the product starts no other program).
func TestLayers(t *testing.T) {
	pure := build.Default
	pure.BuildTags = append(slices.Clone(pure.BuildTags), "purego")
	for _, ctx := range []build.Context{build.Default, pure} {
		pkgs := modulePackages(t, ctx)
		if len(pkgs) < 10 {
			t.Fatalf("found %d packages; is the module root ../..?", len(pkgs))
		}
		for rel, imports := range pkgs {
			lp, ok := layer(rel)
			if !ok {
				t.Errorf("package %s is not in arch.Layers: give it a layer (doc.go)", rel)
				continue
			}
			for _, imp := range imports {
				if imp == "os/exec" && !strings.HasPrefix(rel, "bench/") {
					t.Errorf("%s imports os/exec: only the commands under bench/ start other programs", rel)
				}
				dep, ok := strings.CutPrefix(imp, module+"/")
				if !ok {
					continue
				}
				lq, ok := layer(dep)
				switch {
				case !ok:
					t.Errorf("%s imports %s, which is not in arch.Layers", rel, dep)
				case lq >= lp:
					t.Errorf("%s (layer %d) imports %s (layer %d): a package may import lower layers only", rel, lp, dep, lq)
				}
			}
		}
	}
}

// TestLayersCatch checks the check: an import upward or sideways is
// reported.
func TestLayersCatch(t *testing.T) {
	for _, c := range []struct {
		from, to string
		ok       bool
	}{
		{"stages", "model", true},
		{"stages", "sources", false}, // sideways
		{"model", "model/classify", false},
		{"model", "stages", false}, // upward
		{"cmd/nmfstream", "bench/paper", false},
		{"bench/paper", "internal/report", true},
	} {
		lp, _ := layer(c.from)
		lq, _ := layer(c.to)
		if got := lq < lp; got != c.ok {
			t.Errorf("%s → %s allowed = %t, want %t", c.from, c.to, got, c.ok)
		}
	}
}
