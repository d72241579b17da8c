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
	"strings"
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
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	if isHelpFlag(args[0]) || args[0] == "help" {
		return runHelp(ctx, args[1:], stdout, stderr)
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "nmfstream: unknown command %q%s\n", args[0], didYouMean(args[0], commandNames()))
		fmt.Fprintf(stderr, "commands: %s\nRun \"nmfstream help\" for what each does.\n", strings.Join(commandNames(), ", "))
		return 2
	}
	if wantsHelp(args[1:]) {
		// Help that was asked for is the output, on stdout (so that
		// "nmfstream fit -help | less" works); exit status 0.
		stderr = stdout
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

// runHelp answers "nmfstream help [command]" and "nmfstream --help" on
// stdout with exit status 0; an unknown command is a usage error.
func runHelp(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stdout)
		return 0
	}
	if args[0] == "version" {
		fmt.Fprintln(stdout, "Usage: nmfstream version (or --version): print the version and VCS revision")
		return 0
	}
	if _, ok := commands[args[0]]; !ok {
		fmt.Fprintf(stderr, "nmfstream help: unknown command %q%s\ncommands: %s\n", args[0], didYouMean(args[0], commandNames()), strings.Join(commandNames(), ", "))
		return 2
	}
	return run(ctx, []string{args[0], "-help"}, stdout, stderr)
}

// isHelpFlag reports whether arg asks for help (-h, -help, --help).
func isHelpFlag(arg string) bool {
	return arg == "-h" || arg == "--h" || arg == "-help" || arg == "--help"
}

// wantsHelp reports whether a command's arguments ask for its help: a help
// flag anywhere before "--" (a flag's value spelled like -h is taken for
// the flag).
func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if isHelpFlag(a) {
			return true
		}
	}
	return false
}

// commandNames returns the sorted names of the commands, version included.
func commandNames() []string {
	names := make([]string, 0, len(commands)+1)
	for n := range commands {
		names = append(names, n)
	}
	names = append(names, "version")
	sort.Strings(names)
	return names
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

// parseFlags parses args into fs. -h is not an error: it prints the
// command's full help to fs's output (stdout when run saw the help flag)
// and returns flag.ErrHelp. A malformed or unknown flag is a usage error
// (exit status 2) whose message names the flag, suggests the nearest
// defined flag (didYouMean) and gives the command's usage line, not the
// whole help.
func parseFlags(fs *flag.FlagSet, args []string) error {
	out, full := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(out)
	fs.Usage = full
	if err == nil {
		return nil
	}
	if errors.Is(err, flag.ErrHelp) {
		full()
		return err
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	hint := ""
	if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: "); ok {
		name = strings.TrimLeft(name, "-")
		if m := didYouMean(name, names); m != "" {
			hint = strings.Replace(m, `"`, `"--`, 1)
		}
	}
	var b strings.Builder
	fs.SetOutput(&b)
	full()
	fs.SetOutput(out)
	line, _, _ := strings.Cut(b.String(), "\n")
	return fmt.Errorf("%w: %v%s\n%s\nRun \"nmfstream %s -help\" for the description, every flag and examples", errUsage, err, hint, line, fs.Name())
}

// newFlags returns a FlagSet whose usage names the command and its synopsis.
func newFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		// synopsis is the usage line, a description and an Examples
		// section; the flags follow. The first line is the usage line
		// (parseFlags quotes it on a usage error).
		fmt.Fprintf(fs.Output(), "Usage: nmfstream %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}
