package report

import (
	"fmt"
	"math"
	"strings"
)

// maxConfusion is the largest number of classes whose confusion matrix is
// printed as a table; wider ones are in report.json only.
const maxConfusion = 20

// writeMarkdown writes r as report.md.
func writeMarkdown(b *strings.Builder, r *Report) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("# nmfstream report: %s\n\n", r.Method)
	p("Trained on `%s`, tested on `%s`. Regenerate with:\n\n```\n%s\n```\n\n", r.Train, r.Test, r.Command)
	p("## Held-out scores\n\n")
	p("| accuracy | balanced accuracy | macro-F1 | test records |\n|---|---|---|---|\n")
	p("| %s | %s | %s | %d |\n\n", num(r.Accuracy), num(r.BalancedAccuracy), num(r.MacroF1), r.NTest)
	p("## The fit\n\n")
	p("| method | rank K | projection | classifier | seed | training records (labeled) | features | rejected | fit | coding and classifying |\n")
	p("|---|---|---|---|---|---|---|---|---|---|\n")
	p("| %s | %d | %s | %s | %d | %d (%d) | %d | %d | %s s | %s s |\n\n",
		r.Method, r.Rank, r.Projection, r.Classifier, r.Seed, r.NTrain, r.NLabeled, r.Features, r.Rejected, secs(r.FitSeconds), secs(r.ProjectSeconds))
	if n := len(r.Objective); n > 0 {
		p("The fit ran %d updates; the objective went from %.6g to %.6g.", n, float64(r.Objective[0]), float64(r.Objective[n-1]))
	}
	if !math.IsNaN(float64(r.Sparsity)) {
		p(" The basis has a mean Hoyer sparsity of %.3f (0: dense columns, 1: one non-zero each).", float64(r.Sparsity))
	}
	p("\n\n")
	if len(r.Classes) > 0 {
		p("## Per class\n\n| class | test records | recall | precision | F1 |\n|---|---|---|---|---|\n")
		for _, c := range r.Classes {
			p("| %s | %d | %s | %s | %s |\n", c.Name, c.Support, num(c.Recall), num(c.Precision), num(c.F1))
		}
		p("\n")
	}
	if c := len(r.Confusion); c > 0 && c <= maxConfusion && len(r.Classes) == c {
		p("## Confusion matrix\n\nRows are the true classes, columns the predicted ones.\n\n| true \\ predicted |")
		for _, cl := range r.Classes {
			p(" %s |", cl.Name)
		}
		p("\n|---|%s\n", strings.Repeat("---|", c))
		for i, row := range r.Confusion {
			p("| **%s** |", r.Classes[i].Name)
			for _, v := range row {
				p(" %d |", v)
			}
			p("\n")
		}
		p("\n")
	}
	if len(r.Topics) > 0 {
		p("## Top terms of each factor\n\nThe terms of largest weight in each column of U, largest first.\n\n| factor | terms |\n|---|---|\n")
		for _, t := range r.Topics {
			p("| %d | %s |\n", t.Factor, strings.Join(t.Terms, ", "))
		}
		p("\n")
	}
	if len(r.Figures) > 0 {
		p("## Figures\n\n")
		for _, f := range r.Figures {
			p("![%s](%s)\n\n", f.Title, f.File)
		}
	}
	for _, n := range r.Notes {
		p("Note: %s\n\n", n)
	}
}

// num formats a score to three decimals, or a dash if it is not finite.
func num(n Num) string {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "–"
	}
	return fmt.Sprintf("%.3f", f)
}

// secs formats seconds to two decimals, or a dash.
func secs(n Num) string {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "–"
	}
	return fmt.Sprintf("%.2f", f)
}
