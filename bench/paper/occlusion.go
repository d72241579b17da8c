package main

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/figure"
	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/metrics"
)

// occlude returns a copy of x (one w×h image per row) with a side×side
// patch of value v pasted at a uniformly drawn position in every image,
// as in NGE's Fig. 7 and N²S²L's Fig. 4 (their patches hide part of a
// face; here the patch takes the brightest pixel value, which on dark
// digit backgrounds adds a stroke-like blob rather than hiding ink).
func occlude(x *mat.Dense, w, h, side int, v float64, src rand.Source) *mat.Dense {
	out := mat.DenseCopyOf(x)
	if side <= 0 {
		return out
	}
	rnd := rand.New(src)
	n, _ := x.Dims()
	for i := range n {
		row := out.RawRowView(i)
		r0, c0 := rnd.IntN(h-side+1), rnd.IntN(w-side+1)
		for r := r0; r < r0+side; r++ {
			for c := c0; c < c0+side; c++ {
				row[r*w+c] = v
			}
		}
	}
	return out
}

// occlusionSizes returns the patch sides for d.
func (r *runner) occlusionSizes(d *dataset) []int {
	if d.name == "mnist" {
		return r.g.mnistOcclusion
	}
	return r.g.occlusion
}

// runOcclusion projects occluded test images on the bases fitted at the
// base L and scores 1-NN against the labeled training codes.
func (r *runner) runOcclusion() error {
	for _, d := range r.datasets() {
		sizes := r.occlusionSizes(d)
		if len(sizes) == 0 {
			continue
		}
		s, err := d.split(r.g.labels, r.seed)
		if err != nil {
			return err
		}
		var examples []*mat.Dense
		for _, side := range sizes {
			test := occlude(s.test, d.width, d.height, side, d.maxPixel, rand.NewPCG(r.seed, uint64(side)))
			examples = append(examples, test)
			// Peer: 1-NN on the occluded pixels.
			raw := classify.NearestNeighbor{}
			p := Point{Dataset: d.name, Method: peerRaw, Param: paramPatch, Value: float64(side), FitSeconds: Num(math.NaN())}
			if err := raw.Fit(metrics.TakeRows(s.train, s.labeled), metrics.Take(s.trainY, s.labeled)); err != nil {
				p.Accuracy, p.Error = Num(math.NaN()), err.Error()
			} else {
				p.Accuracy = Num(metrics.Accuracy(raw.PredictTo(nil, test), s.testY))
			}
			r.rep.Occlusion = append(r.rep.Occlusion, p)
			for _, name := range r.g.occlusionMethods {
				if err := r.ctx.Err(); err != nil {
					return err
				}
				f := r.fits[d.name][name]
				if f == nil {
					continue
				}
				p := Point{Dataset: d.name, Method: name, Param: paramPatch, Value: float64(side), FitSeconds: Num(f.res.fitTime.Seconds())}
				codes, err := projectTest(f.me, f.res, s, test)
				if err == nil {
					var acc float64
					acc, err = classify1NN(f.res.m.Codes(), s, codes, s.testY)
					p.Accuracy = Num(acc)
				}
				if err != nil {
					p.Accuracy, p.Error = Num(math.NaN()), err.Error()
				}
				r.rep.Occlusion = append(r.rep.Occlusion, p)
			}
			r.progress("%s patch %d×%d done", d.name, side, side)
		}
		// A strip of the first few test images at every patch size.
		file := "occlusion-examples-" + d.name + ".png"
		names := make([]string, len(sizes))
		for i, side := range sizes {
			names[i] = fmt.Sprintf("patch %d×%d", side, side)
		}
		title := fmt.Sprintf("Occluded test images of %s, one row per patch size", d.name)
		if err := figure.Examples(r.cfg.Out, file, title, names, examples, d.width, d.height, 8); err != nil {
			return err
		}
		r.figure(file, "Occluded test images, "+d.name+" (rows: patch side "+intsString(sizes)+")")
	}
	return nil
}
