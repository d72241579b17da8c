package main

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// methodDesc says in a few words what each method and peer is.
var methodDesc = map[string]string{
	"nmf":         "NMF (Lee & Seung), unsupervised",
	"gnmf":        "graph-regularized NMF (Cai et al. 2011), unsupervised",
	"dgnmf":       "discriminant GNMF / KNMF (An 2009 §2.2), labels",
	"ssknmf":      "semi-supervised KNMF (An 2009 §2.3), labels",
	"n2s2l":       "N²S²L (Wang et al. 2009), labels",
	"nge":         "NGE with MFA graphs (Yang et al. 2008) + k-NN smoothness, labels",
	"dpca":        "discriminant PCA (Sun & Zhang 2009), linear baseline, labels",
	"kernel":      "flexible-kernel NMF, Gaussian (Zhang & Liu 2009), unsupervised",
	"multik":      "AdapGrNMF_MultiK, entropy τ step (Wang & AbdulJabbar 2012), unsupervised",
	peerRaw:       "1-NN on the raw pixels of the labeled samples",
	peerLabelProp: "classify.LabelPropagation on pixels (Zhou et al. 2004), 7-NN graph",
	peerSkNMF:     "sklearn.decomposition.NMF (nndsvda, cd solver, 200 iterations) + 1-NN on the labeled codes, codes scaled to a unit-norm basis (as model.NMF normalizes U)",
	peerSkNMFRaw:  "the same with sklearn's codes as returned: Euclidean 1-NN then weighs factor k by 1/‖h_k‖, which costs accuracy",
	peerSkSpread:  "sklearn.semi_supervised.LabelSpreading(kernel='knn', n_neighbors=7)",
}

func fmtNum(n Num, prec int) string {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "–"
	}
	return fmt.Sprintf("%.*f", prec, f)
}

// writeMarkdown renders rep as report.md.
func writeMarkdown(w *strings.Builder, rep *Report) {
	m := rep.Meta
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("# nmfstream evaluation report\n\n")
	p("Regenerate with:\n\n```\n%s\n```\n\n", m.Command)
	mode := "full"
	if m.Quick {
		mode = "quick (reduced grid, digits only)"
	}
	p("| | |\n|---|---|\n")
	p("| run | %s, %.0f s (%.1f min) wall time |\n", mode, m.Seconds, m.Seconds/60)
	p("| seed | %d |\n", m.Seed)
	p("| date | %s |\n", m.Date)
	p("| Go | %s %s/%s, %d CPUs |\n", m.GoVersion, m.GOOS, m.GOARCH, m.CPUs)
	p("| load average | %s at start, %s at end |\n", orDash(m.LoadAvg), orDash(m.LoadAvgEnd))
	p("| BLAS | %s |\n", map[bool]string{true: "OpenBLAS (-tags openblas)", false: "gonum pure Go"}[m.OpenBLAS])
	p("| module | %s |\n", m.Module)
	var deps []string
	for _, path := range []string{"gonum.org/v1/gonum", "github.com/apache/arrow/go/v15"} {
		if v, ok := m.Modules[path]; ok {
			deps = append(deps, path+" "+v)
		}
	}
	p("| key modules | %s (all in report.json) |\n", orDash(strings.Join(deps, ", ")))
	p("| scikit-learn | %s |\n", orDash(m.Sklearn))
	p("| data | digits (embedded, 1,797 8×8)%s%s |\n", ifs(m.MNIST, fmt.Sprintf(", MNIST (%d-sample draw)", m.MNISTSample)), ifs(m.Brown, ", Brown corpus"))
	p("| protocol | docs/DESIGN.md §7: %.0f%% held out, L labeled samples per class from the training pool, the rest of the pool unlabeled; K = %d; held-out accuracy of 1-NN on the labeled samples' codes (test samples projected graph-aware) |\n\n", 100*m.TestFrac, m.Rank)

	if len(rep.Notes) > 0 {
		p("## Notes\n\n")
		for _, n := range rep.Notes {
			p("- %s\n", n)
		}
		p("\n")
	}

	p("## Headline: digits, L = %d, seed %d\n\n", m.Labels, m.Seed)
	p("| method | kind | held-out accuracy | fit time (s) |\n|---|---|---:|---:|\n")
	for _, h := range rep.Headline {
		p("| %s | %s | %s | %s |\n", h.Method, h.Kind, fmtNum(h.Accuracy, 3), fmtNum(h.FitSeconds, 2))
	}
	p("\nRegenerate this table with `%s` (see the first lines of report.md).\n\n", m.Command)
	p("Methods and peers:\n\n")
	for _, n := range styleOrder {
		p("- **%s**: %s\n", n, methodDesc[n])
	}
	p("\n")

	p("## Accuracy vs labels per class\n\n")
	pointTables(p, rep.Labels, paramLabels, "L")
	figs(p, rep, "accuracy-vs-labels-")

	p("## Sensitivity to K, α and β (digits, L = %d)\n\n", m.Labels)
	p("Other parameters at their defaults; a dash is a fit that failed (the error is in report.json: for example a diverging objective, or N²S²L with K not above its q = 10 discriminative columns).\n\n")
	for _, par := range []string{paramRank, paramAlpha, paramBeta} {
		pointTables(p, rep.Sensitivity, par, par)
	}
	figs(p, rep, "sensitivity-")

	p("## Occlusion robustness\n\n")
	p("A square patch of the brightest pixel value is pasted at a random position (seeded) on every test image; the bases fitted at L = %d code the occluded images (as in NGE's Fig. 7 and N²S²L's Fig. 4).\n\n", m.Labels)
	pointTables(p, rep.Occlusion, paramPatch, "patch side")
	figs(p, rep, "occlusion")

	p("## Bases and sparsity\n\n")
	p("Hoyer sparsity of the basis columns (mean over columns; 0 = flat, 1 = one pixel). Higher means more localized, parts-based bases.\n\n")
	p("| data set | method | Hoyer sparsity |\n|---|---|---:|\n")
	for _, s := range rep.Sparsity {
		p("| %s | %s | %s |\n", s.Dataset, s.Method, fmtNum(s.Hoyer, 3))
	}
	p("\n")
	figs(p, rep, "bases-")

	p("## Objective per iteration\n\n")
	p("| data set | method | iterations | first | last | last/first |\n|---|---|---:|---:|---:|---:|\n")
	for _, c := range rep.Objective {
		f, l := float64(c.Objective[0]), float64(c.Objective[len(c.Objective)-1])
		p("| %s | %s | %d | %.4g | %.4g | %.3f |\n", c.Dataset, c.Method, len(c.Objective), f, l, l/f)
	}
	p("\n")
	figs(p, rep, "objective-")

	p("## Stream (model.Online, prequential)\n\n")
	p("Records arrive in a seeded random order in batches; each record is coded by model.Online.PartialFit (unlabeled) and predicted on arrival by 1-NN against the codes of live samples whose label has already arrived. %.0f%% of records get a label, %d records after the sample. Accuracy is over every predicted record (the evaluator knows all truths).\n\n", 100*streamLabelFrac, streamLabelLag)
	p("| data set | records | batch | window | predicted | prequential accuracy | records/s (PartialFit) |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range rep.Stream {
		win := "all"
		if s.Window > 0 {
			win = fmt.Sprint(s.Window)
		}
		p("| %s | %d | %d | %s | %d | %s | %.0f |\n", s.Dataset, s.Records, s.Batch, win, s.Predicted, fmtNum(s.Accuracy, 3), s.RecordsPerSecond)
	}
	p("\n")
	figs(p, rep, "stream-")

	p("## Documents (Brown corpus)\n\n")
	if d := rep.Documents; d == nil {
		p("Not run: the corpus is absent (see Notes).\n\n")
	} else {
		p("%d documents, %d genres, %d TF-IDF features, rank %d.\n\n", d.Docs, d.Classes, d.Features, d.Rank)
		p("Genre classification, %d-fold cross-validation, linear classifier:\n\n| representation | accuracy | std over folds | time (s) |\n|---|---:|---:|---:|\n", d.Folds)
		for _, c := range d.Classify {
			p("| %s | %s | %s | %s |\n", c.Method, fmtNum(c.Accuracy, 3), fmtNum(c.Std, 3), fmtNum(c.Seconds, 1))
		}
		p("\nClustering (k-means, one cluster per genre):\n\n| representation | clustering accuracy | NMI | time (s) |\n|---|---:|---:|---:|\n")
		for _, c := range d.Cluster {
			p("| %s | %s | %s | %s |\n", c.Method, fmtNum(c.Accuracy, 3), fmtNum(c.NMI, 3), fmtNum(c.Seconds, 1))
		}
		p("\n")
	}

	p("## Speed\n\n")
	p("| data set | what | unit | nmfstream | scikit-learn | nmfstream speed-up |\n|---|---|---|---:|---:|---:|\n")
	for _, s := range rep.Speed {
		prec := 3
		if s.Unit != "s" {
			prec = 0
		}
		p("| %s | %s | %s | %s | %s | %s |\n", s.Dataset, s.What, s.Unit, fmtNum(s.Go, prec), fmtNum(s.Sklearn, prec), fmtNum(s.Speedup, 2)+ifs(!math.IsNaN(float64(s.Speedup)), "×"))
	}
	p("\nA speed-up above 1 means nmfstream is faster.\n\n")

	p("## Time per experiment\n\n| experiment | seconds |\n|---|---:|\n")
	for _, t := range rep.Experiments {
		p("| %s | %.1f |\n", t.Name, t.Seconds)
	}
	p("| **total** | **%.1f** |\n", m.Seconds)
}

// pointTables writes one table per data set: methods as rows, the swept
// values as columns.
func pointTables(p func(string, ...any), points []Point, param, label string) {
	var sets []string
	seen := map[string]bool{}
	for _, pt := range points {
		if pt.Param == param && !seen[pt.Dataset] {
			seen[pt.Dataset] = true
			sets = append(sets, pt.Dataset)
		}
	}
	for _, ds := range sets {
		var values []float64
		vseen := map[float64]bool{}
		acc := map[string]map[float64]Num{}
		var methods []string
		for _, pt := range points {
			if pt.Param != param || pt.Dataset != ds {
				continue
			}
			if !vseen[pt.Value] {
				vseen[pt.Value] = true
				values = append(values, pt.Value)
			}
			if acc[pt.Method] == nil {
				acc[pt.Method] = map[float64]Num{}
				methods = append(methods, pt.Method)
			}
			acc[pt.Method][pt.Value] = pt.Accuracy
		}
		sort.Float64s(values)
		sort.SliceStable(methods, func(i, j int) bool { return styleIndex(methods[i]) < styleIndex(methods[j]) })
		p("**%s**, held-out accuracy by %s:\n\n| method |", ds, label)
		for _, v := range values {
			p(" %g |", v)
		}
		p("\n|---|")
		for range values {
			p("---:|")
		}
		p("\n")
		for _, me := range methods {
			p("| %s |", me)
			for _, v := range values {
				a, ok := acc[me][v]
				if !ok {
					p(" |")
					continue
				}
				p(" %s |", fmtNum(a, 3))
			}
			p("\n")
		}
		p("\n")
	}
}

// figs embeds the figures whose file starts with prefix.
func figs(p func(string, ...any), rep *Report, prefix string) {
	for _, f := range rep.Figures {
		if strings.HasPrefix(f.File, prefix) {
			p("![%s](%s)\n\n", f.Title, f.File)
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func ifs(c bool, s string) string {
	if c {
		return s
	}
	return ""
}
