package main

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nmfstream/nmfstream/stages"
)

// TestProgressLineNoNaN: before any labeled sample is scored the progress
// line says so instead of printing the accuracy of nothing (NaN); after,
// it prints the accuracy.
func TestProgressLineNoNaN(t *testing.T) {
	early := progressLine(stages.Counters{Samples: 200})
	if strings.Contains(early, "NaN") || !strings.Contains(early, "no labeled sample scored yet") {
		t.Errorf("before the first label: %q", early)
	}
	later := progressLine(stages.Counters{Samples: 400, Labeled: 20, Correct: 15})
	if !strings.Contains(later, "prequential accuracy 0.750") {
		t.Errorf("after 15 of 20 right: %q", later)
	}
}

// TestExamplesImportOnlyPublic: every example can be copied into a user's
// module, so none imports a package under internal/ (Go refuses those
// outside this module).
func TestExamplesImportOnlyPublic(t *testing.T) {
	files, err := filepath.Glob("../*/*.go")
	if err != nil || len(files) < 3 {
		t.Fatalf("example files: %v, %v", files, err)
	}
	for _, f := range files {
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range ast.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			if strings.Contains(path, "/internal/") || strings.HasSuffix(path, "/internal") {
				t.Errorf("%s imports %s", f, path)
			}
		}
	}
}
