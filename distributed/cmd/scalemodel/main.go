// Command scalemodel prints the cost model of the distributed learner, the
// chain on the owners (distributed/DESIGN.md, "Cost model"): the samples
// per second, CPU, bytes and messages of a stream across N machines, with
// the limits of the machines' CPUs, the busiest owner, the driver (the
// chain's one coordinator), the network's bandwidth (every link, and the
// driver's) and the pipelined batches' trips.
//
// With -calibrate F it first fits the lab model on the runs of
// scripts/netlab.sh in F (JSON lines: stream --nats through 1–4 worker
// processes and a 3-node NATS cluster in network namespaces, with delays,
// and stream on one machine), prints the fitted model's figures beside the
// measured ones with their error, and then the table with the constants
// the runs give.
//
// Usage:
//
//	go run ./distributed/cmd/scalemodel [-samples 1e8] [-dim 1e5] [-nnz 100] [-batch 100] [-bandwidth 1.25e9] ...
//	go run ./distributed/cmd/scalemodel -calibrate bench/netlab/runs-chain-digits.jsonl
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
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
	fs.Float64Var(&p.Batch, "batch", p.Batch, "records per driver batch at one partition (stream's batch; at P > 1 the driver's batches hold P times as many, up to -window); with -calibrate, the runs' batch")
	fs.Float64Var(&p.Window, "window", p.Window, "the learners' window (stream --window), which bounds the driver's batch at P > 1 (0: none)")
	fs.Float64Var(&p.Cores, "cores", p.Cores, "cores of one machine")
	fs.IntVar(&p.PerMachine, "partitions-per-machine", p.PerMachine, "partitions (owners) per machine")
	fs.Float64Var(&p.Replicas, "replicas", p.Replicas, "replicas of the streams")
	fs.Float64Var(&p.Drivers, "drivers", p.Drivers, "driver processes (stream --nats, serve --nats), each on a machine of its own")
	fs.Float64Var(&p.Bandwidth, "bandwidth", p.Bandwidth, "bytes/s of one machine's network link, each way (0: no limit)")
	fs.Float64Var(&p.OwnerCPU, "owner-cpu", p.OwnerCPU, "an owner's learner's CPU seconds per sample (calibrated: the single machine's)")
	fs.Float64Var(&p.MsgCPU, "msg-cpu", p.MsgCPU, "CPU seconds per record of its messages over every process (calibrated)")
	fs.Float64Var(&p.ShareCPU, "share-cpu", p.ShareCPU, "CPU seconds per partition share of a batch over every process (calibrated)")
	fs.Float64Var(&p.DriverCPU, "driver-cpu", p.DriverCPU, "a driver's CPU seconds per record (calibrated)")
	fs.Float64Var(&p.DriverCores, "driver-cores", p.DriverCores, "cores a driver's work spreads over")
	fs.Float64Var(&p.Slack, "slack", p.Slack, "the partitions' capacity rule: a partition takes at most 1/P + slack of the samples")
	delay := fs.Duration("delay", time.Duration(p.Delay*float64(time.Second)), "one-way network delay between two machines")
	fs.Float64Var(&p.Trips, "trips", p.Trips, "effective one-way trips per batch (calibrated)")
	calib := fs.String("calibrate", "", "fit the lab model on scripts/netlab.sh's JSON lines in this `file`, print it against them, and take its constants")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	p.Delay = delay.Seconds()
	if !(p.Samples > 0 && p.Dim >= 1 && p.NNZ >= 1 && p.NNZ <= p.Dim && p.Batch >= 1 && p.Cores >= 1 && p.PerMachine >= 1 &&
		p.Replicas >= 1 && p.Drivers >= 1 && p.Bandwidth >= 0 && p.OwnerCPU > 0 && p.MsgCPU >= 0 && p.ShareCPU >= 0 &&
		p.DriverCPU > 0 && p.DriverCores > 0 && p.Slack >= 0 && p.Delay >= 0 && p.Trips >= 0) {
		return errors.New("want -samples, -owner-cpu, -driver-cpu, -driver-cores positive, -dim, -batch, -cores, -partitions-per-machine, -replicas, -drivers ≥ 1, 1 ≤ -nnz ≤ -dim, and no negative cost")
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
		m, err := calibrate(runs, p.Batch)
		if err != nil {
			return fmt.Errorf("%s: %w", *calib, err)
		}
		printFit(stdout, m, runs)
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		c := m.constants(runs)
		for name, v := range map[string]*float64{"owner-cpu": &p.OwnerCPU, "msg-cpu": &p.MsgCPU, "share-cpu": &p.ShareCPU,
			"driver-cpu": &p.DriverCPU, "trips": &p.Trips} {
			if got, ok := c[name]; ok && !set[name] {
				*v = got
			}
		}
		fmt.Fprintf(stdout, "\nwith these constants: -owner-cpu %.3g -msg-cpu %.3g -share-cpu %.3g -driver-cpu %.3g -trips %.3g\n\n",
			p.OwnerCPU, p.MsgCPU, p.ShareCPU, p.DriverCPU, p.Trips)
	}
	printTable(stdout, p)
	return nil
}

// printFit prints the calibrated lab model and, for every configuration
// of the runs (the median of its runs), the measured and the modelled
// records per second and CPU per record.
func printFit(w io.Writer, m labModel, runs []labRun) {
	meds := medians(runs)
	fmt.Fprintf(w, "lab model, fitted on %d runs in %d configurations: CPU per record %.3g + %.3g·P' ms busy (P' shares per batch of records: P in the common start's batches, 1 after), %.3g ms per second per process while streaming;\n"+
		"step = %.3g × %g records × CPU per record + %.3g × one-way delay\n\n",
		countNATS(runs), len(meds), 1000*m.C0, 1000*m.C1, 1000*m.Idle, m.Lambda, m.Batch, m.Trips)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tworkers\tpartitions\tdelay ms\truns\trecords/s\tmodel\terror\tCPU ms/record\tmodel\terror\tidle CPU s/s\t")
	for _, r := range runs {
		if r.Mode != "nats" {
			fmt.Fprintf(tw, "%s\t\t\t\t1\t%.4g\t\t\t%.3g\t\t\t\t\n", r.Mode, r.RecordsPerSecond, r.CPUPerRecordMS)
		}
	}
	for _, r := range meds {
		rate, cpu := m.predict(r)
		er, ec := m.errors(r)
		fmt.Fprintf(tw, "nats\t%.0f\t%.0f\t%g\t%.0f\t%.4g\t%.4g\t%+.0f%%\t%.3g\t%.3g\t%+.0f%%\t%.3g\t\n",
			r.Workers, r.Partitions, r.DelayMS, r.Records, r.RecordsPerSecond, rate, 100*er, r.CPUPerRecordMS, 1000*cpu, 100*ec, r.IdleCPUPerSecond)
	}
	tw.Flush()
	fmt.Fprintf(w, "largest error %.0f%% (medians of each configuration's runs)\n", 100*m.worst(runs))
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
	fmt.Fprintf(w, "%.0e samples, D = %.0e, %.0f nonzeros each, batches of %.0f, %.0f-core machines with %d owners each, %.0f replicas,\n"+
		"links of %.3g MB/s, %.0f driver(s) on %.0f core(s); CPU: %.3g ms per sample learning, %.3g ms per record of messages, %.3g ms per share,\n"+
		"%.3g ms per record in the driver; %g ms one way × %.3g trips per batch; busiest partition 1/P + %.2g\n\n",
		p.Samples, p.Dim, p.NNZ, p.Batch, p.Cores, p.PerMachine, p.Replicas, p.Bandwidth/1e6, p.Drivers, p.DriverCores,
		1000*p.OwnerCPU, 1000*p.MsgCPU, 1000*p.ShareCPU, 1000*p.DriverCPU, 1000*p.Delay, p.Trips, p.Slack)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "machines\tpartitions\tsamples/s\thours for all\tlimit\tCPU ms/record\tbusiest share\towner busy\tdriver busy\tKB/record\tMB/s per link\tMB/s driver link\tmsgs/s\t")
	for _, n := range []float64{1, 4, 16, 64} {
		r := p.at(n)
		fmt.Fprintf(tw, "%.0f\t%.0f\t%.3g\t%.3g\t%s\t%.3g\t%.2f\t%.0f%%\t%.0f%%\t%.3g\t%.3g\t%.3g\t%.3g\t\n",
			n, r.Partitions, r.Rate, r.Hours, r.Limit, 1000*r.CPUPerRecord, r.MaxShare, 100*r.OwnerBusy, 100*r.DriverBusy,
			r.NetPerRecord/1e3, r.NetPerMachine/1e6, r.DriverLink/1e6, r.Msgs)
	}
	tw.Flush()
	fmt.Fprint(w, "\nlimit: what bounds samples/s: cpu (every machine's cores), owner (the busiest partition's core), driver (its cores: the\n"+
		"chain's one coordinator), network (every link), driver link, latency (the batches' trips). KB/record is bytes across the\n"+
		"network per record: its row and its answer stored on every replica and delivered once, and its part of the shares' fixed bytes.\n")
}
