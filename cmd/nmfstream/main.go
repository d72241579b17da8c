// Command nmfstream fits, evaluates and serves online, semi-supervised,
// graph-regularized non-negative matrix factorizations.
//
// Usage:
//
//	nmfstream <command> [flags]
//
// Run "nmfstream help" for the list of commands and "nmfstream <command>
// -help" for a command's flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"

	// With -tags openblas, gonum's BLAS becomes OpenBLAS (see the package).
	_ "github.com/nmfstream/nmfstream/internal/openblas"
)

// command is one sub-command of nmfstream.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{}

func register(c command) { commands[c.name] = c }

// errUsage marks an error whose message is a usage problem; the exit status is 2.
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version" || args[0] == "version") {
		if len(args) > 1 {
			fmt.Fprintf(stderr, "nmfstream version: unexpected argument %q\n", args[1])
			return 2
		}
		fmt.Fprintln(stdout, versionString())
		return 0
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "nmfstream: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	err := c.run(ctx, args[1:], stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "nmfstream %s: %v\n", c.name, err)
		return 2
	default:
		fmt.Fprintf(stderr, "nmfstream %s: %v\n", c.name, err)
		return 1
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `nmfstream: online, semi-supervised, graph-regularized NMF.

Usage:
  nmfstream <command> [flags]

Commands:
`)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-9s %s\n", n, commands[n].summary)
	}
	fmt.Fprintf(w, "  %-9s %s\n", "version", "print the version and VCS revision (also --version)")
	fmt.Fprint(w, `
Run "nmfstream <command> -help" for a command's description, flags and examples.
Start with "nmfstream demo": it needs no data and no flags.
`)
}

// parseFlags parses args into fs; a malformed flag is a usage error (exit
// status 2), -h is not an error.
func parseFlags(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return err
	}
	return fmt.Errorf("%w: %v", errUsage, err)
}

// newFlags returns a FlagSet whose usage names the command and its synopsis.
func newFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		// synopsis is the usage line, a description and an Examples
		// section; the flags follow.
		fmt.Fprintf(stderr, "Usage: nmfstream %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}
