package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/nmfstream/nmfstream/internal/report"
)

func init() {
	register(command{
		name:    "report",
		summary: "run the evaluation (accuracy, sensitivity, occlusion, stream, speed) and write report.md, report.json, PNGs",
		run:     runReport,
	})
}

func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report", `report --out DIR [--data DIR] [--quick] [--seed s] [--mnist N] [--python PATH] [--rerender]

Runs the evaluation behind BENCHMARKS.md: every method's held-out accuracy
on the digits (and on MNIST and the Brown corpus when --data has them,
from scripts/fetch-data.sh), against scikit-learn peers when Python has
it, the sensitivity to the rank and the graph weight, occlusion, the
stream and the speed; it writes report.md, report.json and PNG figures to
DIR. --quick is the reduced digits-only run of CI (a few minutes).

Examples:
  nmfstream report --quick --out /tmp/report
  nmfstream report --out report --data data
  nmfstream report --out report --rerender`, stderr)
	out := fs.String("out", "", "output directory for report.md, report.json and the PNG figures (required)")
	data := fs.String("data", defaultDataDir(), "directory of fetch-data.sh with mnist/ and brown/ (absent: digits only)")
	quick := fs.Bool("quick", false, "reduced grid on the digits only, a few minutes (for CI)")
	seed := fs.Uint64("seed", 1, "seed of every split, initialization and random draw")
	mnist := fs.Int("mnist", 15000, "MNIST samples drawn for the full run (one third held out)")
	rerender := fs.Bool("rerender", false, "only redraw the plots and rewrite report.md from --out's report.json (no measurement)")
	python := fs.String("python", "", "python with scikit-learn for the peers (default /usr/bin/python3; - disables them)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q (flags go before, as --flag value)", errUsage, fs.Arg(0))
	}
	if *out == "" {
		return fmt.Errorf("%w: --out is required (see nmfstream report -help)", errUsage)
	}
	if *rerender {
		if err := report.Rerender(*out); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "rewrote %s\n", filepath.Join(*out, "report.md"))
		return nil
	}
	if *mnist < 100 {
		return fmt.Errorf("%w: --mnist must be at least 100, got %d", errUsage, *mnist)
	}
	if *seed == 0 {
		return fmt.Errorf("%w: --seed must be positive", errUsage)
	}
	cmdline := "nmfstream report --out " + *out
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
	cfg := report.Config{
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
	rep, err := report.Run(ctx, cfg)
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
