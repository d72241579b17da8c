package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// guideBuild is the guide's first command: building the binary it runs.
const guideBuild = "go build -o nmfstream ./cmd/nmfstream"

// readmeGuide returns the commands of the README's first-hour guide: the
// lines of the sh code blocks of its section, in order.
func readmeGuide(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## A first hour")
	if !ok {
		t.Fatal(`README.md has no section "## A first hour"`)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	var lines []string
	in := false
	for _, l := range strings.Split(sec, "\n") {
		switch {
		case strings.HasPrefix(l, "```sh"):
			in = true
		case strings.HasPrefix(l, "```"):
			in = false
		case in && strings.TrimSpace(l) != "":
			lines = append(lines, l)
		}
	}
	return lines
}

// TestREADMEGuide runs the README's first-hour guide as one shell script,
// its commands in order, in an empty directory, as a new user pastes them
// in a fresh clone: the binary is built once (the guide's first command,
// run from the module root with its output in that directory) and serve
// listens on a free port instead of 8080. Every command must succeed and
// leave the files the guide names.
func TestREADMEGuide(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and runs the guide (about a minute)")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("the guide posts to serve with curl, which is not installed")
	}
	lines := readmeGuide(t)
	if len(lines) < 10 || lines[0] != guideBuild {
		t.Fatalf("the guide starts %q, want %q and its commands:\n%s", lines[0], guideBuild, strings.Join(lines, "\n"))
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(dir, "nmfstream"), "./cmd/nmfstream")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", guideBuild, err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	script := "set -e\n" + strings.ReplaceAll(strings.Join(lines[1:], "\n"), "127.0.0.1:8080", "127.0.0.1:"+port) + "\n"
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the guide failed: %v\n%s", err, out)
	}
	for _, f := range []string{"digits.model", "pred.arrow", "report/report.md", "report/confusion.png", "stream.jsonl",
		"accuracy.png", "brown.model", "brown-pred.arrow"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("the guide left no %s: %v", f, err)
		}
	}
	for _, want := range []string{`"id":"new-1"`, "factor 10:", "accuracy on the 45 labeled records", "graph: accuracy"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the guide's output lacks %q:\n%s", want, out)
		}
	}
}
