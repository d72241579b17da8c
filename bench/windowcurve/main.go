// Command windowcurve measures the stream's steady-state throughput against
// the size of its window (issue 30's window curve, at the stream level):
// `nmfstream stream --window W` on an MNIST-derived stream long enough to
// run a 100,000-sample window full, with its default search space (the
// span of the search basis on MNIST) or, with --search-basis 0, the pixels.
//
//	go run ./bench/windowcurve [--mnist DIR] [--windows 1000,3000,10000,30000,100000] [--search-basis 40] [--runs 1] [--png w.png] [--json w.json]
//	go run ./bench/windowcurve --replot w.json[,pixels.json] --png w.png
//
// The stream (streamRow, labeled): the 60,000 training images, then the
// same images shifted right by one pixel (column 0 zero) as 60,000 new
// samples, ids 0…119,999 in order, a seeded tenth of them labeled on
// arrival (the label in the record itself). It is written as an Arrow IPC
// stream to the child's standard input (`--in -`), so nothing is stored.
//
// The steady state, timed inside one run: the stream is fed to N2 + 2,000
// records, and when the writer has handed the child the first N1, N1 +
// step, …, N2 records the wall clock and the child's CPU time (user +
// system, /proc/PID/stat, which other tenants move less) are read. The
// rate is (N2 − N1)/(t(N2) − t(N1)), wall and CPU; the marks between give
// the rates of its step-record segments, whose spread the table shows.
// Start-up, the window's filling and the search basis's fits before N1 are
// before the first mark. A mark lags the child's progress by what the pipe
// and the child's read-ahead hold (a batch or two of 1,000 records), the
// same at every mark, so the differences keep the rate. (Two runs of N1
// and N2 records timed whole, the first version of this command, were no
// use at W = 100,000: the first 102,000 records took 39–48 s wall from run
// to run, a spread larger than the 16,000 records' cost.) N1 is W + a
// (the window full for a records: at W = 100,000 the batch is 1,000
// records) moved past any refit of the search basis that [N1, N2] would
// hold (steadyRange): a refit rebuilds the whole window's graph
// (Slots²·K flops), so a range holding one would charge its cost to the
// steady state. The schedule, 500 samples then four-fold, is
// model.Online.SearchBasis's (model/online.go). With a = 2,000 and b =
// 16,000 the 100,000 window times 102,000 to 118,000 records, below both
// the stream's 120,000 and the next refit at 128,000.
//
// --json keeps the runs; --replot draws one or more kept files (each a
// curve) without measuring; --png draws records/s and records per CPU
// second against W, log–log, with internal/figure.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/bench/internal/benchrun"
	"github.com/nmfstream/nmfstream/internal/figure"
	"github.com/nmfstream/nmfstream/sources"
)

// batchRows is the rows of the Arrow batches fed to the child; marks,
// windows and --a fall on batch boundaries.
const batchRows = 1000

// tail is the records fed past N2, so that the child is still reading
// when the last mark is taken.
const tail = 2000

// refitFirst is the number of samples seen at the search basis's first fit;
// it is refitted each time that count grows four-fold (model/online.go,
// Online.SearchBasis).
const refitFirst = 500

// result is one window's runs.
type result struct {
	Window      int         `json:"window"`
	SearchBasis int         `json:"search_basis"` // as passed to the stream; 0: the pixels
	N1          int         `json:"n1"`
	N2          int         `json:"n2"`
	Marks       []int       `json:"marks"`                      // N1, N1 + step, …, N2
	Wall        [][]float64 `json:"wall_seconds"`               // per run, per mark: since the start
	CPU         [][]float64 `json:"cpu_seconds"`                // the same, the child's user + system
	PerSecond   []float64   `json:"records_per_second"`         // per run: (N2 − N1)/(t(N2) − t(N1)), wall
	PerCPU      []float64   `json:"records_per_cpu_second"`     // the same in CPU seconds
	SegSecond   []float64   `json:"segment_records_per_second"` // every run's segments between marks
	SegCPU      []float64   `json:"segment_records_per_cpu_second"`
	Accuracy    float64     `json:"accuracy"` // prequential, of the last run (N2 + 2,000 records)
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "windowcurve:", err)
		os.Exit(1)
	}
}

func run() error {
	mnist := flag.String("mnist", benchrun.DataDir("mnist"), "folder of the MNIST IDX files")
	windows := flag.String("windows", "1000,3000,10000,30000,100000", "comma-separated window sizes W")
	basis := flag.Int("search-basis", 40, "the stream's --search-basis (0: the pixels searched)")
	lead := flag.Int("a", 2000, "records of the full window before the steady state's first run ends (N1 ≥ W + a)")
	span := flag.Int("b", 16000, "records between the two runs' ends (N2 = N1 + b)")
	step := flag.Int("step", 4000, "records between marks (a multiple of 1,000 dividing --b)")
	runs := flag.Int("runs", 1, "runs per window")
	seed := flag.Uint64("seed", 1, "seed of the labeled tenth")
	bin := flag.String("bin", "", "the nmfstream binary (default: built from this checkout)")
	png := flag.String("png", "", "draw the rates against W to this PNG `file`")
	jsonOut := flag.String("json", "", "write the runs to this JSON `file`")
	replot := flag.String("replot", "", "draw --png from these comma-separated JSON `files` of earlier runs instead of measuring")
	flag.Parse()
	if *replot != "" {
		if *png == "" {
			return errors.New("--replot needs --png")
		}
		var curves [][]result
		for _, p := range strings.Split(*replot, ",") {
			var rs []result
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if err := json.Unmarshal(b, &rs); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			if len(rs) == 0 {
				return fmt.Errorf("%s: no windows", p)
			}
			curves = append(curves, rs)
		}
		return draw(*png, curves)
	}
	if *runs <= 0 || *lead <= 0 || *span <= 0 || *basis < 0 || *step <= 0 {
		return errors.New("--runs, --a, --b and --step must be positive and --search-basis not negative")
	}
	if *lead%batchRows != 0 || *step%batchRows != 0 || *span%*step != 0 {
		return fmt.Errorf("--a and --step must be multiples of %d and --step must divide --b", batchRows)
	}
	var ws []int
	for _, s := range strings.Split(*windows, ",") {
		w, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || w <= 0 || w%batchRows != 0 {
			return fmt.Errorf("--windows: bad window %q (a positive multiple of %d)", s, batchRows)
		}
		ws = append(ws, w)
	}
	x, y, err := sources.ReadMNIST(*mnist, 60000)
	if err != nil {
		return err
	}
	total := 2 * x.RawMatrix().Rows
	ranges := make([][2]int, len(ws))
	for i, w := range ws {
		n1, n2 := steadyRange(w, *lead, *span, *basis > 0)
		if n2+tail > total {
			return fmt.Errorf("window %d: the steady state needs %d records, the stream has %d (smaller --a or --b)", w, n2+tail, total)
		}
		ranges[i] = [2]int{n1, n2}
	}
	if *bin == "" {
		tmp, err := os.MkdirTemp("", "windowcurve")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		if *bin, err = benchrun.BuildNmfstream(tmp); err != nil {
			return err
		}
	}
	lab := labeled(total, *seed)
	var results []result
	for i, w := range ws {
		r := result{Window: w, SearchBasis: *basis, N1: ranges[i][0], N2: ranges[i][1]}
		for m := r.N1; m <= r.N2; m += *step {
			r.Marks = append(r.Marks, m)
		}
		for range *runs {
			wall, cpu, acc, err := stream(*bin, x, y, lab, r.N2+tail, w, *basis, r.Marks)
			if err != nil {
				return fmt.Errorf("window %d: %w", w, err)
			}
			last := len(r.Marks) - 1
			d := float64(r.N2 - r.N1)
			r.Wall, r.CPU, r.Accuracy = append(r.Wall, wall), append(r.CPU, cpu), acc
			r.PerSecond = append(r.PerSecond, d/(wall[last]-wall[0]))
			r.PerCPU = append(r.PerCPU, d/(cpu[last]-cpu[0]))
			for k := range last {
				s := float64(r.Marks[k+1] - r.Marks[k])
				r.SegSecond = append(r.SegSecond, s/(wall[k+1]-wall[k]))
				r.SegCPU = append(r.SegCPU, s/(cpu[k+1]-cpu[k]))
			}
			fmt.Fprintf(os.Stderr, "W = %d: %d → %d records at %.1f → %.1f s wall, %.1f → %.1f s CPU: %.0f records/s, %.0f records/CPU-s\n",
				w, r.N1, r.N2, wall[0], wall[last], cpu[0], cpu[last], r.PerSecond[len(r.PerSecond)-1], r.PerCPU[len(r.PerCPU)-1])
		}
		results = append(results, r)
	}
	printTable(os.Stdout, results)
	if *jsonOut != "" {
		if err := benchrun.WriteJSON(*jsonOut, results); err != nil {
			return err
		}
	}
	if *png != "" {
		return draw(*png, [][]result{results})
	}
	return nil
}

// steadyRange returns the record counts N1 < N2 = N1 + b of a window W's
// two runs: N1 = W + a, moved to a records past any refit of the search
// basis (when withBasis) that would fall in (N1 − a/2, N2], so that
// neither the window's filling nor a refit is timed in the difference.
func steadyRange(w, a, b int, withBasis bool) (n1, n2 int) {
	n1 = w + a
	if !withBasis {
		return n1, n1 + b
	}
	for r := refitFirst; r <= n1+b; r *= 4 {
		if r > n1-a/2 {
			n1 = r + a
		}
	}
	return n1, n1 + b
}

// streamRow writes the i-th sample of the stream into dst (len 784): for
// i < n (x's rows) the image x[i], for n ≤ i < 2n the image x[i−n]
// shifted right by one pixel, its first column zero.
func streamRow(x *mat.Dense, i int, dst []float32) {
	n, d := x.Dims()
	if i < n {
		for p, v := range x.RawRowView(i) {
			dst[p] = float32(v)
		}
		return
	}
	src := x.RawRowView(i - n)
	for p := range d {
		if p%28 == 0 {
			dst[p] = 0
		} else {
			dst[p] = float32(src[p-1])
		}
	}
}

// labeled marks a seeded tenth (total/10) of the stream's total samples
// as labeled on arrival.
func labeled(total int, seed uint64) []bool {
	rng := rand.New(rand.NewPCG(seed, 30))
	out := make([]bool, total)
	for _, i := range rng.Perm(total)[:total/10] {
		out[i] = true
	}
	return out
}

// writeStream writes the stream's first n samples to w as an Arrow IPC
// stream in batches of 1,000: x (fixed_size_list<float32>[784]), label
// (int64, the digit y[i mod 60,000] where lab[i], else null) and id
// (int64, i).
//
// After each batch it calls mark with the records written so far, if
// mark is not nil; an error from mark stops the writing.
func writeStream(w io.Writer, x *mat.Dense, y []int, lab []bool, n int, mark func(written int) error) error {
	rows, d := x.Dims()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.FixedSizeListOf(int32(d), arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: "label", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	mem := memory.NewGoAllocator()
	sw := ipc.NewWriter(w, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	xb := b.Field(0).(*array.FixedSizeListBuilder)
	vb := xb.ValueBuilder().(*array.Float32Builder)
	lb, ib := b.Field(1).(*array.Int64Builder), b.Field(2).(*array.Int64Builder)
	row := make([]float32, d)
	for start := 0; start < n; start += batchRows {
		end := min(n, start+batchRows)
		for i := start; i < end; i++ {
			streamRow(x, i, row)
			xb.Append(true)
			vb.AppendValues(row, nil)
			if lab[i] {
				lb.Append(int64(y[i%rows]))
			} else {
				lb.AppendNull()
			}
			ib.Append(int64(i))
		}
		rec := b.NewRecord()
		err := sw.Write(rec)
		rec.Release()
		if err == nil && mark != nil {
			err = mark(end)
		}
		if err != nil {
			sw.Close()
			return err
		}
	}
	return sw.Close()
}

// stream runs `bin stream --in - --window w` on the stream's first n
// samples and returns, at each of the marks (record counts, increasing),
// the wall seconds since the start and the child's CPU seconds (user +
// system) when the writer has handed it that many records, and its
// prequential accuracy.
func stream(bin string, x *mat.Dense, y []int, lab []bool, n, w, basis int, marks []int) (wall, cpu []float64, accuracy float64, err error) {
	cmd := exec.Command(bin, "stream", "--in", "-", "--json", "--window", strconv.Itoa(w), "--search-basis", strconv.Itoa(basis))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, 0, err
	}
	var out strings.Builder
	cmd.Stdout = &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, nil, 0, err
	}
	stat := fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid)
	werr := writeStream(in, x, y, lab, n, func(written int) error {
		if len(wall) == len(marks) || written != marks[len(wall)] {
			return nil
		}
		c, err := cpuSeconds(stat)
		wall, cpu = append(wall, time.Since(start).Seconds()), append(cpu, c)
		return err
	})
	if cerr := in.Close(); werr == nil {
		werr = cerr
	}
	if err := cmd.Wait(); err != nil {
		return nil, nil, 0, err
	}
	if werr != nil {
		return nil, nil, 0, fmt.Errorf("writing the stream: %w", werr)
	}
	if len(wall) != len(marks) {
		return nil, nil, 0, fmt.Errorf("%d of %d marks taken (marks must fall on multiples of %d up to %d)", len(wall), len(marks), batchRows, n)
	}
	var s struct {
		Accuracy float64 `json:"accuracy"`
		Records  int     `json:"records"`
	}
	if err := json.Unmarshal([]byte(out.String()), &s); err != nil {
		return nil, nil, 0, fmt.Errorf("stream's summary %q: %w", out.String(), err)
	}
	if s.Records != n {
		return nil, nil, 0, fmt.Errorf("stream read %d records, want %d", s.Records, n)
	}
	return wall, cpu, s.Accuracy, nil
}

// cpuSeconds reads a process's user + system CPU seconds (its threads'
// included) from its /proc/PID/stat: fields 14 and 15, in clock ticks of
// 1/100 s (Linux's USER_HZ).
func cpuSeconds(stat string) (float64, error) {
	b, err := os.ReadFile(stat)
	if err != nil {
		return 0, err
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // fields from 3 on
	if len(f) < 13 {
		return 0, fmt.Errorf("%s: %d fields", stat, len(f)+2)
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	k, err2 := strconv.ParseUint(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("%s: %w", stat, err)
	}
	return float64(u+k) / 100, nil
}

// printTable prints the medians per window, their range over the runs
// and each window's ratio to the 10,000 window's (when measured).
func printTable(w io.Writer, rs []result) {
	var ref *result
	for i := range rs {
		if rs[i].Window == 10000 {
			ref = &rs[i]
		}
	}
	fmt.Fprintf(w, "| W | N1 → N2 | records/s (segments' range) | records/CPU-s (segments' range) | ÷ 10k, wall | ÷ 10k, CPU | prequential accuracy |\n|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		ratio := func(v, r0 []float64) string {
			if ref == nil {
				return "–"
			}
			return fmt.Sprintf("%.2f", benchrun.Median(v)/benchrun.Median(r0))
		}
		var rw, rc string
		if ref != nil {
			rw, rc = ratio(r.PerSecond, ref.PerSecond), ratio(r.PerCPU, ref.PerCPU)
		} else {
			rw, rc = "–", "–"
		}
		fmt.Fprintf(w, "| %d | %d → %d | %.0f (%.0f–%.0f) | %.0f (%.0f–%.0f) | %s | %s | %.4f |\n",
			r.Window, r.N1, r.N2, benchrun.Median(r.PerSecond), slices.Min(r.SegSecond), slices.Max(r.SegSecond),
			benchrun.Median(r.PerCPU), slices.Min(r.SegCPU), slices.Max(r.SegCPU), rw, rc, r.Accuracy)
	}
}

// draw plots each curve's median records/s (solid, "wall") and records per
// CPU second (dashed, "CPU") against W, log–log.
func draw(path string, curves [][]result) error {
	var ss []figure.Series
	for k, rs := range curves {
		space := "search basis " + strconv.Itoa(rs[0].SearchBasis)
		if rs[0].SearchBasis == 0 {
			space = "pixels"
		}
		for m, measure := range []string{"wall", "CPU"} {
			s := figure.Series{Name: space + ", " + measure, Style: k, Dashed: m == 1}
			for _, r := range rs {
				s.X = append(s.X, float64(r.Window))
				if m == 0 {
					s.Y = append(s.Y, benchrun.Median(r.PerSecond))
				} else {
					s.Y = append(s.Y, benchrun.Median(r.PerCPU))
				}
			}
			ss = append(ss, s)
		}
	}
	return figure.Line(path, "MNIST stream, steady state (N2 − N1)/(t2 − t1)", "window W (samples)", "records per second (wall) or CPU second", ss, true, true)
}
