package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// labRun is one run of scripts/netlab.sh (its JSON line): stream --nats
// driving the chain's owners in worker processes, with a 3-node NATS
// cluster, in network namespaces, or stream on one machine (Mode
// "single").
type labRun struct {
	Mode             string  `json:"mode"`
	Workers          float64 `json:"workers"`
	Partitions       float64 `json:"partitions"`
	DelayMS          float64 `json:"delay_ms"`
	Records          float64 `json:"records"`
	Samples          float64 `json:"samples"`
	RecordsPerSecond float64 `json:"records_per_second"`
	CPUPerRecordMS   float64 `json:"cpu_per_record_ms"`
	// CPU is the run's CPU seconds by process kind; Driver is the
	// driver's (stream --nats).
	CPU struct {
		Driver float64 `json:"driver"`
	} `json:"cpu"`
	// IdleCPUPerSecond is the CPU seconds per second of the run's NATS
	// nodes and workers, idle before the stream (0: not measured).
	IdleCPUPerSecond float64 `json:"idle_cpu_per_s"`
}

// labNodes is the NATS nodes of every lab run, each idling as a worker does.
const labNodes = 3

// labModel is the cost of stream --nats in the lab, calibrated on its runs.
// The driver sends batches, each a share to every one of the P partitions,
// and pipelines them (several in flight). At P > 1 the batches of the
// common start (a share a of the records: smallShare) hold Batch records,
// the later ones P·Batch (stream --nats's partitionedBatch), so per Batch
// records a run sends P' = 1 + (P − 1)·a shares (sharesPerBatch) in
// g = a + (1 − a)/P batches (tripsPerBatch); at P = 1, P' = g = 1. With N
// workers and a one-way delay d (s) between machines:
//
//	busy CPU per record  c    = C0 + C1·P'                        (s, every process)
//	time per record      1/R  = Lambda·c + Trips·d·g/Batch        (s)
//	CPU per record            = c + Idle·(3 + N)/R                (s)
//
// C0 is the per-record cost (the owner's learning, the record's messages),
// C1·Batch the cost of one partition's share of a batch beyond its records
// (its message, its replication and delivery, the owner's answer), Lambda
// the share of a batch's CPU on the critical path (below 1 when processes
// overlap on the cores, beyond 1 when they wait for one another's), Trips
// the one-way trips a batch waits for in sequence (effective: the batches
// in flight overlap theirs), and Idle the CPU per second of a worker or a
// NATS node while the stream runs beside it (heartbeats, pulls).
type labModel struct {
	Batch         float64
	C0, C1, Idle  float64
	Lambda, Trips float64
}

// busy is c(P), CPU seconds per record of run r at its P partitions.
func (m labModel) busy(r labRun) float64 { return m.C0 + m.C1*sharesPerBatch(r) }

// smallShare is the share of run r's records that stream --nats sends in
// batches of Batch at P > 1: those of its common start, min(2000,
// samples/2) samples (distributed.Config.Warm) and the late labels among
// them, in proportion. Its batches after them hold P·Batch records
// (partitionedBatch). At P = 1 every batch holds Batch: 1.
func smallShare(r labRun) float64 {
	if r.Partitions <= 1 || r.Samples <= 0 {
		return 1
	}
	return min(1, min(2000, r.Samples/2)/r.Samples)
}

// sharesPerBatch is P_eff, the shares (one per partition and batch) a
// run's records cost per Batch records: P in the small batches, 1 in
// those of P·Batch.
func sharesPerBatch(r labRun) float64 {
	a := smallShare(r)
	return 1 + (r.Partitions-1)*a
}

// tripsPerBatch is the batches per Batch records: 1 in the small
// batches, 1/P in those of P·Batch.
func tripsPerBatch(r labRun) float64 {
	a := smallShare(r)
	return a + (1-a)/max(r.Partitions, 1)
}

// predict returns the model's records per second and CPU seconds per record
// of a run.
func (m labModel) predict(r labRun) (rate, cpu float64) {
	perRecord := m.Lambda*m.busy(r) + m.Trips*r.DelayMS/1000*tripsPerBatch(r)/m.Batch
	rate = 1 / perRecord
	return rate, m.busy(r) + m.Idle*(labNodes+r.Workers)/rate
}

// errors returns the model's relative errors on a run's records per
// second and CPU per record (model / measured − 1).
func (m labModel) errors(r labRun) (rate, cpu float64) {
	pr, pc := m.predict(r)
	return pr/r.RecordsPerSecond - 1, 1000*pc/r.CPUPerRecordMS - 1
}

// worst returns the largest absolute relative error of the model over
// the configurations of runs, each by the medians of its runs.
func (m labModel) worst(runs []labRun) float64 {
	var w float64
	for _, r := range medians(runs) {
		er, ec := m.errors(r)
		w = max(w, math.Abs(er), math.Abs(ec))
	}
	return w
}

// readRuns reads scripts/netlab.sh's JSON lines; a line that is not one is
// an error naming it.
func readRuns(rd io.Reader) ([]labRun, error) {
	var runs []labRun
	sc := bufio.NewScanner(rd)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var r labRun
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if r.Mode == "nats" && (r.Workers < 1 || r.Partitions < 1 || r.DelayMS < 0 || !(r.RecordsPerSecond > 0) || !(r.CPUPerRecordMS > 0)) {
			return nil, fmt.Errorf("line %d: a nats run needs workers and partitions ≥ 1, delay_ms ≥ 0, records_per_second and cpu_per_record_ms > 0", n)
		}
		runs = append(runs, r)
	}
	return runs, sc.Err()
}

// calibrate fits the lab model on the nats runs, each configuration
// (workers, partitions, delay) taken as the median of its runs (the cores
// are shared with other work, and repeated runs differ): by least squares, C0, C1
// and Idle on the CPU per record (features 1, P' and (3+N)/R), then Lambda
// and Trips on Batch/R (features Batch·c and d·g). Idle
// is thus the CPU per second and process while the stream waits, fitted;
// the idle CPU measured before the stream (idle_cpu_per_s) is lower, the
// processes doing nothing then. It needs at least three configurations
// with at least two partition counts and two delays.
func calibrate(runs []labRun, batch float64) (labModel, error) {
	nr := medians(runs)
	if len(nr) < 3 {
		return labModel{}, fmt.Errorf("calibrate: %d configurations of nats runs, want at least 3", len(nr))
	}
	m := labModel{Batch: batch}
	cpu, err := leastSquares(nr, func(r labRun) ([]float64, float64) {
		return []float64{1, sharesPerBatch(r), (labNodes + r.Workers) / r.RecordsPerSecond}, r.CPUPerRecordMS / 1000
	})
	if err != nil {
		return labModel{}, fmt.Errorf("calibrate: CPU per record: %w (runs need two partition counts or more)", err)
	}
	m.C0, m.C1, m.Idle = cpu[0], cpu[1], cpu[2]
	lat, err := leastSquares(nr, func(r labRun) ([]float64, float64) {
		return []float64{batch * m.busy(r), r.DelayMS / 1000 * tripsPerBatch(r)}, batch / r.RecordsPerSecond
	})
	if err != nil {
		return labModel{}, fmt.Errorf("calibrate: step length: %w (runs need two delays or more)", err)
	}
	m.Lambda, m.Trips = lat[0], lat[1]
	return m, nil
}

// medians returns one run per configuration of the nats runs (workers,
// partitions, delay), in order of first appearance, with the medians of
// its runs' records per second, CPU per record and idle CPU, and Records
// holding the number of runs.
func medians(runs []labRun) []labRun {
	type key struct{ w, p, d float64 }
	var order []key
	groups := map[key][]labRun{}
	for _, r := range runs {
		if r.Mode != "nats" {
			continue
		}
		k := key{r.Workers, r.Partitions, r.DelayMS}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	out := make([]labRun, 0, len(order))
	for _, k := range order {
		g := groups[k]
		med := func(f func(labRun) float64) float64 {
			v := make([]float64, len(g))
			for i, r := range g {
				v[i] = f(r)
			}
			return median(v)
		}
		out = append(out, labRun{Mode: "nats", Workers: k.w, Partitions: k.p, DelayMS: k.d, Records: float64(len(g)),
			RecordsPerSecond: med(func(r labRun) float64 { return r.RecordsPerSecond }),
			CPUPerRecordMS:   med(func(r labRun) float64 { return r.CPUPerRecordMS }),
			IdleCPUPerSecond: med(func(r labRun) float64 { return r.IdleCPUPerSecond }),
			Samples:          med(func(r labRun) float64 { return r.Samples })})
	}
	return out
}

// leastSquares solves min ‖Xβ − y‖ over the runs, row(r) giving a run's
// features and target.
func leastSquares(runs []labRun, row func(labRun) ([]float64, float64)) ([]float64, error) {
	f, _ := row(runs[0])
	x := mat.NewDense(len(runs), len(f), nil)
	y := mat.NewVecDense(len(runs), nil)
	for i, r := range runs {
		f, t := row(r)
		x.SetRow(i, f)
		y.SetVec(i, t)
	}
	var qr mat.QR
	qr.Factorize(x)
	var b mat.VecDense
	if err := qr.SolveVecTo(&b, false, y); err != nil {
		return nil, errors.New("the features are collinear")
	}
	out := make([]float64, len(f))
	for i := range out {
		out[i] = b.AtVec(i)
		if math.IsNaN(out[i]) || math.IsInf(out[i], 0) {
			return nil, errors.New("the features are collinear")
		}
	}
	return out, nil
}

// constants returns the cost model's constants that the runs give, by
// the model's flag names: owner-cpu, the single machine's CPU per record
// (the median of the "single" runs); msg-cpu, the rest of C0 (every
// process's CPU per record beyond the owner's learning); share-cpu,
// C1·Batch; driver-cpu, the median over the nats runs of the driver's CPU
// per record; trips, the fitted Trips. A constant the runs cannot give
// (no single run, say) is absent.
func (m labModel) constants(runs []labRun) map[string]float64 {
	var single, driver []float64
	for _, r := range runs {
		switch {
		case r.Mode == "single" && r.CPUPerRecordMS > 0:
			single = append(single, r.CPUPerRecordMS/1000)
		case r.Mode == "nats" && r.Records > 0 && r.CPU.Driver > 0:
			driver = append(driver, r.CPU.Driver/r.Records)
		}
	}
	c := map[string]float64{"share-cpu": max(m.C1*m.Batch, 0), "trips": max(m.Trips, 0)}
	if len(single) > 0 {
		c["owner-cpu"] = median(single)
		c["msg-cpu"] = max(m.C0-c["owner-cpu"], 0)
	}
	if len(driver) > 0 {
		c["driver-cpu"] = median(driver)
	}
	return c
}

// median returns the median of v (which it sorts).
func median(v []float64) float64 {
	slices.Sort(v)
	if n := len(v); n%2 == 1 {
		return v[n/2]
	} else {
		return (v[n/2-1] + v[n/2]) / 2
	}
}
