package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/nmfstream/nmfstream/internal/figure"
	"github.com/nmfstream/nmfstream/model/metrics"
)

// runBases measures the sparsity of every fitted basis in pixel space and
// draws the bases of grid.imageMethods as image grids (the papers' basis
// figures: NGE Fig. 4, N²S²L Fig. 1–2).
func (r *runner) runBases() error {
	for _, d := range r.datasets() {
		for _, name := range r.methodsFor(d) {
			f := r.fits[d.name][name]
			if f == nil {
				continue
			}
			if kernelMethods[name] {
				continue // their basis Φ(X)A lives in the kernel feature space, not in pixels
			}
			u := f.res.m.Basis()
			row := SparsityRow{Dataset: d.name, Method: name, Hoyer: Num(metrics.Hoyer(u))}
			for _, m := range r.g.imageMethods {
				if m != name {
					continue
				}
				file := fmt.Sprintf("bases-%s-%s.png", d.name, name)
				title := fmt.Sprintf("%s on %s: the K = %d columns of U, each scaled to its largest weight (dark = large)", name, d.name, r.g.rank)
				if err := figure.Basis(filepath.Join(r.cfg.Out, file), title, u, d.width, d.height); err != nil {
					return err
				}
				row.Image = file
				r.figure(file, fmt.Sprintf("Basis images of %s on %s (K = %d, L = %d; dark = large weight)", name, d.name, r.g.rank, r.g.labels))
			}
			r.rep.Sparsity = append(r.rep.Sparsity, row)
		}
	}
	r.note("Sparsity is not given for the kernel methods: their basis vectors Φ(X)A live in the kernel feature space, not in pixel space.")
	return nil
}

// figure records a written PNG.
func (r *runner) figure(file, title string) {
	r.rep.Figures = append(r.rep.Figures, Figure{File: file, Title: title})
}

// intsString formats v as "0, 1, 2".
func intsString(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
