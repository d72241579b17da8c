package main

import (
	"math"
)

// runSensitivity sweeps one parameter ("rank", "alpha" or "beta") on the
// digits at the base L, the papers' sensitivity figures (the thesis'
// Fig. 2.4, N²S²L's and NGE's parameter studies). The other parameters
// keep their defaults.
func (r *runner) runSensitivity(param string) error {
	d := r.data["digits"]
	s, err := d.split(r.g.labels, r.seed)
	if err != nil {
		return err
	}
	var names []string
	var values []float64
	switch param {
	case paramRank:
		names = r.g.rankMethods
		for _, k := range r.g.ranks {
			values = append(values, float64(k))
		}
	case paramAlpha:
		names, values = r.g.alphaMethods, r.g.alphas
	case paramBeta:
		names, values = r.g.betaMethods, r.g.betas
	}
	for _, name := range names {
		me, _ := lookup(name)
		for _, v := range values {
			if err := r.ctx.Err(); err != nil {
				return err
			}
			h := hyper{Rank: r.g.rank, Iters: r.g.iters, Nystrom: d.nystrom}
			switch param {
			case paramRank:
				h.Rank = int(v)
			case paramAlpha:
				h.Alpha = v
			case paramBeta:
				h.Beta = v
			}
			p := Point{Dataset: d.name, Method: name, Param: param, Value: v}
			acc, res, err := heldOut(me, h, s, r.seed)
			p.Accuracy, p.FitSeconds = Num(acc), Num(math.NaN())
			if res != nil {
				p.FitSeconds = Num(res.fitTime.Seconds())
			}
			if err != nil {
				p.Error = err.Error()
				r.progress("%s %s=%g: %v", name, param, v, err)
			} else {
				r.progress("%s %s=%g accuracy %.4f (fit %.1fs)", name, param, v, acc, res.fitTime.Seconds())
			}
			r.rep.Sensitivity = append(r.rep.Sensitivity, p)
		}
	}
	return nil
}
