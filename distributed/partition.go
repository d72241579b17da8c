package distributed

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"gonum.org/v1/gonum/floats"
)

// Partitioner maps a sample to one of P virtual partitions by a
// locality-preserving key: the sample, scaled to unit norm, is sketched to
// SketchDim dimensions by a seeded Gaussian random projection, and its
// partition is the nearest of P coarse centroids in the sketch space
// (k-means on the sketches of a first batch of samples). Nearby samples
// mostly share a partition, so most k-NN edges stay inside one.
//
// A Partitioner is safe for concurrent use once made.
type Partitioner struct {
	// Dim is the sample dimension D.
	Dim int
	// SketchDim is the sketch dimension.
	SketchDim int
	// Seed seeds the projection.
	Seed uint64
	// Mean is the mean entry of the samples it was fitted on; it scales
	// the first basis.
	Mean float64
	// Centroids holds the P centroids, each of length SketchDim.
	Centroids [][]float64

	once sync.Once
	r    []float64 // Dim×SketchDim projection, row-major
}

// NewPartitioner returns a partitioner with parts partitions, fitted by
// seeded k-means on the sketches of samples (at least parts of them, all of
// one dimension).
func NewPartitioner(samples []Sample, parts, sketchDim int, seed uint64) (*Partitioner, error) {
	if parts < 1 || sketchDim < 1 {
		return nil, fmt.Errorf("distributed: %d partitions and sketch dimension %d (both must be positive)", parts, sketchDim)
	}
	if len(samples) < parts {
		return nil, fmt.Errorf("distributed: %d samples to place %d partitions (need at least one each)", len(samples), parts)
	}
	p := &Partitioner{Dim: samples[0].Dim, SketchDim: sketchDim, Seed: seed}
	ys := make([][]float64, len(samples))
	for i := range samples {
		if err := samples[i].check(); err != nil {
			return nil, err
		}
		if samples[i].Dim != p.Dim {
			return nil, fmt.Errorf("distributed: sample %d has dimension %d, the first %d", samples[i].ID, samples[i].Dim, p.Dim)
		}
		ys[i] = p.sketch(&samples[i])
		if samples[i].Dense != nil {
			p.Mean += floats.Sum(samples[i].Dense)
		} else {
			p.Mean += floats.Sum(samples[i].Value)
		}
	}
	p.Mean /= float64(len(samples) * p.Dim)
	p.Centroids = kmeans(ys, parts, rand.New(rand.NewPCG(seed, 2)))
	return p, nil
}

// Partition returns the partition of s, in [0, P).
func (p *Partitioner) Partition(s *Sample) int { return p.Nearest(s, 1)[0] }

// Nearest returns the m partitions whose centroids are nearest to s's
// sketch, nearest first (all of them if m ≥ P).
func (p *Partitioner) Nearest(s *Sample, m int) []int {
	y := p.sketch(s)
	idx := make([]int, len(p.Centroids))
	dist := make([]float64, len(p.Centroids))
	for c := range p.Centroids {
		idx[c], dist[c] = c, sqDist(y, p.Centroids[c])
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case dist[a] < dist[b]:
			return -1
		case dist[a] > dist[b]:
			return 1
		}
		return 0
	})
	return idx[:min(m, len(idx))]
}

func (p *Partitioner) sketch(s *Sample) []float64 {
	p.once.Do(func() {
		p.r = make([]float64, p.Dim*p.SketchDim)
		rnd := rand.New(rand.NewPCG(p.Seed, 1))
		for i := range p.r {
			p.r[i] = rnd.NormFloat64()
		}
	})
	y := make([]float64, p.SketchDim)
	add := func(j int, v float64) {
		if j >= p.Dim {
			return // a sample wider than the partitioner: the extra features do not place it
		}
		row := p.r[j*p.SketchDim : (j+1)*p.SketchDim]
		for c, r := range row {
			y[c] += v * r
		}
	}
	var nrm float64
	if s.Dense != nil {
		for j, v := range s.Dense {
			add(j, v)
			nrm += v * v
		}
	} else {
		for i, j := range s.Index {
			add(j, s.Value[i])
			nrm += s.Value[i] * s.Value[i]
		}
	}
	if nrm > 0 {
		nrm = 1 / math.Sqrt(nrm)
		for c := range y {
			y[c] *= nrm
		}
	}
	return y
}

// kmeans returns k unit-norm centroids of ys (unit-norm sketches) by
// k-means++ seeding and 20 iterations of spherical k-means (Dhillon and
// Modha 2001): each sketch goes to the centroid of largest cosine, and
// each centroid is the normalized sum of its sketches.
func kmeans(ys [][]float64, k int, rnd *rand.Rand) [][]float64 {
	cent := [][]float64{slices.Clone(ys[rnd.IntN(len(ys))])}
	d2 := make([]float64, len(ys))
	for len(cent) < k {
		var sum float64
		for i, y := range ys {
			d2[i] = math.Inf(1)
			for _, c := range cent {
				d2[i] = min(d2[i], sqDist(y, c))
			}
			sum += d2[i]
		}
		pick := rnd.IntN(len(ys))
		if sum > 0 {
			t := rnd.Float64() * sum
			for i, d := range d2 {
				if t -= d; t <= 0 {
					pick = i
					break
				}
			}
		}
		cent = append(cent, slices.Clone(ys[pick]))
	}
	assign := make([]int, len(ys))
	for range 20 {
		for i, y := range ys {
			best := math.Inf(1)
			for c := range cent {
				if d := sqDist(y, cent[c]); d < best {
					best, assign[i] = d, c
				}
			}
		}
		count := make([]int, k)
		for c := range cent {
			clear(cent[c])
		}
		for i, y := range ys {
			count[assign[i]]++
			for j, v := range y {
				cent[assign[i]][j] += v
			}
		}
		for c := range cent {
			if count[c] == 0 {
				copy(cent[c], ys[rnd.IntN(len(ys))]) // an empty cluster restarts at a random sample
				continue
			}
			// Spherical k-means: the sketches have unit norm, and so do
			// the centroids, so that the nearest centroid is the one of
			// largest cosine. A mean of many nearly orthogonal sketches
			// (documents) is short, and would otherwise be the nearest
			// centroid of every sample orthogonal to all of them.
			if nrm := math.Sqrt(floats.Dot(cent[c], cent[c])); nrm > 0 {
				floats.Scale(1/nrm, cent[c])
			}
		}
	}
	return cent
}

func sqDist(a, b []float64) float64 {
	var s float64
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return s
}

func encodePartitioner(p *Partitioner) []byte {
	var e enc
	e.u8('P')
	e.u32(uint32(p.Dim))
	e.u32(uint32(p.SketchDim))
	e.u64(p.Seed)
	e.f64(p.Mean)
	e.u32(uint32(len(p.Centroids)))
	for _, c := range p.Centroids {
		e.f64s(c)
	}
	return e.b
}

func decodePartitioner(b []byte) (*Partitioner, error) {
	d := dec{b: b}
	if d.u8() != 'P' {
		return nil, errors.New("distributed: not a partitioner value")
	}
	p := &Partitioner{Dim: int(d.u32()), SketchDim: int(d.u32()), Seed: d.u64(), Mean: d.f64()}
	n := d.count(p.SketchDim * 8)
	if d.err == nil && (p.Dim <= 0 || p.SketchDim <= 0 || n <= 0) {
		return nil, errors.New("distributed: partitioner value with no partitions")
	}
	for range n {
		p.Centroids = append(p.Centroids, d.f64s(p.SketchDim))
	}
	if d.err != nil {
		return nil, d.err
	}
	return p, nil
}
