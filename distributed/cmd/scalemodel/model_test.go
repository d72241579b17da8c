package main

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestCPUBoundWithoutLimits(t *testing.T) {
	p := defaultParams
	p.Bandwidth, p.Delay = 0, 0
	for _, n := range []float64{1, 4, 16} {
		r := p.at(n)
		// The CPU budget, n·cores seconds per second, is spent on the
		// samples and the rounds' messages.
		flops := p.InitSweeps*(2*p.NNZ*p.Rank+2*p.Rank*p.Rank) + (2*p.NNZ*p.Rank + p.Rank*p.Rank) +
			p.Refresh*(2*p.NNZ*p.Rank+2*p.Rank*p.Rank+2*(2*p.NNZ*p.Rank+p.Rank*p.Rank))
		spent := r.Rate*(flops/(p.GFlops*1e9/p.Cores)+p.SampleCPU) + r.Partitions/r.Round*p.RoundCPU
		if math.Abs(spent-n*p.Cores)/(n*p.Cores) > 1e-9 {
			t.Errorf("%g machines: %g CPU s/s spent, want %g", n, spent, n*p.Cores)
		}
		if r.Limit != "cpu" {
			t.Errorf("%g machines: limit %q, want cpu", n, r.Limit)
		}
	}
}

func TestBandwidthLimit(t *testing.T) {
	p := defaultParams
	p.Bandwidth = 50e6 // 400 Mb/s
	free := p
	free.Bandwidth = 0
	for _, n := range []float64{1, 4, 16} {
		r := p.at(n)
		if r.NetPerMachine > p.Bandwidth*(1+1e-6) {
			t.Errorf("%g machines: %g B/s per link over the %g limit", n, r.NetPerMachine, p.Bandwidth)
		}
		if r.FanOut > p.Bandwidth*(1+1e-6) {
			t.Errorf("%g machines: U fan-out %g B/s over the %g limit", n, r.FanOut, p.Bandwidth)
		}
		if !strings.Contains(r.Limit, "network") && !strings.Contains(r.Limit, "fan-out") {
			t.Errorf("%g machines: limit %q, want the network's", n, r.Limit)
		}
		if f := free.at(n); r.Rate >= f.Rate {
			t.Errorf("%g machines: %g samples/s with the bandwidth limit, %g without: the limit should bind", n, r.Rate, f.Rate)
		}
	}
}

func TestCoordinatorLimit(t *testing.T) {
	p := defaultParams
	p.CoordGFlops = 0.05 // a slow core: U's step alone, 2DK², takes 10 s
	r := p.at(4)
	if r.CoordBusy > 1+1e-6 {
		t.Errorf("coordinator %g%% busy, want ≤ 100%%", 100*r.CoordBusy)
	}
	if r.Round <= p.Round || !strings.Contains(r.Limit, "coordinator") {
		t.Errorf("round %g s, limit %q: want the coordinator to lengthen the %g s round", r.Round, r.Limit, p.Round)
	}
	stepU := (2*p.Dim*p.Rank*p.Rank + 2*p.Dim*p.Rank) / (p.CoordGFlops * 1e9)
	if r.Round < stepU {
		t.Errorf("round %g s shorter than U's step on the coordinator, %g s", r.Round, stepU)
	}
}

func TestLatencyLengthensRound(t *testing.T) {
	p := defaultParams
	p.Delay, p.Trips = 0.1, 20 // 2 s of trips per round
	r := p.at(1)
	if math.Abs(r.Round-2) > 1e-9 || !strings.Contains(r.Limit, "latency") {
		t.Errorf("round %g s, limit %q: want 2 s, latency", r.Round, r.Limit)
	}
}

func TestCalibrateRecoversModel(t *testing.T) {
	want := labModel{Batch: 10, C0: 4e-3, C1: 6e-3, Idle: 2e-3, Lambda: 0.7, Trips: 18}
	var runs []labRun
	runs = append(runs, labRun{Mode: "single", RecordsPerSecond: 7000, CPUPerRecordMS: 0.12})
	for _, w := range []float64{1, 2, 4} {
		for _, d := range []float64{0, 1, 10} {
			r := labRun{Mode: "nats", Workers: w, Partitions: w, DelayMS: d, Records: 1977}
			rate, cpu := want.predict(r)
			r.RecordsPerSecond, r.CPUPerRecordMS = rate, 1000*cpu
			runs = append(runs, r)
		}
	}
	got, err := calibrate(runs, 10)
	if err != nil {
		t.Fatal(err)
	}
	checkModel(t, got, want, runs)
	// A repeated configuration counts once, by its median: a third run of
	// 1 worker at 0 ms, off by half, between two exact ones changes nothing.
	exact := runs[1]
	off := exact
	off.RecordsPerSecond *= 1.5
	off.CPUPerRecordMS *= 0.5
	if got, err = calibrate(append(runs, exact, off), 10); err != nil {
		t.Fatal(err)
	}
	checkModel(t, got, want, runs)
}

func checkModel(t *testing.T, got, want labModel, runs []labRun) {
	t.Helper()
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"C0", got.C0, want.C0}, {"C1", got.C1, want.C1}, {"Idle", got.Idle, want.Idle}, {"Lambda", got.Lambda, want.Lambda}, {"Trips", got.Trips, want.Trips}} {
		if math.Abs(c.got-c.want) > 1e-9*math.Abs(c.want) {
			t.Errorf("%s = %g, want %g", c.name, c.got, c.want)
		}
	}
	var out bytes.Buffer
	printFit(&out, got, runs)
	if !strings.Contains(out.String(), "largest error 0%") {
		t.Errorf("fit on the model's own figures:\n%s", out.String())
	}
}

func TestCalibrateNeedsVariedRuns(t *testing.T) {
	var runs []labRun
	for _, d := range []float64{0, 1, 10} {
		runs = append(runs, labRun{Mode: "nats", Workers: 2, Partitions: 2, DelayMS: d, RecordsPerSecond: 20 / (1 + d), CPUPerRecordMS: 30})
	}
	if _, err := calibrate(runs, 10); err == nil || !strings.Contains(err.Error(), "collinear") {
		t.Errorf("calibrate on one partition count: %v, want a collinearity error", err)
	}
	if _, err := calibrate(append(runs[:2], runs[0]), 10); err == nil || !strings.Contains(err.Error(), "2 configurations") {
		t.Errorf("calibrate on 3 runs of 2 configurations: %v, want an error saying so", err)
	}
}

func TestReadRunsNamesBadLine(t *testing.T) {
	good, _ := json.Marshal(labRun{Mode: "nats", Workers: 1, Partitions: 1, RecordsPerSecond: 40, CPUPerRecordMS: 12})
	in := string(good) + "\n" + `{"mode":"nats","workers":0,"partitions":1,"records_per_second":3,"cpu_per_record_ms":1}` + "\n"
	if _, err := readRuns(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a run with 0 workers on line 2: %v, want an error naming line 2", err)
	}
	if _, err := readRuns(strings.NewReader(string(good) + "\n\nnot json\n")); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("not JSON on line 3: %v, want an error naming line 3", err)
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	var out bytes.Buffer
	for _, args := range [][]string{{"-nnz", "0"}, {"-bandwidth", "-1"}, {"-nnz", "2e5"}, {"extra"}} {
		if err := run(args, &out); err == nil {
			t.Errorf("scalemodel %v: no error", args)
		}
	}
}
