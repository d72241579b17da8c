package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
)

const usage = `usage: paper --out DIR [--data DIR] [--quick] [--seed s] [--mnist N] [--python PATH] [--rerender]

Runs the evaluation behind BENCHMARKS.md: every method's held-out accuracy
on the digits (and on MNIST and the Brown corpus when --data has them,
from scripts/fetch-data.sh), against scikit-learn peers when Python has
it, the sensitivity to the rank and the graph weight, occlusion, the
stream and the speed; it writes report.md, report.json and PNG figures to
DIR. --quick is the reduced digits-only run (a few minutes).

Examples:
  go run ./bench/paper --quick --out /tmp/paper
  go run ./bench/paper --out paper --data ~/.cache/nmfstream-data
  go run ./bench/paper --out paper --rerender
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "paper:", err)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("paper", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	out := fs.String("out", "", "output directory for report.md, report.json and the PNG figures (required)")
	data := fs.String("data", defaultDataDir(), "directory of fetch-data.sh with mnist/ and brown/ (absent: digits only)")
	quick := fs.Bool("quick", false, "reduced grid on the digits only, a few minutes")
	seed := fs.Uint64("seed", 1, "seed of every split, initialization and random draw")
	mnist := fs.Int("mnist", 15000, "MNIST samples drawn for the full run (one third held out)")
	rerender := fs.Bool("rerender", false, "only redraw the plots and rewrite report.md from --out's report.json (no measurement)")
	python := fs.String("python", "", "python with scikit-learn for the peers (default /usr/bin/python3; - disables them)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected argument %q (flags go before, as --flag value)", fs.Arg(0))
	case *out == "":
		return errors.New("--out is required (see paper -help)")
	}
	if *rerender {
		if err := Rerender(*out); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "rewrote %s\n", filepath.Join(*out, "report.md"))
		return nil
	}
	switch {
	case *mnist < 100:
		return fmt.Errorf("--mnist must be at least 100, got %d", *mnist)
	case *seed == 0:
		return errors.New("--seed must be positive")
	}
	cmdline := "go run ./bench/paper --out " + *out
	if *quick {
		cmdline += " --quick"
	} else if *data != "" {
		cmdline += " --data " + *data
		if *mnist != 15000 {
			cmdline += fmt.Sprintf(" --mnist %d", *mnist)
		}
	}
	cmdline += fmt.Sprintf(" --seed %d", *seed)
	if *python != "" {
		cmdline += " --python " + *python
	}
	cfg := Config{
		Out:      *out,
		Quick:    *quick,
		Seed:     *seed,
		MNIST:    *mnist,
		Python:   *python,
		Command:  cmdline,
		Progress: stderr,
	}
	if !*quick {
		cfg.Data = *data
	}
	rep, err := Run(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (%.0f s)\n", filepath.Join(*out, "report.md"), rep.Meta.Seconds)
	var b strings.Builder
	for _, h := range rep.Headline {
		fmt.Fprintf(&b, "  %-30s %.3f\n", h.Method, float64(h.Accuracy))
	}
	fmt.Fprintf(stdout, "digits, %d labels per class, held-out accuracy:\n%s", rep.Meta.Labels, b.String())
	return nil
}

// defaultDataDir is fetch-data.sh's default destination, if it exists.
func defaultDataDir() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	dir := filepath.Join(home, ".cache", "nmfstream-data")
	if _, err := os.Stat(dir); err != nil {
		return ""
	}
	return dir
}
