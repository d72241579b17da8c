package main

import (
	"math"
)

// params are the inputs of the cost model of a stream of samples across N
// machines (docs/DESIGN.md, "Cost model"). Sizes are in bytes, times in
// seconds, rates per second.
type params struct {
	Samples    float64 // samples in the stream
	Dim        float64 // dimension D
	NNZ        float64 // nonzero entries per sample (D for dense data)
	Rank       float64 // rank K
	GFlops     float64 // sustained GFlop/s of one machine, all its cores
	Cores      float64 // cores of one machine
	Round      float64 // shortest round (an owner's batch), s
	Staleness  int     // staleness bound s, in rounds
	PerMachine int     // virtual partitions per machine
	InitSweeps float64 // sweeps coding a new sample
	Refresh    float64 // older codes swept per new sample
	Replicas   float64 // replicas of the streams and buckets

	// Bandwidth is the bytes per second one machine's network link
	// carries each way (0: no limit).
	Bandwidth float64
	// CoordGFlops is the GFlop/s of the coordinator, one core (0: GFlops/Cores).
	CoordGFlops float64
	// DeltaCPU is the coordinator's CPU seconds per delta besides the
	// flops of adding it (decoding, the log's bookkeeping).
	DeltaCPU float64
	// SampleCPU is the CPU seconds per sample, over every process,
	// besides its flops: publishing, replicating, delivering, asking for
	// its neighbours.
	SampleCPU float64
	// RoundCPU is the CPU seconds per partition and round, over every
	// process, besides the flops: the owner's fetch, its delta's publish
	// and replication, the coordinator's read, the basis version's
	// delivery to the owner.
	RoundCPU float64
	// Delay is the one-way network delay between two machines, s, and
	// Trips the one-way trips a round waits for in sequence (a sample's
	// publish and replication, its delivery, the delta's publish and
	// replication, its delivery, the basis version's write, replication
	// and delivery): a round lasts at least Trips·Delay.
	Delay, Trips float64
}

// defaultParams are the model's defaults: sparse samples, D = 10⁵, 100
// nonzeros, K = 50, 10 GFlop/s per 4-core machine, rounds of 1 s, s = 2,
// 8 partitions per machine, 3 replicas, 10 Gb/s links; the per-sample and
// per-round CPU and the trips per round are those calibrated on
// scripts/netlab.sh's digits runs of 2026-11-28 (BENCHMARKS.md, "Machines
// in network namespaces"; upper bounds for bulk ingestion, since the lab's
// steps are of 10 records), the delay 0.1 ms of one data centre; the
// coordinator's 0.2 ms per delta is assumed, the lab does not separate it.
var defaultParams = params{
	Samples: 1e8, Dim: 1e5, NNZ: 100, Rank: 50, GFlops: 10, Cores: 4, Round: 1, Staleness: 2,
	PerMachine: 8, InitSweeps: 10, Refresh: 1, Replicas: 3,
	Bandwidth: 1.25e9, DeltaCPU: 2e-4, SampleCPU: 4.3e-3, RoundCPU: 0.041, Delay: 1e-4, Trips: 155,
}

// row is the model's figures for one machine count.
type row struct {
	Machines, Partitions float64
	Round                float64 // the round's length, s: Params.Round or longer if a limit needs it
	Rate                 float64 // samples per second
	Hours                float64 // for all Params.Samples
	Limit                string  // what bounds Rate: cpu, network; and the round: coordinator, fan-out, latency, overhead
	SampleBytes          float64 // one sample message
	DeltaBytes           float64 // one delta message
	BasisBytes           float64 // one basis version
	NetPerSample         float64 // bytes across the network per sample: publish, replication, delivery to its owner
	NetPerDelta          float64 // bytes across the network per delta
	NetPerVersion        float64 // bytes across the network per basis version: write, replication, N deliveries
	NetPerMachine        float64 // bytes per second on each machine's link, the traffic spread evenly
	FanOut               float64 // bytes per second out of the node holding the basis (N deliveries per version)
	CoordBusy            float64 // the coordinator's share of one core
	Msgs                 float64 // messages per second into the servers
	Deltas               float64 // deltas per second
	StalenessSeconds     float64 // the bound s × round length
}

// at is the model for n machines: the sample rate the CPUs allow at rounds
// of Params.Round, lowered to what the network carries, with rounds
// lengthened until the coordinator (one core) keeps up with them, the
// basis's fan-out fits the link of the node that serves it, the round's
// trips fit in it, and the per-round overhead takes at most half the CPU
// and its traffic without samples at most half the links.
func (p params) at(n float64) row {
	d, z, k := p.Dim, p.NNZ, p.Rank
	r := row{Machines: n, Partitions: n * float64(p.PerMachine)}
	P := r.Partitions
	// Flops of one sweep of one code: XᵀU on its nonzeros, V·UᵀU; and of
	// its statistics: x vᵀ into B, v vᵀ into A (twice for a changed code:
	// old out, new in).
	sweep := 2*z*k + 2*k*k
	stats := 2*z*k + k*k
	flops := p.InitSweeps*sweep + stats + p.Refresh*(sweep+2*stats)
	core := p.GFlops * 1e9 / p.Cores
	coord := p.CoordGFlops * 1e9
	if coord == 0 {
		coord = core
	}
	perSample := flops/core + p.SampleCPU // CPU seconds per sample
	r.SampleBytes = 26 + 12*z
	if z >= d {
		r.SampleBytes = 26 + 8*d
	}
	r.BasisBytes = 41 + 8 + 8*d*k
	r.NetPerSample = r.SampleBytes * (p.Replicas + 1)
	r.NetPerVersion = r.BasisBytes * (p.Replicas + n)

	tr := p.Round
	var rows, coordRound float64
	for range 100 {
		limit := ""
		// The round's own bounds.
		if b := p.Trips * p.Delay; b > tr {
			tr, limit = b, "latency"
		}
		if b := 2 * P * p.RoundCPU / (n * p.Cores); b > tr {
			tr, limit = b, "overhead"
		}
		if p.Bandwidth > 0 {
			if b := n * r.BasisBytes / p.Bandwidth; b > tr {
				tr, limit = b, "fan-out"
			}
			// The traffic of a round without samples (its smallest deltas
			// and one basis version) takes at most half the links.
			fixed := P*(77+8*k*k)*(p.Replicas+1) + r.NetPerVersion
			if b := 2 * fixed / (n * p.Bandwidth); b > tr {
				tr, limit = b, "network"
			}
		}
		rate := (n*p.Cores - P*p.RoundCPU/tr) / perSample
		rlimit := "cpu"
		// One round of a partition: b new samples, refresh·b older ones.
		changed := func(rate float64) float64 { return rate * tr / P * (1 + p.Refresh) }
		// Rows of ΔB: the union of the changed samples' features.
		rowsOf := func(rate float64) float64 { return d * (1 - math.Pow(1-z/d, changed(rate))) }
		deltaBytes := func(rate float64) float64 {
			return 77 + 8*k*k + rowsOf(rate)*(4+8*k) + changed(rate)*(4+8*k)
		}
		if p.Bandwidth > 0 {
			// Total traffic spread over the n links: bisect the rate at
			// which it fills them (the delta bytes grow with the rate).
			net := func(rate float64) float64 {
				return rate*r.NetPerSample + P/tr*deltaBytes(rate)*(p.Replicas+1) + r.NetPerVersion/tr
			}
			if net(rate) > n*p.Bandwidth {
				lo, hi := 0.0, rate
				for range 60 {
					mid := (lo + hi) / 2
					if net(mid) > n*p.Bandwidth {
						hi = mid
					} else {
						lo = mid
					}
				}
				rate, rlimit = lo, "network"
			}
		}
		rows = rowsOf(rate)
		// The coordinator adds each delta's rows, and steps U once per
		// round: U·A (2DK²) and the update (2DK).
		coordRound = P*(p.DeltaCPU+(rows*k+k*k)/coord) + (2*d*k*k+2*d*k)/coord
		if coordRound > tr*1.0000001 {
			tr = coordRound
			continue // a longer round: more samples per delta, recompute
		}
		r.Rate, r.DeltaBytes = rate, deltaBytes(rate)
		r.Limit = rlimit
		if limit != "" {
			r.Limit += ", round: " + limit
		} else if tr > p.Round {
			r.Limit += ", round: coordinator"
		}
		break
	}
	r.Round = tr
	r.NetPerDelta = r.DeltaBytes * (p.Replicas + 1)
	r.Deltas = P / tr
	r.NetPerMachine = (r.Rate*r.NetPerSample + r.Deltas*r.NetPerDelta + r.NetPerVersion/tr) / n
	r.FanOut = n * r.BasisBytes / tr
	r.CoordBusy = coordRound / tr
	r.Hours = p.Samples / r.Rate / 3600
	// Samples, deltas, U versions to N watchers, ticks to P+1 roles (4 per
	// second per machine and role).
	r.Msgs = r.Rate + r.Deltas + n/tr + n*4*(P+1)
	r.StalenessSeconds = float64(p.Staleness) * tr
	return r
}
