package main

import (
	"fmt"
	"path/filepath"
	"sort"

	"github.com/nmfstream/nmfstream/internal/figure"
)

var styleOrder = append(append([]string{}, allMethods...), peerRaw, peerLabelProp, peerSkNMF, peerSkNMFRaw, peerSkSpread, streamCumulative, streamRecent)

// Names of the stream curves.
const (
	streamCumulative = "cumulative"
	streamRecent     = "last 500 records"
)

func styleIndex(name string) int {
	for i, n := range styleOrder {
		if n == name {
			return i
		}
	}
	return len(styleOrder)
}

// pointSeries groups points by method into curves ordered by Value.
func pointSeries(points []Point, dataset, param string) []figure.Series {
	by := map[string]*figure.Series{}
	var order []string
	for _, p := range points {
		if p.Dataset != dataset || p.Param != param {
			continue
		}
		s := by[p.Method]
		if s == nil {
			s = &figure.Series{Name: p.Method, Style: styleIndex(p.Method), Dashed: styleIndex(p.Method) >= len(allMethods)}
			by[p.Method] = s
			order = append(order, p.Method)
		}
		s.X = append(s.X, p.Value)
		s.Y = append(s.Y, float64(p.Accuracy))
	}
	sort.SliceStable(order, func(i, j int) bool { return styleIndex(order[i]) < styleIndex(order[j]) })
	out := make([]figure.Series, 0, len(order))
	for _, n := range order {
		out = append(out, *by[n])
	}
	return out
}

// plots draws every figure of the report from the measurements.
func (r *runner) plots() error {
	figs, notes := drawPlots(r.cfg.Out, r.rep)
	r.rep.Figures = append(r.rep.Figures, figs...)
	r.rep.Notes = append(r.rep.Notes, notes...)
	return nil
}

// drawPlots draws the line plots of rep into out and returns them, with a
// note for each figure that could not be drawn. It reads nothing but rep,
// so Rerender can redraw a finished report.
func drawPlots(out string, rep *Report) (written []Figure, notes []string) {
	sets := []string{"digits"}
	if rep.Meta.MNIST {
		sets = append(sets, "mnist")
	}
	type fig struct {
		file, title, xlabel, ylabel string
		ss                          []figure.Series
		logX, logY                  bool
	}
	var figs []fig
	for _, name := range sets {
		figs = append(figs, fig{
			file:   "accuracy-vs-labels-" + name + ".png",
			title:  fmt.Sprintf("%s: held-out accuracy vs labels (K = %d)", name, rep.Meta.Rank),
			xlabel: "labeled samples per class (L)", ylabel: "held-out accuracy",
			ss: pointSeries(rep.Labels, name, paramLabels), logX: true,
		})
		figs = append(figs, fig{
			file:   "occlusion-" + name + ".png",
			title:  fmt.Sprintf("%s: accuracy vs occlusion (L = %d)", name, rep.Meta.Labels),
			xlabel: "side of the square patch (pixels)", ylabel: "held-out accuracy",
			ss: pointSeries(rep.Occlusion, name, paramPatch),
		})
		var obj []figure.Series
		for _, c := range rep.Objective {
			if c.Dataset != name || len(c.Objective) == 0 {
				continue
			}
			s := figure.Series{Name: c.Method, Style: styleIndex(c.Method)}
			f0 := float64(c.Objective[0])
			for i, v := range c.Objective {
				s.X = append(s.X, float64(i+1))
				s.Y = append(s.Y, float64(v)/f0)
			}
			obj = append(obj, s)
		}
		figs = append(figs, fig{
			file:   "objective-" + name + ".png",
			title:  fmt.Sprintf("%s: objective per iteration (L = %d)", name, rep.Meta.Labels),
			xlabel: "iteration", ylabel: "relative objective",
			ss: obj, logY: true,
		})
		for _, st := range rep.Stream {
			if st.Dataset != name || len(st.At) == 0 {
				continue
			}
			cum := figure.Series{Name: streamCumulative, Style: styleIndex(streamCumulative)}
			rec := figure.Series{Name: streamRecent, Style: styleIndex(streamRecent)}
			for i := range st.At {
				cum.X = append(cum.X, float64(st.At[i]))
				cum.Y = append(cum.Y, float64(st.Running[i]))
				rec.X = append(rec.X, float64(st.At[i]))
				rec.Y = append(rec.Y, float64(st.Recent[i]))
			}
			figs = append(figs, fig{
				file:   "stream-" + name + ".png",
				title:  fmt.Sprintf("%s stream, model.Online: %.0f%% labels, %d records late", name, 100*st.LabelFrac, st.LabelLag),
				xlabel: "records seen", ylabel: "prequential accuracy",
				ss: []figure.Series{cum, rec},
			})
		}
	}
	for _, sw := range []struct {
		param, label string
		log          bool
	}{{paramRank, "rank K", false}, {paramAlpha, "α (graph weight)", true}, {paramBeta, "β (smoothness weight)", true}} {
		figs = append(figs, fig{
			file:   "sensitivity-" + sw.param + ".png",
			title:  fmt.Sprintf("digits: accuracy vs %s (L = %d)", sw.label, rep.Meta.Labels),
			xlabel: sw.label, ylabel: "held-out accuracy",
			ss: pointSeries(rep.Sensitivity, "digits", sw.param), logX: sw.log,
		})
	}
	for _, f := range figs {
		if len(f.ss) == 0 {
			continue
		}
		if err := figure.Line(filepath.Join(out, f.file), f.title, f.xlabel, f.ylabel, f.ss, f.logX, f.logY); err != nil {
			notes = append(notes, fmt.Sprintf("figure %s not drawn: %v", f.file, err))
			continue
		}
		written = append(written, Figure{File: f.file, Title: f.title})
	}
	return written, notes
}
