package main

import (
	"math"
	"slices"
	"time"

	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/metrics"
)

// fitted is a method fitted on a dataset's base split (L = grid.labels),
// kept for the experiments that reuse it.
type fitted struct {
	me  method
	res *fitResult
	s   *split
	acc float64
}

// Peer names, as they appear in tables and plots.
const (
	peerRaw        = "raw pixels 1-NN"
	peerLabelProp  = "label spreading (Go)"
	peerSkNMF      = "scikit-learn NMF + 1-NN"
	peerSkNMFRaw   = "scikit-learn NMF, raw codes"
	peerSkSpread   = "scikit-learn LabelSpreading"
	paramLabels    = "labels_per_class"
	paramRank      = "rank"
	paramAlpha     = "alpha"
	paramBeta      = "beta"
	paramPatch     = "patch"
	kindFactorize  = "nmfstream"
	kindPeerGo     = "peer (Go)"
	kindPeerSklern = "peer (scikit-learn)"
)

// datasets returns the loaded image data sets in display order.
func (r *runner) datasets() []*dataset {
	var out []*dataset
	for _, n := range []string{"digits", "mnist"} {
		if d := r.data[n]; d != nil {
			out = append(out, d)
		}
	}
	return out
}

// methodsFor returns the methods of the label sweep on d.
func (r *runner) methodsFor(d *dataset) []string {
	if d.name == "mnist" {
		return r.g.mnistMethods
	}
	return r.g.labelMethods
}

// runLabels measures held-out accuracy against labels per class for every
// method and the peers, caching the fits at the base L.
func (r *runner) runLabels() error {
	for _, d := range r.datasets() {
		r.fits[d.name] = map[string]*fitted{}
		for _, l := range r.g.labelSweep {
			s, err := d.split(l, r.seed)
			if err != nil {
				return err
			}
			for _, name := range r.methodsFor(d) {
				if err := r.ctx.Err(); err != nil {
					return err
				}
				me, _ := lookup(name)
				if kernelMethods[name] && l != r.g.labels && (d.name == "mnist" || !slices.Contains(r.g.kernelLabels, l)) {
					continue // the kernel methods are slow: base L only (and on MNIST always)
				}
				h := hyper{Rank: r.g.rank, Iters: r.g.iters, Nystrom: d.nystrom}
				acc, res, err := heldOut(me, h, s, r.seed)
				p := Point{Dataset: d.name, Method: name, Param: paramLabels, Value: float64(l), Accuracy: Num(acc), FitSeconds: Num(math.NaN())}
				if res != nil {
					p.FitSeconds = Num(res.fitTime.Seconds())
				}
				if err != nil {
					p.Error = err.Error()
					r.progress("%s L=%d %s: %v", d.name, l, name, err)
				} else {
					r.progress("%s L=%d %-7s accuracy %.4f (fit %.1fs)", d.name, l, name, acc, res.fitTime.Seconds())
				}
				r.rep.Labels = append(r.rep.Labels, p)
				if l == r.g.labels && err == nil {
					r.fits[d.name][name] = &fitted{me: me, res: res, s: s, acc: acc}
				}
			}
			r.goPeers(d, l, s)
			id := peerID("accuracy", d.name, l)
			if _, ok := r.peers[id]; ok {
				r.rep.Labels = append(r.rep.Labels,
					Point{Dataset: d.name, Method: peerSkNMF, Param: paramLabels, Value: float64(l),
						Accuracy: Num(r.peer(id, "nmf_1nn")), FitSeconds: Num(r.peer(id, "nmf_fit_seconds"))},
					Point{Dataset: d.name, Method: peerSkNMFRaw, Param: paramLabels, Value: float64(l),
						Accuracy: Num(r.peer(id, "nmf_1nn_raw")), FitSeconds: Num(r.peer(id, "nmf_fit_seconds"))},
					Point{Dataset: d.name, Method: peerSkSpread, Param: paramLabels, Value: float64(l),
						Accuracy: Num(r.peer(id, "label_spreading")), FitSeconds: Num(r.peer(id, "label_spreading_seconds"))})
			}
		}
	}
	return nil
}

// goPeers measures the baselines that need no factorization: 1-NN on raw
// pixels against the labeled samples, and label spreading on the pixels
// (classify.LabelPropagation, Zhou et al.'s algorithm, 7-NN graph).
func (r *runner) goPeers(d *dataset, l int, s *split) {
	raw := classify.NearestNeighbor{}
	p := Point{Dataset: d.name, Method: peerRaw, Param: paramLabels, Value: float64(l), FitSeconds: 0}
	if err := raw.Fit(metrics.TakeRows(s.train, s.labeled), metrics.Take(s.trainY, s.labeled)); err != nil {
		p.Accuracy, p.Error = Num(math.NaN()), err.Error()
	} else {
		p.Accuracy = Num(metrics.Accuracy(raw.PredictTo(nil, s.test), s.testY))
	}
	r.rep.Labels = append(r.rep.Labels, p)

	lp := classify.LabelPropagation{}
	start := time.Now()
	p = Point{Dataset: d.name, Method: peerLabelProp, Param: paramLabels, Value: float64(l)}
	if err := lp.Fit(s.train, s.trainY); err != nil {
		p.Accuracy, p.Error = Num(math.NaN()), err.Error()
	} else {
		p.FitSeconds = Num(time.Since(start).Seconds())
		p.Accuracy = Num(metrics.Accuracy(lp.PredictTo(nil, s.test), s.testY))
	}
	r.rep.Labels = append(r.rep.Labels, p)
}

// runHeadline collects the README table: every method and peer on the
// digits at the base L.
func (r *runner) runHeadline() error {
	for _, p := range r.rep.Labels {
		if p.Dataset != "digits" || p.Value != float64(r.g.labels) {
			continue
		}
		kind := kindFactorize
		switch p.Method {
		case peerRaw, peerLabelProp:
			kind = kindPeerGo
		case peerSkNMF, peerSkNMFRaw, peerSkSpread:
			kind = kindPeerSklern
		}
		r.rep.Headline = append(r.rep.Headline, HeadlineRow{Method: p.Method, Kind: kind, Accuracy: p.Accuracy, FitSeconds: p.FitSeconds})
	}
	return nil
}
