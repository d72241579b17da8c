// Command scalemodel prints the cost model of the distributed learner
// (docs/DESIGN.md, "Cost model"): the samples per second, messages, bytes
// and staleness of a stream of samples across N machines, from the sizes of
// its messages (distributed/codec.go), a compute rate per machine, the CPU
// its messages cost, one machine's network bandwidth and the coordinator's
// one core.
//
// With -calibrate F it first fits the per-record and per-round constants on
// the runs of scripts/netlab.sh in F (JSON lines: stream --nats through 1–4
// workers and a 3-node NATS cluster in network namespaces, with delays),
// prints the fitted model's figures beside the measured ones, and then the
// table with those constants.
//
// Usage:
//
//	go run ./distributed/cmd/scalemodel [-samples 1e8] [-dim 1e5] [-nnz 100] [-rank 50] [-gflops 10] [-round 1s] [-bandwidth 1.25e9] ...
//	go run ./distributed/cmd/scalemodel -calibrate /tmp/netlab/runs.jsonl
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"text/tabwriter"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "scalemodel:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	p := defaultParams
	fs := flag.NewFlagSet("scalemodel", flag.ContinueOnError)
	fs.Float64Var(&p.Samples, "samples", p.Samples, "samples in the stream")
	fs.Float64Var(&p.Dim, "dim", p.Dim, "dimension D")
	fs.Float64Var(&p.NNZ, "nnz", p.NNZ, "nonzero entries per sample (D for dense data)")
	fs.Float64Var(&p.Rank, "rank", p.Rank, "rank K")
	fs.Float64Var(&p.GFlops, "gflops", p.GFlops, "sustained GFlop/s of one machine (all its cores)")
	fs.Float64Var(&p.Cores, "cores", p.Cores, "cores of one machine")
	round := fs.Duration("round", time.Duration(p.Round*float64(time.Second)), "shortest round (an owner's batch); limits lengthen it")
	fs.IntVar(&p.Staleness, "staleness", p.Staleness, "staleness bound s, in rounds")
	fs.IntVar(&p.PerMachine, "partitions-per-machine", p.PerMachine, "virtual partitions per machine")
	fs.Float64Var(&p.InitSweeps, "init-sweeps", p.InitSweeps, "sweeps coding a new sample")
	fs.Float64Var(&p.Refresh, "refresh", p.Refresh, "older codes swept per new sample (Refresh / new samples per round)")
	fs.Float64Var(&p.Replicas, "replicas", p.Replicas, "replicas of the streams and buckets")
	fs.Float64Var(&p.Bandwidth, "bandwidth", p.Bandwidth, "bytes/s of one machine's network link, each way (0: no limit)")
	fs.Float64Var(&p.CoordGFlops, "coord-gflops", p.CoordGFlops, "GFlop/s of the coordinator's one core (0: gflops/cores)")
	fs.Float64Var(&p.DeltaCPU, "delta-cpu", p.DeltaCPU, "coordinator CPU seconds per delta besides adding it")
	fs.Float64Var(&p.SampleCPU, "sample-cpu", p.SampleCPU, "CPU seconds per sample over every process besides its flops (calibrated: -calibrate)")
	fs.Float64Var(&p.RoundCPU, "round-cpu", p.RoundCPU, "CPU seconds per partition and round over every process besides the flops (calibrated: -calibrate)")
	delay := fs.Duration("delay", time.Duration(p.Delay*float64(time.Second)), "one-way network delay between two machines")
	fs.Float64Var(&p.Trips, "trips", p.Trips, "one-way network trips a round waits for in sequence (calibrated: -calibrate)")
	calib := fs.String("calibrate", "", "fit -sample-cpu, -round-cpu and -trips on scripts/netlab.sh's JSON lines in this `file` and print the fit against them first")
	batch := fs.Float64("batch", 10, "with -calibrate: records per step of the runs (stream --nats --batch)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	p.Round, p.Delay = round.Seconds(), delay.Seconds()
	if !(p.Samples > 0 && p.Dim >= 1 && p.NNZ >= 1 && p.NNZ <= p.Dim && p.Rank >= 1 && p.GFlops > 0 && p.Cores >= 1 &&
		p.Round > 0 && p.PerMachine >= 1 && p.Replicas >= 1 && p.Bandwidth >= 0 && p.CoordGFlops >= 0 &&
		p.DeltaCPU >= 0 && p.SampleCPU >= 0 && p.RoundCPU >= 0 && p.Delay >= 0 && p.Trips >= 0 && *batch >= 1) {
		return errors.New("want -samples, -gflops, -round positive, -dim, -rank, -cores, -partitions-per-machine, -replicas, -batch ≥ 1, 1 ≤ -nnz ≤ -dim, and no negative cost")
	}
	if *calib != "" {
		f, err := os.Open(*calib)
		if err != nil {
			return err
		}
		runs, err := readRuns(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", *calib, err)
		}
		m, err := calibrate(runs, *batch)
		if err != nil {
			return fmt.Errorf("%s: %w", *calib, err)
		}
		printFit(stdout, m, runs)
		// The lab's constants in the model of N machines: a sample's
		// messages cost C0 (an upper bound: C0 also holds its share of
		// each step's fixed costs), a partition's round C1·Batch, and a
		// round waits for Trips one-way trips.
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["sample-cpu"] {
			p.SampleCPU = max(m.C0, 0)
		}
		if !set["round-cpu"] {
			p.RoundCPU = max(m.C1*m.Batch, 0)
		}
		if !set["trips"] {
			p.Trips = max(m.Trips, 0)
		}
		fmt.Fprintf(stdout, "\nwith these constants: -sample-cpu %.3g -round-cpu %.3g -trips %.3g\n\n", p.SampleCPU, p.RoundCPU, p.Trips)
	}
	printTable(stdout, p)
	return nil
}

// printFit prints the calibrated lab model and, for every configuration
// of the runs (the median of its runs), the measured and the modelled
// records per second and CPU per record.
func printFit(w io.Writer, m labModel, runs []labRun) {
	meds := medians(runs)
	fmt.Fprintf(w, "lab model, fitted on %d runs in %d configurations: CPU per record %.3g + %.3g·P ms busy, %.3g ms per second per process while streaming;\n"+
		"step = %.3g × %g records × CPU per record + %.3g × one-way delay\n\n",
		countNATS(runs), len(meds), 1000*m.C0, 1000*m.C1, 1000*m.Idle, m.Lambda, m.Batch, m.Trips)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tworkers\tpartitions\tdelay ms\truns\trecords/s\tmodel\terror\tCPU ms/record\tmodel\terror\tidle CPU s/s\t")
	for _, r := range runs {
		if r.Mode != "nats" {
			fmt.Fprintf(tw, "%s\t\t\t\t1\t%.4g\t\t\t%.3g\t\t\t\t\n", r.Mode, r.RecordsPerSecond, r.CPUPerRecordMS)
		}
	}
	var worst float64
	for _, r := range meds {
		rate, cpu := m.predict(r)
		er, ec := rate/r.RecordsPerSecond-1, 1000*cpu/r.CPUPerRecordMS-1
		worst = max(worst, math.Abs(er), math.Abs(ec))
		fmt.Fprintf(tw, "nats\t%.0f\t%.0f\t%g\t%.0f\t%.4g\t%.4g\t%+.0f%%\t%.3g\t%.3g\t%+.0f%%\t%.3g\t\n",
			r.Workers, r.Partitions, r.DelayMS, r.Records, r.RecordsPerSecond, rate, 100*er, r.CPUPerRecordMS, 1000*cpu, 100*ec, r.IdleCPUPerSecond)
	}
	tw.Flush()
	fmt.Fprintf(w, "largest error %.0f%% (medians of each configuration's runs)\n", 100*worst)
}

func countNATS(runs []labRun) int {
	n := 0
	for _, r := range runs {
		if r.Mode == "nats" {
			n++
		}
	}
	return n
}

// printTable prints the model for 1, 4, 16 and 64 machines.
func printTable(w io.Writer, p params) {
	fmt.Fprintf(w, "%.0e samples, D = %.0e, %.0f nonzeros each, K = %.0f, %.0f GFlop/s per %.0f-core machine, rounds of %gs or more, staleness %d,\n"+
		"%.0f replicas, links of %.3g MB/s, %.3g ms CPU per sample and %.3g ms per partition-round of messages, %g ms one way × %.3g trips\n\n",
		p.Samples, p.Dim, p.NNZ, p.Rank, p.GFlops, p.Cores, p.Round, p.Staleness,
		p.Replicas, p.Bandwidth/1e6, 1000*p.SampleCPU, 1000*p.RoundCPU, 1000*p.Delay, p.Trips)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "machines\tpartitions\tsamples/s\thours for all\tlimit\tround (s)\tmsgs/s in\tKB/sample\tMB/delta\tMB/version\tMB/s per link\tMB/s U fan-out\tcoordinator busy\tstaleness bound (s)\t")
	for _, n := range []float64{1, 4, 16, 64} {
		r := p.at(n)
		fmt.Fprintf(tw, "%.0f\t%.0f\t%.3g\t%.3g\t%s\t%.3g\t%.3g\t%.3g\t%.3g\t%.3g\t%.3g\t%.3g\t%.0f%%\t%.3g\t\n",
			n, r.Partitions, r.Rate, r.Hours, r.Limit, r.Round, r.Msgs, r.NetPerSample/1e3, r.NetPerDelta/1e6, r.NetPerVersion/1e6,
			r.NetPerMachine/1e6, r.FanOut/1e6, 100*r.CoordBusy, r.StalenessSeconds)
	}
	tw.Flush()
	fmt.Fprint(w, "\nKB/sample, MB/delta and MB/version are bytes across the network: the publish, its replication to the other replicas, and the\n"+
		"delivery (to the owner; to the coordinator; to every machine's watcher). MB/s per link spreads all of it over the machines' links;\n"+
		"the U fan-out leaves the one node that serves the basis. limit: what bounds samples/s (cpu, network) and what lengthened the\n"+
		"round past -round (coordinator: its one core; fan-out: the basis node's link; latency: trips × delay; overhead, network: the\n"+
		"rounds' messages held to half the CPU, their traffic without samples to half the links).\n")
}
