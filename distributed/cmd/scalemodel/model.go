package main

import (
	"math"
	"strings"
)

// params are the inputs of the cost model of the chain on the owners
// (distributed/DESIGN.md, "Cost model") learning a stream across N
// machines: a driver decodes and featurizes the records, sends each batch
// to the P partitions (one share each) through a replicated JetStream
// stream, and each partition's owner learns its share and answers. Sizes
// are in bytes, times in seconds, rates per second.
type params struct {
	Samples    float64 // samples in the stream
	Dim        float64 // dimension D
	NNZ        float64 // nonzero entries per sample (D for dense data)
	Batch      float64 // records per driver batch at one partition (stream's batch)
	Window     float64 // the learners' window: a driver batch at P > 1 holds P·Batch records, at most Window (0: no bound)
	Cores      float64 // cores of one machine
	PerMachine int     // partitions (owners) per machine
	Replicas   float64 // replicas of the streams
	Drivers    float64 // driver processes, each on a machine of its own

	// Bandwidth is the bytes per second one machine's network link
	// carries each way (0: no limit).
	Bandwidth float64
	// OwnerCPU is an owner's learner's CPU seconds per sample: the
	// single machine's stream per record.
	OwnerCPU float64
	// MsgCPU is the CPU seconds per record, over every process, of its
	// messages: the driver's publish, the servers' replication and
	// delivery, the owner's decoding, the answer's way back.
	MsgCPU float64
	// ShareCPU is the CPU seconds, over every process, of one partition's
	// share of one batch beyond its records: each batch sends a share to
	// every partition (empty if it has no record there), and each owner
	// answers each.
	ShareCPU float64
	// DriverCPU is a driver's CPU seconds per record (decode, featurize,
	// route, publish, merge the answers), and DriverCores the cores its
	// work spreads over: its publish and collect stages are one goroutine
	// each.
	DriverCPU, DriverCores float64
	// Slack is the partitions' capacity rule (distributed.Router.Slack): a
	// partition takes at most 1/P + Slack of the samples, so the busiest
	// owner learns up to that share.
	Slack float64
	// Delay is the one-way network delay between two machines, s, and
	// Trips the one-way trips per batch that the pipelined driver waits
	// for (effective: batches in flight overlap their trips): a batch
	// takes at least Trips·Delay.
	Delay, Trips float64
}

// Wire sizes of the chain's messages beyond their rows (gob and headers),
// bytes.
const (
	shareBytes  = 300 // a batch share's message without its rows
	answerBytes = 40  // one prediction in an answer: id, offset, label, score
)

// defaultParams are the model's defaults: sparse samples, D = 10⁵, 100
// nonzeros, batches of 100 (P·100 at P > 1, up to the window of 10,000),
// 4-core machines with one owner per core, 3
// replicas, 10 Gb/s links, one driver, the delay 0.1 ms of one data
// centre; the CPU constants and the trips are those calibrated on
// scripts/netlab.sh's digits runs of the chain
// (bench/netlab/runs-chain-digits-2026-11-28.jsonl; BENCHMARKS.md, "The
// chain in network namespaces"): the digits' learner, not a document's,
// so OwnerCPU is a lower bound for D = 10⁵. MsgCPU is 0 because the fit
// leaves none: the CPU per record at one partition is the single
// machine's learning (C0) plus one share per batch.
var defaultParams = params{
	Samples: 1e8, Dim: 1e5, NNZ: 100, Batch: 100, Window: 1e4, Cores: 4, PerMachine: 4, Replicas: 3, Drivers: 1,
	Bandwidth: 1.25e9, OwnerCPU: 1.01e-4, MsgCPU: 0, ShareCPU: 5.51e-3, DriverCPU: 2.28e-5, DriverCores: 1,
	Slack: 0.2, Delay: 1e-4, Trips: 6.38,
}

// row is the model's figures for one machine count.
type row struct {
	Machines, Partitions float64
	Batch                float64 // records per driver batch: Batch, or at P > 1 P·Batch up to Window
	Rate                 float64 // samples per second
	Hours                float64 // for all Params.Samples
	Limit                string  // what bounds Rate: cpu, owner, driver, network, driver link, latency
	CPUPerRecord         float64 // CPU seconds per record over every process
	MaxShare             float64 // the busiest owner's share of the samples
	SampleBytes          float64 // one sample's row in a share
	NetPerRecord         float64 // bytes across the network per record: its row and answer, each stored on every replica and delivered once, and its part of the shares' fixed bytes
	NetPerMachine        float64 // bytes per second on each machine's link, the traffic spread evenly
	DriverLink           float64 // bytes per second on a driver's link: the rows out, the answers in
	DriverBusy           float64 // a driver's share of its DriverCores
	OwnerBusy            float64 // the busiest owner's share of its core(s)
	Msgs                 float64 // messages per second into the servers: shares and answers
}

// at is the model for n machines: the sample rate as the least of what
// the machines' CPUs, the busiest owner's core(s), the drivers, the links
// (the drivers' own and all of them) and the pipelined batches' trips
// allow.
func (p params) at(n float64) row {
	r := row{Machines: n, Partitions: n * float64(p.PerMachine), Batch: p.Batch}
	P := r.Partitions
	r.MaxShare = 1.0
	if P > 1 {
		r.MaxShare = math.Min(1, 1/P+p.Slack)
		// stream --nats's batches at P > 1 (partitionedBatch): each owner
		// steps on about Batch of its share; the common start's smaller
		// batches are negligible in a long stream.
		r.Batch = P * p.Batch
		if p.Window > 0 {
			r.Batch = math.Min(r.Batch, math.Max(p.Window, p.Batch))
		}
	}
	B := r.Batch
	r.SampleBytes = 12 * p.NNZ
	if p.NNZ >= p.Dim {
		r.SampleBytes = 8 * p.Dim
	}
	r.CPUPerRecord = p.OwnerCPU + p.MsgCPU + p.ShareCPU*P/B
	fixed := 2 * P * shareBytes / B // a share and its answer per partition and batch
	r.NetPerRecord = (r.SampleBytes + answerBytes + fixed) * (p.Replicas + 1)

	type bound struct {
		name string
		rate float64
	}
	coresPerOwner := p.Cores / float64(p.PerMachine)
	bounds := []bound{
		{"cpu", n * p.Cores / r.CPUPerRecord},
		// The busiest owner learns MaxShare of the samples and answers
		// every batch (charged all of a share's cost: an upper bound).
		{"owner", coresPerOwner / (r.MaxShare*p.OwnerCPU + p.ShareCPU/B)},
		{"driver", p.Drivers * p.DriverCores / p.DriverCPU},
	}
	if p.Bandwidth > 0 {
		bounds = append(bounds, bound{"network", n * p.Bandwidth / r.NetPerRecord},
			bound{"driver link", p.Drivers * p.Bandwidth / (r.SampleBytes + answerBytes + fixed)})
	}
	if p.Delay > 0 && p.Trips > 0 {
		bounds = append(bounds, bound{"latency", p.Drivers * B / (p.Trips * p.Delay)})
	}
	r.Rate = math.Inf(1)
	var limits []string
	for _, b := range bounds {
		switch {
		case b.rate < r.Rate*(1-1e-9):
			r.Rate, limits = b.rate, []string{b.name}
		case b.rate <= r.Rate*(1+1e-9):
			limits = append(limits, b.name)
		}
	}
	r.Limit = strings.Join(limits, ", ")
	r.Hours = p.Samples / r.Rate / 3600
	r.NetPerMachine = r.Rate * r.NetPerRecord / n
	r.DriverLink = r.Rate / p.Drivers * (r.SampleBytes + answerBytes + fixed)
	r.DriverBusy = r.Rate / p.Drivers * p.DriverCPU / p.DriverCores
	r.OwnerBusy = r.Rate * (r.MaxShare*p.OwnerCPU + p.ShareCPU/B) / coresPerOwner
	r.Msgs = 2 * P * r.Rate / B
	return r
}
