// Command fitspeed times a batch GNMF fit (exact k-NN graph, k = 10, then
// a fixed number of multiplicative updates, K = 50) on the first n MNIST
// training images, in float64 and with model.Common.Float32, beside
// scikit-learn's kneighbors_graph + NMF 'mu' on the same images in the same
// run (bench/fitspeed/sklearn_fit.py, in float64 and float32), and prints
// the times and their ratios.
//
//	go run ./bench/fitspeed --mnist ~/.cache/nmfstream-data/mnist [--n 10000] [--pairs 3] [--iters 100] [--png fit.png] [--json out.json]
//	go run ./bench/fitspeed --replot out.json --png fit.png
//	go run ./bench/fitspeed --fits go64 --cpuprofile fit.prof [--n 10000] [--pairs 3]
//
// --n takes a comma-separated list of sizes (1,000 to 60,000). The four
// fits of one size run back to back, PAIRS times over; for each size the
// summary gives each fit's median time and the median and range of the
// per-round ratios to scikit-learn in float64 (this machine's speed drifts
// within minutes, so only ratios within a round are compared). --png draws
// the median times against n (log–log) with internal/figure. The Go fits
// run as `nmfstream fit` runs them: both cores through pipeline.Share.
// scikit-learn comes from Debian's python3-sklearn (--python, default
// /usr/bin/python3); without it the command stops with an error.
// --fits runs some of the four fits only (sklearn64, sklearn32, go64,
// go32; the ratios need sklearn64), and --cpuprofile writes a CPU profile
// of the whole run for go tool pprof: it holds the Go fits' work (and the
// reading of the images), since scikit-learn runs in other processes.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/bench/internal/benchrun"
	"github.com/nmfstream/nmfstream/internal/figure"
	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/pipeline"
	"github.com/nmfstream/nmfstream/sources"
)

// fits names the four fits of a round, in the order they run.
var fits = []string{"scikit-learn float64", "scikit-learn float32", "nmfstream float64", "nmfstream float32"}

// fitKeys are the fits' names for --fits, in the same order.
var fitKeys = []string{"sklearn64", "sklearn32", "go64", "go32"}

// result is one size's measurements: seconds[f][round] for fit f, wall
// time, and cpu[f][round], the CPU seconds the fit's process used meanwhile
// (user + system; other tenants of the machine move it less).
type result struct {
	N       int         `json:"n"`
	Seconds [][]float64 `json:"seconds"`
	CPU     [][]float64 `json:"cpu_seconds"`
	Fits    []string    `json:"fits"`
	// Objective is the final ‖X − UVᵀ‖² of the last round's Go fits
	// (float64, float32) before the graph term: a check that both fitted
	// the same thing.
	Objective [2]float64 `json:"objective"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "fitspeed:", err)
		os.Exit(1)
	}
}

func run() error {
	dir := flag.String("mnist", filepath.Join(os.Getenv("HOME"), ".cache/nmfstream-data/mnist"), "`folder` of the MNIST IDX files")
	sizes := flag.String("n", "10000", "comma-separated numbers of images (1000–60000)")
	pairs := flag.Int("pairs", 3, "rounds of the four fits per size")
	iters := flag.Int("iters", 100, "multiplicative updates per fit")
	py := flag.String("python", "/usr/bin/python3", "Python with scikit-learn")
	png := flag.String("png", "", "draw the median fit times against n to this PNG `file`")
	jsonOut := flag.String("json", "", "write the measurements to this JSON `file`")
	replot := flag.String("replot", "", "draw --png from this JSON `file` of an earlier run instead of measuring")
	only := flag.String("fits", strings.Join(fitKeys, ","), "comma-separated fits to run: "+strings.Join(fitKeys, ", "))
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the run (the Go fits) to this `file`")
	flag.Parse()
	if *replot != "" {
		b, err := os.ReadFile(*replot)
		if err != nil {
			return err
		}
		var rs []result
		if err := json.Unmarshal(b, &rs); err != nil {
			return fmt.Errorf("%s: %w", *replot, err)
		}
		if *png == "" || len(rs) == 0 {
			return fmt.Errorf("--replot needs --png and a file of at least one size")
		}
		return draw(*png, rs, *iters)
	}
	var ns []int
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 100 || n > 60000 {
			return fmt.Errorf("--n: %q is not a size in [100, 60000]", f)
		}
		ns = append(ns, n)
	}
	if *pairs < 1 || *iters < 1 {
		return errors.New("--pairs and --iters must be at least 1")
	}
	run := make([]bool, len(fits))
	for _, k := range strings.Split(*only, ",") {
		i := slices.Index(fitKeys, strings.TrimSpace(k))
		if i < 0 {
			return fmt.Errorf("--fits: %q is not one of %s", k, strings.Join(fitKeys, ", "))
		}
		run[i] = true
	}
	if !run[0] && (*png != "" || *jsonOut != "") {
		return errors.New("--png and --json need the ratios to scikit-learn float64: --fits must include sklearn64")
	}
	images := filepath.Join(*dir, "train-images-idx3-ubyte")
	if run[0] || run[1] {
		if out, err := exec.Command(*py, "-c", "import sklearn").CombinedOutput(); err != nil {
			return fmt.Errorf("%s has no scikit-learn (apt-get install -y python3-sklearn): %v %s", *py, err, out)
		}
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	script, err := scriptPath()
	if err != nil {
		return err
	}
	all, err := readImages(images, slices.Max(ns))
	if err != nil {
		return err
	}
	var results []result
	for _, n := range ns {
		x := all.Slice(0, n, 0, 784).(*mat.Dense)
		r := result{N: n, Fits: fits, Seconds: make([][]float64, len(fits)), CPU: make([][]float64, len(fits))}
		for p := range *pairs {
			for f, name := range fits {
				var s, c float64
				switch {
				case !run[f]:
					continue
				case f < 2:
					s, c, err = sklearnFit(*py, script, images, n, []string{"float64", "float32"}[f], *iters)
				default:
					s, c, r.Objective[f-2], err = goFit(x, *iters, f == 3)
				}
				if err != nil {
					return fmt.Errorf("n = %d, %s: %w", n, name, err)
				}
				r.Seconds[f] = append(r.Seconds[f], s)
				r.CPU[f] = append(r.CPU[f], c)
				fmt.Fprintf(os.Stderr, "n %d round %d: %s %.2f s, %.2f CPU s\n", n, p+1, name, s, c)
			}
		}
		results = append(results, r)
		if !run[0] {
			for f, name := range fits {
				if run[f] {
					fmt.Printf("n = %d  %-22s wall %7.2f s  CPU %7.2f s (medians of %d)\n", n, name, benchrun.Median(r.Seconds[f]), benchrun.Median(r.CPU[f]), *pairs)
				}
			}
			continue
		}
		summarize(os.Stdout, r)
		if *jsonOut != "" { // after every size: a long run that fails later keeps what it measured
			if err := benchrun.WriteJSON(*jsonOut, results); err != nil {
				return err
			}
		}
	}
	if *png != "" {
		return draw(*png, results, *iters)
	}
	return nil
}

// scriptPath returns sklearn_fit.py beside this command's source: run the
// command from the repository's root (go run ./bench/fitspeed).
func scriptPath() (string, error) {
	p := filepath.Join("bench", "fitspeed", "sklearn_fit.py")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("run from the repository's root: %w", err)
	}
	return p, nil
}

// readImages returns the first n images of an IDX file as rows scaled to
// [0, 1], as sources.IDX reads them (what `nmfstream fit` reads).
func readImages(path string, n int) (*mat.Dense, error) {
	src, err := sources.Open(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	x := mat.NewDense(n, 784, nil)
	i := 0
	for i < n && src.Next() {
		b := src.Batch()
		if len(b.Rejects) > 0 {
			return nil, fmt.Errorf("%s: record %d: %s", path, b.Rejects[0].Offset, b.Rejects[0].Reason)
		}
		for r := 0; r < b.Len() && i < n; r, i = r+1, i+1 {
			x.SetRow(i, b.Dense.RawRowView(r))
		}
	}
	if err := src.Err(); err != nil {
		return nil, err
	}
	if i < n {
		return nil, fmt.Errorf("%s: %d images, %d asked for", path, i, n)
	}
	return x, nil
}

// goFit times GNMF's Fit on x (k = 10, K = 50, random initialization,
// iters updates without a convergence test, both cores) and returns the
// wall and CPU seconds and the final reconstruction term of the objective.
func goFit(x *mat.Dense, iters int, f32 bool) (secs, cpu, loss float64, err error) {
	runtime.GC()
	g := &model.GNMF{
		Common: model.Common{Rank: 50, MaxIter: iters, Tol: -1, Init: model.InitRandom,
			Src: rand.NewPCG(1, 1), Split: pipeline.Share(runtime.GOMAXPROCS(0)), Float32: f32},
		Graph: graph.KNN{K: 10},
	}
	start, cpu0 := time.Now(), cpuSeconds(syscall.RUSAGE_SELF)
	if err := g.Fit(model.DenseRows(x), nil); err != nil {
		return 0, 0, 0, err
	}
	secs, cpu = time.Since(start).Seconds(), cpuSeconds(syscall.RUSAGE_SELF)-cpu0
	if r := g.Result(); r.Iters != iters {
		return 0, 0, 0, fmt.Errorf("%d updates run, %d asked for", r.Iters, iters)
	}
	var d mat.Dense
	d.Mul(g.Codes(), g.Basis().T())
	d.Sub(x, &d)
	n := mat.Norm(&d, 2)
	return secs, cpu, n * n, nil
}

// cpuSeconds returns the user + system CPU seconds of who.
func cpuSeconds(who int) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// sklearnFit runs sklearn_fit.py and returns its seconds and CPU seconds
// of the fit: the script's whole CPU time scaled by the share of its wall
// time the fit took (loading Python and the data runs on one core, so
// this slightly overstates the fit's CPU time).
func sklearnFit(py, script, images string, n int, dtype string, iters int) (secs, cpu float64, err error) {
	var out, errb bytes.Buffer
	cmd := exec.Command(py, script, images, strconv.Itoa(n), dtype, strconv.Itoa(iters))
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, 0, fmt.Errorf("%s: %v: %s", script, err, strings.TrimSpace(errb.String()))
	}
	wall := time.Since(start).Seconds()
	total := (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	var r struct {
		Seconds float64 `json:"seconds"`
		NIter   int     `json:"n_iter"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		return 0, 0, fmt.Errorf("%s: %v in %q", script, err, out.String())
	}
	if r.NIter != iters {
		return 0, 0, fmt.Errorf("%s: %d iterations run, %d asked for", script, r.NIter, iters)
	}
	return r.Seconds, total * min(1, r.Seconds/wall), nil
}

// summarize prints each fit's median seconds and its per-round ratios to
// scikit-learn in float64 (median and range).
func summarize(w *os.File, r result) {
	fmt.Fprintf(w, "n = %d, %d rounds (median s, then the ratio to scikit-learn float64 per round: median (min–max); wall, then CPU)\n", r.N, len(r.Seconds[0]))
	ratios := func(xs [][]float64, f int) (float64, float64, float64) {
		rs := make([]float64, len(xs[f]))
		for p, s := range xs[f] {
			rs[p] = s / xs[0][p]
		}
		return benchrun.Median(rs), slices.Min(rs), slices.Max(rs)
	}
	for f, name := range fits {
		m, lo, hi := ratios(r.Seconds, f)
		cm, clo, chi := ratios(r.CPU, f)
		fmt.Fprintf(w, "  %-22s wall %7.2f s  %.2f (%.2f–%.2f)   CPU %7.2f s  %.2f (%.2f–%.2f)\n",
			name, benchrun.Median(r.Seconds[f]), m, lo, hi, benchrun.Median(r.CPU[f]), cm, clo, chi)
	}
	fmt.Fprintf(w, "  ‖X − UVᵀ‖² after the fit: float64 %.6g, float32 %.6g\n", r.Objective[0], r.Objective[1])
}

// draw plots the median seconds of each fit against n, log–log.
func draw(path string, rs []result, iters int) error {
	ss := make([]figure.Series, len(fits))
	for f, name := range fits {
		ss[f] = figure.Series{Name: name, Style: f, Dashed: f < 2}
		for _, r := range rs {
			ss[f].X = append(ss[f].X, float64(r.N))
			ss[f].Y = append(ss[f].Y, benchrun.Median(r.Seconds[f]))
		}
	}
	title := fmt.Sprintf("MNIST fit: 10-NN + %d updates", iters)
	return figure.Line(path, title, "images n", "seconds (median)", ss, true, true)
}
