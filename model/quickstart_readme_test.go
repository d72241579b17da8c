package model_test

import (
	"os"
	"strings"
	"testing"
)

// TestQuickStartInREADME checks that README.md's library quick start is
// Example_quickStart's body, so that the README's code compiles and prints
// what it says.
func TestQuickStartInREADME(t *testing.T) {
	src, err := os.ReadFile("quickstart_example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const open = "func Example_quickStart() {\n"
	s := string(src)
	i, j := strings.Index(s, open), strings.LastIndex(s, "\n}")
	if i < 0 || j < i {
		t.Fatal("no Example_quickStart in quickstart_example_test.go")
	}
	lines := strings.Split(s[i+len(open):j], "\n")
	for k, l := range lines {
		lines[k] = strings.TrimPrefix(l, "\t")
	}
	body := "```go\n" + strings.Join(lines, "\n") + "\n```"
	if !strings.Contains(string(readme), body) {
		t.Errorf("README.md's quick start differs from Example_quickStart; it should be:\n%s", body)
	}
}
